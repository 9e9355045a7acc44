"""Live tools in a LlamaIndex ``FunctionAgent``: what only LlamaIndex has (the shared scenarios: ``test_every_framework.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_agents import Brain, first_step, versioned_tool
from support import MakeLoader, write

# LlamaIndex's workflows find their steps with inspect.getmembers on the (pydantic) agent, which
# touches pydantic's deprecated attributes: upstream noise, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")


def test_the_agents_own_tools_work_beside_the_live_ones(tools_dir: Path, make_loader: MakeLoader) -> None:
    # imported here, not at the top: collecting this module would cost each pytest worker the framework's import
    from agent_drivers.llama_index_driver import LlamaIndexDriver
    from llama_index.core.tools import FunctionTool

    def shout(who: str) -> str:
        """The agent's own tool."""
        return f"own shout for {who}"

    own = FunctionTool.from_defaults(shout)
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = LlamaIndexDriver(loader, tools=[own])
    brain = Brain(first_step(("shout", {"who": "fa"}), ("greet", {"who": "ga"})))
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"shout": own.metadata.description, "greet": "greet version 1."}
    assert driver.results(brain) == {
        "call_1": ("own shout for fa", False),
        "call_2": ("greet v1 for ga", False),
    }


def test_skills_on_activation_is_refused_with_the_reason(tools_dir: Path, make_loader: MakeLoader) -> None:
    from agent_drivers.llama_index_driver import LlamaIndexDriver

    loader = make_loader(tools_dir, watch=False)
    with pytest.raises(ValueError, match="without saying which run asks"):
        LlamaIndexDriver(loader, skills="on-activation")
