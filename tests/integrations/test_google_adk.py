"""Live tools in a Google ADK ``LlmAgent``: what only ADK has (the shared scenarios: ``test_every_framework.py``)."""

from __future__ import annotations

from pathlib import Path

from live_agents import Brain, live_plan, versioned_tool
from support import MakeLoader, write


def test_with_adks_invocation_cache_a_run_would_not_see_changes(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """The trap ``LiveToolset`` turns off: ``BaseToolset`` caches ``get_tools`` per invocation."""
    # imported here, not at the top: collecting this module would cost each pytest worker the framework's import
    from agent_drivers.google_adk_driver import GoogleADKDriver

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = GoogleADKDriver(loader)
    driver.toolset._use_invocation_cache = True
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)
    assert [step.offered for step in brain.steps][1] == {"greet": "greet version 1."}
