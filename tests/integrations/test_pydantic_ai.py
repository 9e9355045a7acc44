"""Live tools in a pydantic-ai ``Agent``: what only pydantic-ai has (the shared scenarios: ``test_every_framework.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from live_agents import Brain, fuzz_plan, mixed_calls, offered_version, rewriting, versioned_tool
from support import MakeLoader, write


def test_concurrent_runs_keep_their_own_step_snapshots(tools_dir: Path, make_loader: MakeLoader) -> None:
    # imported here, not at the top: collecting this module would cost each pytest worker the framework's import
    from agent_drivers.pydantic_ai_driver import PydanticAIDriver

    from loader.integrations.pydantic_ai import LiveToolset

    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    toolset = LiveToolset(loader)  # one toolset, two agents running at once
    drivers = [PydanticAIDriver(loader, mode="run", toolset=toolset) for _ in range(2)]
    brains = [Brain(fuzz_plan(loader, "ver", steps=10)) for _ in drivers]

    async def both() -> None:
        await asyncio.gather(
            *(driver.arun(brain, max_steps=15) for driver, brain in zip(drivers, brains, strict=True))
        )

    with rewriting(path, "ver", start=0):
        asyncio.run(both())
    for brain in brains:
        answered = brain.answered()
        assert len(answered) == 10
        assert mixed_calls(brain) == []
        # Every step was offered a newer version: a run stuck at its first snapshot has no mixed calls.
        assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == 10
