"""Live tools in a LlamaIndex ``FunctionAgent`` (``LiveToolRetriever``), driven by ``MockFunctionCallingLLM``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import BaseTool, FunctionTool
from support import MakeLoader, write

from loader.integrations.live import input_schema
from loader.integrations.llama_index import LiveToolRetriever
from loader.reload.loader import ToolLoader

# LlamaIndex's workflows find their steps with inspect.getmembers on the (pydantic) agent, which
# touches pydantic's deprecated attributes: upstream noise, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")


class LlamaIndexDriver:
    """One ``FunctionAgent``, built once around a ``MockFunctionCallingLLM`` that asks the current brain."""

    def __init__(self, loader: ToolLoader, *, tools: Sequence[BaseTool] = (), streaming: bool = True) -> None:
        self.brain: Brain | None = None
        self.seen_tools: list[dict[str, Any]] = []
        self.tool_results: list[ToolCallResult] = []
        self.llm = MockFunctionCallingLLM(response_generator=self._respond)
        self.agent = FunctionAgent(
            llm=self.llm,
            tools=list(tools) or None,
            tool_retriever=LiveToolRetriever(loader),
            streaming=streaming,
        )

    def _respond(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        assert self.brain is not None
        tools: list[BaseTool] = kwargs.get("tools") or []
        self.seen_tools = [tool.metadata.to_openai_tool()["function"] for tool in tools]
        offered = {t["name"]: t["description"] for t in self.seen_tools}
        results = {
            message.additional_kwargs["tool_call_id"]: Result(message.content or "", False)
            for message in messages
            if message.role == MessageRole.TOOL
        }
        calls = self.brain.decide(offered, results)
        if not calls:
            return ChatMessage(role=MessageRole.ASSISTANT, content="done")
        blocks = [ToolCallBlock(tool_call_id=c.id, tool_name=c.name, tool_kwargs=c.args) for c in calls]
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=list(blocks))

    def run(self, brain: Brain, max_steps: int) -> None:
        self.brain = brain

        async def run() -> None:
            handler = self.agent.run("go", max_iterations=max_steps + 5)
            async for event in handler.stream_events():
                if isinstance(event, ToolCallResult):
                    self.tool_results.append(event)
            await handler

        asyncio.run(run())


def results_by_call(brain: Brain) -> dict[str, str]:
    return {call_id: result.text for call_id, result in brain.results.items()}


@pytest.mark.parametrize("streaming", [True, False])
def test_edits_additions_and_removals_reach_the_next_step(
    tools_dir: Path, make_loader: MakeLoader, streaming: bool
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = LlamaIndexDriver(loader, streaming=streaming)
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)

    assert [step.offered for step in brain.steps] == [
        {"greet": "greet version 1."},
        {"farewell": "farewell version 1.", "greet": "greet version 2."},
        {"greet": "greet version 2."},
    ]
    assert results_by_call(brain) == {
        "call_1": "greet v1 for ada",
        "call_2": "greet v2 for bo",
        "call_3": "farewell v1 for cy",
    }
    assert mixed_calls(brain) == []

    write(tools_dir / "greet.py", versioned_tool("greet", 3))
    wait_serving(loader, "greet", 3)
    again = Brain(lambda brain, step: [("greet", {"who": "di"})] if step.index == 0 else [])
    driver.run(again, max_steps=3)
    assert again.steps[0].offered == {"greet": "greet version 3."}
    assert results_by_call(again) == {"call_1": "greet v3 for di"}


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
    driver = LlamaIndexDriver(loader)
    brain = Brain(lambda brain, step: [("weather", {"city": "Oslo", "unit": "F"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    weather = loader.registry.get("weather")
    assert weather is not None
    [offered] = driver.seen_tools
    assert offered["parameters"] == input_schema(weather)
    assert results_by_call(brain) == {"call_1": "Oslo 1 F"}


@pytest.mark.parametrize("streaming", [True, False])
def test_tool_errors_are_error_outputs_and_the_run_goes_on(
    tools_dir: Path, make_loader: MakeLoader, streaming: bool
) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = LlamaIndexDriver(loader, streaming=streaming)
    brain = Brain(lambda brain, step: FAILING_CALLS if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert len(brain.steps) == 2
    outputs = {event.tool_id: event.tool_output for event in driver.tool_results}
    check_failures({call_id: (output.content, output.is_error) for call_id, output in outputs.items()})


def test_the_agents_own_tools_work_beside_the_live_ones(tools_dir: Path, make_loader: MakeLoader) -> None:
    def shout(who: str) -> str:
        """The agent's own tool."""
        return f"own shout for {who}"

    own = FunctionTool.from_defaults(shout)
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = LlamaIndexDriver(loader, tools=[own])
    brain = Brain(
        lambda brain, step: [("shout", {"who": "fa"}), ("greet", {"who": "ga"})] if step.index == 0 else []
    )
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"shout": own.metadata.description, "greet": "greet version 1."}
    assert results_by_call(brain) == {"call_1": "own shout for fa", "call_2": "greet v1 for ga"}


def test_images_become_llama_index_blocks(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "media.py",
        '''
        from loader import tool

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
    driver = LlamaIndexDriver(loader)
    brain = Brain(lambda brain, step: [("picture", {"who": "ha"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    [event] = driver.tool_results
    text, image = event.tool_output.blocks
    assert isinstance(text, TextBlock) and text.text == "a dot for ha"
    assert isinstance(image, ImageBlock) and image.image_mimetype == "image/png"
    assert image.resolve_image().read() == b"PNGDATA"


def test_fuzz_every_call_runs_the_version_its_step_offered(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = LlamaIndexDriver(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=50))
    with rewriting(path, "ver", start=0) as written:
        driver.run(brain, max_steps=60)
    answered = brain.answered()
    assert len(answered) == 50
    assert mixed_calls(brain) == []
    assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == 50
    assert written() > 50
