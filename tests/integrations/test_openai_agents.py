"""Live tools in the OpenAI Agents SDK: what only it has (the shared scenarios: ``test_every_framework.py``)."""

from __future__ import annotations

from pathlib import Path

from live_agents import Brain, first_step, versioned_tool
from support import MakeLoader, write


def test_without_an_error_function_the_error_text_is_the_output(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    # imported here, not at the top: collecting this module would cost each pytest worker the framework's import
    from agent_drivers.openai_agents_driver import ERROR_PREFIX, OpenAIAgentsDriver

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = OpenAIAgentsDriver(loader)
    driver.agent.tool_error_function = None
    brain = Brain(first_step(("greet", {})))
    driver.run(brain, max_steps=3)
    output = driver.outputs["call_1"]
    assert isinstance(output, str) and not output.startswith(ERROR_PREFIX)
    assert "who" in output
