"""Live tools in a LangChain v1 agent: what only LangChain has (the shared scenarios: ``test_every_framework.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from live_agents import Brain, Step, first_step, versioned_tool, wait_serving
from support import MakeLoader, eventually, write


def test_a_call_whose_pin_was_forgotten_runs_the_current_version(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    # imported here, not at the top: collecting this module would cost each pytest worker the framework's import
    from agent_drivers.langchain_driver import LangChainDriver

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = LangChainDriver(loader, max_pins=1)

    def plan(brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        if step.index > 0:
            return []
        write(tools_dir / "greet.py", versioned_tool("greet", 2))
        wait_serving(loader, "greet", 2)
        return [("greet", {"who": "old"}), ("greet", {"who": "new"})]

    brain = Brain(plan)
    driver.run(brain, max_steps=3)
    assert driver.results(brain) == {
        "call_1": ("greet v2 for old", False),  # its pin made way for call_2's: the current version ran
        "call_2": ("greet v1 for new", False),
    }


def test_an_unknown_tool_call_gets_langchains_own_answer(tools_dir: Path, make_loader: MakeLoader) -> None:
    from agent_drivers.langchain_driver import LangChainDriver

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = LangChainDriver(loader)
    brain = Brain(first_step(("nosuch", {"who": "x"})))
    driver.run(brain, max_steps=3)
    text, error = driver.results(brain)["call_1"]
    assert error
    assert "nosuch" in text


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_call_to_a_deleted_tool_lists_the_live_tools(tools_dir: Path, make_loader: MakeLoader) -> None:
    from agent_drivers.langchain_driver import LangChainDriver

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "boom.py", versioned_tool("boom", 1))
    loader = make_loader(tools_dir)
    driver = LangChainDriver(loader)
    seen = Brain(lambda brain, step: [])
    driver.run(seen, max_steps=2)
    assert set(seen.steps[0].offered) == {"greet", "boom"}

    (tools_dir / "boom.py").unlink()
    eventually(lambda: loader.registry.get("boom") is None)
    brain = Brain(first_step(("boom", {"who": "x"})))  # a model that remembers the earlier conversation
    driver.run(brain, max_steps=3)
    text, error = driver.results(brain)["call_1"]
    assert error
    assert text == "Error: boom is not a valid tool, try one of [greet]."
