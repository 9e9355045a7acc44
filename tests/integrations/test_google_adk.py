"""Live tools in a Google ADK ``LlmAgent`` (``LiveToolset``), driven by a ``BaseLlm`` subclass (no network)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from live_agents import (
    FAILING_CALLS,
    Brain,
    Result,
    check_failures,
    failing_tools_loader,
    fuzz_plan,
    live_plan,
    mixed_calls,
    offered_version,
    rewriting,
    versioned_tool,
    wait_serving,
)
from support import MakeLoader, write

from loader.integrations.google_adk import LiveToolset
from loader.integrations.live import input_schema
from loader.reload.loader import ToolLoader


class BrainLlm(BaseLlm):
    """An ADK model whose answers come from the current brain; records every request."""

    model: str = "brain"
    brain: Any = None
    requests: list[LlmRequest] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        offered = {
            declaration.name or "": declaration.description or ""
            for tool in llm_request.config.tools or []
            for declaration in getattr(tool, "function_declarations", None) or []
        }
        results: dict[str, Result] = {}
        for content in llm_request.contents:
            for part in content.parts or []:
                response = part.function_response
                if response is not None and response.id and response.response is not None:
                    failed = "error" in response.response
                    text = str(response.response["error" if failed else "result"])
                    results[response.id] = Result(text, failed)
        calls = self.brain.decide(offered, results)
        parts = [
            types.Part(function_call=types.FunctionCall(id=c.id, name=c.name, args=c.args)) for c in calls
        ]
        yield LlmResponse(content=types.Content(role="model", parts=parts or [types.Part(text="done")]))


class GoogleADKDriver:
    """One ``LlmAgent`` and runner, built once; each ``run`` is a new session."""

    def __init__(
        self, loader: ToolLoader, *, tools: list[Any] | None = None, mode: str = "run_async"
    ) -> None:
        self.llm = BrainLlm()
        self.toolset = LiveToolset(loader)
        self.agent = LlmAgent(name="a", model=self.llm, tools=[*(tools or []), self.toolset])
        self.runner = InMemoryRunner(agent=self.agent, app_name="live")
        self.mode = mode

    def run(self, brain: Brain, max_steps: int) -> None:
        self.llm.brain = brain
        self.llm.requests = []
        config = RunConfig(max_llm_calls=max_steps + 5)
        message = types.Content(role="user", parts=[types.Part(text="go")])

        async def new_session() -> str:
            session = await self.runner.session_service.create_session(app_name="live", user_id="u")
            return session.id

        session_id = asyncio.run(new_session())
        if self.mode == "run":
            for _ in self.runner.run(
                user_id="u", session_id=session_id, new_message=message, run_config=config
            ):
                pass
            return

        async def run() -> None:
            async for _ in self.runner.run_async(
                user_id="u", session_id=session_id, new_message=message, run_config=config
            ):
                pass

        asyncio.run(run())


def results_by_call(brain: Brain) -> dict[str, tuple[str, bool]]:
    return {call_id: (result.text, result.error) for call_id, result in brain.results.items()}


@pytest.mark.parametrize("mode", ["run_async", "run"])
def test_edits_additions_and_removals_reach_the_next_request(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = GoogleADKDriver(loader, mode=mode)
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)

    assert [step.offered for step in brain.steps] == [
        {"greet": "greet version 1."},
        {"farewell": "farewell version 1.", "greet": "greet version 2."},
        {"greet": "greet version 2."},
    ]
    assert results_by_call(brain) == {
        "call_1": ("greet v1 for ada", False),
        "call_2": ("greet v2 for bo", False),
        "call_3": ("farewell v1 for cy", False),
    }
    assert mixed_calls(brain) == []

    write(tools_dir / "greet.py", versioned_tool("greet", 3))
    wait_serving(loader, "greet", 3)
    again = Brain(lambda brain, step: [("greet", {"who": "di"})] if step.index == 0 else [])
    driver.run(again, max_steps=3)
    assert again.steps[0].offered == {"greet": "greet version 3."}
    assert results_by_call(again) == {"call_1": ("greet v3 for di", False)}


def test_with_adks_invocation_cache_a_run_would_not_see_changes(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """The trap ``LiveToolset`` turns off: ``BaseToolset`` caches ``get_tools`` per invocation."""
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = GoogleADKDriver(loader)
    driver.toolset._use_invocation_cache = True
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)
    assert [step.offered for step in brain.steps][1] == {"greet": "greet version 1."}


def test_schemas_are_the_tools_json_schemas(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "weather.py",
        '''
        from typing import Literal
        from loader import tool

        @tool
        def weather(city: str, days: int = 1, unit: Literal["C", "F"] = "C") -> str:
            """Forecast for a city.

            Args:
                city: Where.
                days: How many days ahead.
                unit: Celsius or Fahrenheit.
            """
            return f"{city} {days} {unit}"
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    driver = GoogleADKDriver(loader)
    brain = Brain(lambda brain, step: [("weather", {"city": "Oslo", "unit": "F"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    weather = loader.registry.get("weather")
    assert weather is not None
    [tool] = driver.llm.requests[0].config.tools or []
    [declaration] = getattr(tool, "function_declarations", None) or []
    assert declaration.parameters_json_schema == input_schema(weather)
    assert results_by_call(brain) == {"call_1": ("Oslo 1 F", False)}


@pytest.mark.parametrize("mode", ["run_async", "run"])
def test_tool_errors_are_error_responses_and_the_run_goes_on(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = GoogleADKDriver(loader, mode=mode)
    brain = Brain(lambda brain, step: FAILING_CALLS if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert len(brain.steps) == 2
    check_failures(results_by_call(brain))


def test_the_agents_own_tool_keeps_its_name(tools_dir: Path, make_loader: MakeLoader) -> None:
    def greet(who: str) -> str:
        """The agent's own greeting."""
        return f"own greeting for {who}"

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "farewell.py", versioned_tool("farewell", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = GoogleADKDriver(loader, tools=[greet])
    brain = Brain(lambda brain, step: [("greet", {"who": "fa"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"greet": "The agent's own greeting.", "farewell": "farewell version 1."}
    assert results_by_call(brain) == {"call_1": ("own greeting for fa", False)}


def test_fuzz_every_call_runs_the_version_its_request_offered(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = GoogleADKDriver(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=50))
    with rewriting(path, "ver", start=0) as written:
        driver.run(brain, max_steps=60)
    answered = brain.answered()
    assert len(answered) == 50
    assert mixed_calls(brain) == []
    assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == 50
    assert written() > 50
