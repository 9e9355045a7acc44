"""Live tools in a pydantic-ai ``Agent`` (``LiveToolset``), driven by pydantic-ai's own ``FunctionModel``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
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
from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import Tool, ToolDefinition
from pydantic_ai.usage import UsageLimits
from support import MakeLoader, write

from loader.integrations.live import input_schema
from loader.integrations.pydantic_ai import LiveToolset
from loader.reload.loader import ToolLoader


class PydanticAIDriver:
    """One agent, built once around a ``FunctionModel`` that asks the current brain."""

    def __init__(
        self, loader: ToolLoader, *, mode: str = "run_sync", tools: Sequence[Tool[None]] = ()
    ) -> None:
        self.brain: Brain | None = None
        self.mode = mode
        self.seen_tools: list[ToolDefinition] = []
        self.returns: dict[str, ToolReturnPart | RetryPromptPart] = {}
        self.agent = Agent(FunctionModel(self._respond), tools=tools, toolsets=[LiveToolset(loader)])

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert self.brain is not None
        self.seen_tools = list(info.function_tools)
        results: dict[str, Result] = {}
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    self.returns[part.tool_call_id] = part
                    text = part.model_response_str(wrap_if_error=False)
                    results[part.tool_call_id] = Result(text, part.outcome != "success")
                elif isinstance(part, RetryPromptPart) and part.tool_call_id:
                    self.returns[part.tool_call_id] = part
                    results[part.tool_call_id] = Result(part.model_response(), True)
        offered = {tool.name: tool.description or "" for tool in info.function_tools}
        calls = self.brain.decide(offered, results)
        if not calls:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(c.name, c.args, tool_call_id=c.id) for c in calls])

    def run(self, brain: Brain, max_steps: int) -> None:
        self.brain = brain
        limits = UsageLimits(request_limit=max_steps + 5)
        if self.mode == "run":
            asyncio.run(self.agent.run("go", usage_limits=limits))
        else:
            self.agent.run_sync("go", usage_limits=limits)


def results_by_call(brain: Brain) -> dict[str, tuple[str, bool]]:
    return {call_id: (result.text, result.error) for call_id, result in brain.results.items()}


@pytest.mark.parametrize("mode", ["run_sync", "run"])
def test_edits_additions_and_removals_reach_the_next_step(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = PydanticAIDriver(loader, mode=mode)
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
    driver = PydanticAIDriver(loader)
    brain = Brain(lambda brain, step: [("weather", {"city": "Oslo", "unit": "F"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    weather = loader.registry.get("weather")
    assert weather is not None
    [offered] = driver.seen_tools
    assert offered.parameters_json_schema == input_schema(weather)
    assert offered.description == weather.tool_spec["description"]
    assert results_by_call(brain) == {"call_1": ("Oslo 1 F", False)}


@pytest.mark.parametrize("mode", ["run_sync", "run"])
def test_tool_errors_are_failed_returns_and_the_run_goes_on(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = PydanticAIDriver(loader, mode=mode)
    # More failures than the default retry budget (1): failed returns never spend it.
    brain = Brain(lambda brain, step: FAILING_CALLS if step.index < 2 else [])
    driver.run(brain, max_steps=6)
    assert len(brain.steps) == 3
    check_failures(results_by_call(brain))
    assert {type(part).__name__ for part in driver.returns.values()} == {"ToolReturnPart"}
    assert {part.outcome for part in driver.returns.values() if isinstance(part, ToolReturnPart)} == {
        "failed"
    }


def test_the_agents_own_tool_keeps_its_name(tools_dir: Path, make_loader: MakeLoader) -> None:
    def greet(who: str) -> str:
        """The agent's own greeting."""
        return f"own greeting for {who}"

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "farewell.py", versioned_tool("farewell", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = PydanticAIDriver(loader, tools=[Tool(greet)])
    brain = Brain(lambda brain, step: [("greet", {"who": "fa"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"greet": "The agent's own greeting.", "farewell": "farewell version 1."}
    assert results_by_call(brain) == {"call_1": ("own greeting for fa", False)}


def test_json_and_image_results_become_pydantic_ai_content(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "media.py",
        '''
        from loader import tool

        @tool
        def stats(who: str) -> dict:
            """Numbers."""
            return {"who": who, "count": 3}

        @tool
        def picture(who: str) -> dict:
            """A picture."""
            return {"status": "success", "content": [
                {"text": "a dot for " + who},
                {"image": {"format": "png", "source": {"bytes": b"PNGDATA"}}},
            ]}
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    driver = PydanticAIDriver(loader)
    brain = Brain(
        lambda brain, step: [("stats", {"who": "gi"}), ("picture", {"who": "ha"})] if step.index == 0 else []
    )
    driver.run(brain, max_steps=3)
    stats, picture = driver.returns["call_1"], driver.returns["call_2"]
    assert stats.content == '{"who": "gi", "count": 3}'
    assert picture.content == ["a dot for ha", BinaryContent(b"PNGDATA", media_type="image/png")]


def test_fuzz_every_call_runs_the_version_its_step_offered(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = PydanticAIDriver(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=50))
    with rewriting(path, "ver", start=0) as written:
        driver.run(brain, max_steps=60)
    answered = brain.answered()
    assert len(answered) == 50
    assert mixed_calls(brain) == []
    assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == 50
    assert written() > 50


def test_concurrent_runs_keep_their_own_step_snapshots(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    toolset = LiveToolset(loader)
    brains = [Brain(fuzz_plan(loader, "ver", steps=10)) for _ in range(2)]

    async def both() -> None:
        async def one(brain: Brain) -> None:
            def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
                results = {
                    part.tool_call_id: Result(part.model_response_str(), part.outcome != "success")
                    for message in messages
                    if isinstance(message, ModelRequest)
                    for part in message.parts
                    if isinstance(part, ToolReturnPart)
                }
                calls = brain.decide({t.name: t.description or "" for t in info.function_tools}, results)
                if not calls:
                    return ModelResponse(parts=[TextPart("done")])
                return ModelResponse(parts=[ToolCallPart(c.name, c.args, tool_call_id=c.id) for c in calls])

            agent: Agent[None, str] = Agent(FunctionModel(respond), toolsets=[toolset])
            await agent.run("go")

        await asyncio.gather(*(one(brain) for brain in brains))

    with rewriting(path, "ver", start=0):
        asyncio.run(both())
    for brain in brains:
        assert len(brain.answered()) == 10
        assert mixed_calls(brain) == []
