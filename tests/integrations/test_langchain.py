"""Live tools in a LangChain v1 agent (``create_agent`` + ``LiveToolsMiddleware``), driven by a fake chat model."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from live_agents import (
    FAILING_CALLS,
    Brain,
    Result,
    Step,
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

from loader.integrations.langchain import LiveToolsMiddleware
from loader.integrations.live import input_schema
from loader.reload.loader import ToolLoader


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in content)


class BrainChatModel(BaseChatModel):
    """A chat model whose answers come from a ``Brain``; tools are bound the way provider models bind them."""

    brain: Any = None
    seen_tools: list[dict[str, Any]] = []
    seen_messages: list[BaseMessage] = []

    @property
    def _llm_type(self) -> str:
        return "brain"

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        kwargs.pop("tool_choice", None)
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools: list[dict[str, Any]] = kwargs.get("tools") or []
        self.seen_tools = tools
        self.seen_messages = list(messages)
        offered = {t["function"]["name"]: t["function"]["description"] for t in tools}
        results = {
            m.tool_call_id: Result(_text(m.content), m.status == "error")
            for m in messages
            if isinstance(m, ToolMessage)
        }
        calls = self.brain.decide(offered, results)
        message = AIMessage(
            content="" if calls else "done",
            tool_calls=[{"name": c.name, "args": c.args, "id": c.id, "type": "tool_call"} for c in calls],
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class LangChainDriver:
    """One agent, built once; each ``run`` is a new conversation."""

    def __init__(
        self,
        loader: ToolLoader,
        *,
        tools: Sequence[BaseTool] = (),
        mode: str = "invoke",
        max_pins: int = 1024,
    ) -> None:
        self.model = BrainChatModel()
        self.middleware = LiveToolsMiddleware(loader, max_pins=max_pins)
        self.agent = create_agent(self.model, tools=list(tools), middleware=[self.middleware])
        self.mode = mode

    def run(self, brain: Brain, max_steps: int) -> None:
        self.model.brain = brain
        state: Any = {"messages": [HumanMessage("go")]}
        config: Any = {"recursion_limit": 2 * max_steps + 10}
        if self.mode == "ainvoke":
            asyncio.run(self.agent.ainvoke(state, config))
        else:
            self.agent.invoke(state, config)


def results_by_call(brain: Brain) -> dict[str, tuple[str, bool]]:
    return {call_id: (result.text, result.error) for call_id, result in brain.results.items()}


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_edits_additions_and_removals_reach_the_next_step(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = LangChainDriver(loader, mode=mode)
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)

    assert [step.offered for step in brain.steps] == [
        {"greet": "greet version 1."},
        {"farewell": "farewell version 1.", "greet": "greet version 2."},
        {"greet": "greet version 2."},
    ]
    assert results_by_call(brain) == {
        "call_1": ("greet v1 for ada", False),  # offered v1; v2 was live by the time it ran
        "call_2": ("greet v2 for bo", False),
        "call_3": ("farewell v1 for cy", False),  # offered before its file was deleted
    }
    assert mixed_calls(brain) == []

    # The same agent, a new run: a change made between runs shows at the first step.
    write(tools_dir / "greet.py", versioned_tool("greet", 3))
    wait_serving(loader, "greet", 3)
    again = Brain(lambda brain, step: [("greet", {"who": "di"})] if step.index == 0 else [])
    driver.run(again, max_steps=3)
    assert again.steps[0].offered == {"greet": "greet version 3."}
    assert results_by_call(again) == {"call_1": ("greet v3 for di", False)}


def test_a_call_whose_pin_was_forgotten_runs_the_current_version(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
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
    assert results_by_call(brain) == {
        "call_1": ("greet v2 for old", False),  # its pin made way for call_2's: the current version ran
        "call_2": ("greet v1 for new", False),
    }


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
    driver = LangChainDriver(loader)
    brain = Brain(lambda brain, step: [("weather", {"city": "Oslo", "unit": "F"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    weather = loader.registry.get("weather")
    assert weather is not None
    offered = driver.model.seen_tools[0]["function"]
    assert offered["parameters"] == input_schema(weather)
    assert offered["description"] == weather.tool_spec["description"]
    assert results_by_call(brain) == {"call_1": ("Oslo 1 F", False)}


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_tool_errors_take_langchains_error_path_and_the_run_goes_on(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = LangChainDriver(loader, mode=mode)
    brain = Brain(lambda brain, step: FAILING_CALLS if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert len(brain.steps) == 2  # the model was asked again after the failures, and answered
    check_failures(results_by_call(brain))
    messages = [m for m in driver.model.seen_messages if isinstance(m, ToolMessage)]
    assert [m.status for m in messages] == ["error", "error", "error"]


def test_an_unknown_tool_call_gets_langchains_own_answer(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = LangChainDriver(loader)
    brain = Brain(lambda brain, step: [("nosuch", {"who": "x"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    text, error = results_by_call(brain)["call_1"]
    assert error
    assert "nosuch" in text


def test_the_agents_own_tool_keeps_its_name(tools_dir: Path, make_loader: MakeLoader) -> None:
    @tool
    def greet(who: str) -> str:
        """The agent's own greeting."""
        return f"own greeting for {who}"

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "farewell.py", versioned_tool("farewell", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = LangChainDriver(loader, tools=[greet])
    brain = Brain(lambda brain, step: [("greet", {"who": "fa"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"greet": "The agent's own greeting.", "farewell": "farewell version 1."}
    assert results_by_call(brain) == {"call_1": ("own greeting for fa", False)}


def test_json_and_image_results_become_langchain_content(tools_dir: Path, make_loader: MakeLoader) -> None:
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
    driver = LangChainDriver(loader)
    brain = Brain(
        lambda brain, step: [("stats", {"who": "gi"}), ("picture", {"who": "ha"})] if step.index == 0 else []
    )
    driver.run(brain, max_steps=3)
    contents = {m.tool_call_id: m.content for m in driver.model.seen_messages if isinstance(m, ToolMessage)}
    assert contents["call_1"] == '{"who": "gi", "count": 3}'
    assert contents["call_2"] == [
        {"type": "text", "text": "a dot for ha"},
        {"type": "image", "base64": base64.b64encode(b"PNGDATA").decode(), "mime_type": "image/png"},
    ]


def test_fuzz_every_call_runs_the_version_its_step_offered(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = LangChainDriver(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=50))
    with rewriting(path, "ver", start=0) as written:
        driver.run(brain, max_steps=60)
    answered = brain.answered()
    assert len(answered) == 50
    assert mixed_calls(brain) == []
    offered = {offered_version(step.offered["ver"]) for step, _, _ in answered}
    assert len(offered) == 50  # every step was offered a newer version than the last
    assert written() > 50
