"""Live tools in a smolagents ``ToolCallingAgent`` (``LiveTools.attach``), driven by a ``Model`` subclass."""

from __future__ import annotations

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
from smolagents import CodeAgent, Tool, ToolCallingAgent, tool  # type: ignore[import-untyped]  # no type hints
from smolagents.agents import ToolOutput  # type: ignore[import-untyped]
from smolagents.memory import ActionStep  # type: ignore[import-untyped]
from smolagents.models import (  # type: ignore[import-untyped]
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    get_tool_json_schema,
)
from smolagents.monitoring import LogLevel  # type: ignore[import-untyped]
from support import MakeLoader, write

from loader.integrations.smolagents import LiveTool, LiveTools, smolagents_inputs
from loader.reload.loader import ToolLoader


class BrainModel(Model):  # type: ignore[misc]  # smolagents ships no type hints
    """A smolagents model whose tool calls come from the current brain; the final answer ends a run."""

    def __init__(self) -> None:
        super().__init__(model_id="brain")
        self.brain: Brain | None = None
        self.results: dict[str, Result] = {}
        self.seen_tools: list[dict[str, Any]] = []
        self.system_prompts: list[str] = []

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Tool] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        assert self.brain is not None
        tools = [t for t in tools_to_call_from or [] if t.name != "final_answer"]
        self.seen_tools = [get_tool_json_schema(t)["function"] for t in tools]
        first = messages[0]
        system = first.content if isinstance(first, ChatMessage) else first["content"]
        self.system_prompts.append(str(system))
        calls = self.brain.decide({t.name: t.description for t in tools}, self.results)
        if not calls:
            final = ChatMessageToolCallFunction(name="final_answer", arguments={"answer": "done"})
            return ChatMessage(
                role=MessageRole.ASSISTANT,
                tool_calls=[ChatMessageToolCall(function=final, id="final", type="function")],
            )
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            tool_calls=[
                ChatMessageToolCall(
                    function=ChatMessageToolCallFunction(name=c.name, arguments=c.args),
                    id=c.id,
                    type="function",
                )
                for c in calls
            ],
        )


class SmolagentsDriver:
    """One ``ToolCallingAgent`` with ``LiveTools`` attached, built once; each ``run`` resets its memory."""

    def __init__(self, loader: ToolLoader, *, tools: list[Tool] | None = None) -> None:
        self.model = BrainModel()
        self.live = LiveTools(loader)
        self.agent = self.live.attach(
            ToolCallingAgent(tools=tools or [], model=self.model, verbosity_level=LogLevel.OFF)
        )

    def run(self, brain: Brain, max_steps: int) -> None:
        self.model.brain = brain
        results = self.model.results = {}
        for event in self.agent.run("go", stream=True, max_steps=max_steps + 5):
            if isinstance(event, ToolOutput) and event.id is not None:
                results[event.id] = Result(event.observation, False)
            elif isinstance(event, ActionStep) and event.error is not None and event.model_output_message:
                for call in event.model_output_message.tool_calls or []:  # a failed step records none
                    results.setdefault(call.id, Result(str(event.error), True))
        brain.record(results)  # the last step's results: no model call follows to hand them over


def results_by_call(brain: Brain) -> dict[str, tuple[str, bool]]:
    return {
        call_id: (result.text, result.error)
        for call_id, result in brain.results.items()
        if call_id != "final"
    }


def offers(brain: Brain) -> list[dict[str, str]]:
    return [step.offered for step in brain.steps]


def test_edits_additions_and_removals_reach_the_next_step(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = SmolagentsDriver(loader)
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)

    assert offers(brain) == [
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
    # The system prompt follows the tools: the third step's prompt no longer lists farewell.
    assert "farewell" in driver.model.system_prompts[1] and "farewell" not in driver.model.system_prompts[2]

    # Between runs: the final-answer step synced last; an edit now shows once synced again.
    write(tools_dir / "greet.py", versioned_tool("greet", 3))
    wait_serving(loader, "greet", 3)
    driver.live.sync(driver.agent)
    again = Brain(lambda brain, step: [("greet", {"who": "di"})] if step.index == 0 else [])
    driver.run(again, max_steps=3)
    assert offers(again)[0] == {"greet": "greet version 3."}
    assert results_by_call(again) == {"call_1": ("greet v3 for di", False)}


def test_without_a_sync_an_idle_edit_shows_at_the_second_step(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = SmolagentsDriver(loader)
    write(tools_dir / "greet.py", versioned_tool("greet", 2))
    wait_serving(loader, "greet", 2)
    brain = Brain(lambda brain, step: [("greet", {"who": "ed"})] if step.index < 2 else [])
    driver.run(brain, max_steps=4)
    assert [step["greet"] for step in offers(brain)[:2]] == ["greet version 1.", "greet version 2."]
    assert mixed_calls(brain) == []


def test_inputs_keep_the_json_schema_in_smolagents_types(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "weather.py",
        '''
        from typing import Literal
        from pydantic import BaseModel
        from loader import tool

        class Place(BaseModel):
            city: str
            country: str = "NO"

        @tool
        def weather(place: Place, days: int = 1, unit: Literal["C", "F"] = "C", tags: list[str] | None = None) -> str:
            """Forecast for a place.

            Args:
                place: Where.
                days: How many days ahead.
                unit: Celsius or Fahrenheit.
                tags: Labels.
            """
            return f"{place.city} {days} {unit} {tags}"
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    weather = loader.registry.get("weather")
    assert weather is not None
    inputs = smolagents_inputs(weather.tool_spec["inputSchema"]["json"])
    assert inputs["place"]["type"] == "object"
    assert inputs["place"]["properties"]["city"] == {"type": "string"}
    assert "nullable" not in inputs["place"]
    assert inputs["days"] == {
        "type": "integer",
        "description": "How many days ahead.",
        "default": 1,
        "nullable": True,
    }
    assert inputs["unit"]["enum"] == ["C", "F"] and inputs["unit"]["type"] == "string"
    assert inputs["tags"]["nullable"] is True

    driver = SmolagentsDriver(loader)
    brain = Brain(
        lambda brain, step: (
            [("weather", {"place": {"city": "Oslo"}, "unit": "F", "tags": None})] if step.index == 0 else []
        )
    )
    driver.run(brain, max_steps=3)
    [offered] = driver.model.seen_tools
    assert offered["parameters"]["required"] == ["place"]
    assert results_by_call(brain) == {"call_1": ("Oslo 1 F None", False)}


def test_tool_errors_are_step_errors_and_the_run_goes_on(tools_dir: Path, make_loader: MakeLoader) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = SmolagentsDriver(loader)
    # One call per step: smolagents ends a step at its first failing call.
    brain = Brain(lambda brain, step: FAILING_CALLS[step.index : step.index + 1])
    driver.run(brain, max_steps=5)
    assert len(brain.steps) == 4  # the model was asked again after each failure, and answered
    failures = results_by_call(brain)
    # smolagents checks arguments against its inputs itself: the missing one never reaches the tool.
    assert failures["call_2"] == ("Argument who is required", True)
    for call_id in ("call_1", "call_3"):
        text, error = failures[call_id]
        failures[call_id] = (
            text.split("LiveToolError: ", 1)[1].split("\n", 1)[0],
            error,
        )  # smolagents adds a hint
    failures["call_2"] = ("who", True)
    check_failures(failures)


def test_the_agents_own_tool_keeps_its_name(tools_dir: Path, make_loader: MakeLoader) -> None:
    @tool  # type: ignore[untyped-decorator]
    def greet(who: str) -> str:
        """The agent's own greeting.

        Args:
            who: Whom to greet.
        """
        return f"own greeting for {who}"

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "farewell.py", versioned_tool("farewell", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = SmolagentsDriver(loader, tools=[greet])
    brain = Brain(lambda brain, step: [("greet", {"who": "fa"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert offers(brain)[0] == {"greet": "The agent's own greeting.", "farewell": "farewell version 1."}
    assert results_by_call(brain) == {"call_1": ("own greeting for fa", False)}
    assert not isinstance(driver.agent.tools["greet"], LiveTool)


def test_dashed_names_are_offered_with_underscores(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "dashed.py",
        '''
        from loader import tool

        @tool(name="say-hi")
        def say_hi(who: str) -> str:
            """Says hi."""
            return "hi " + who
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    driver = SmolagentsDriver(loader)
    brain = Brain(lambda brain, step: [("say_hi", {"who": "gi"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert offers(brain)[0] == {"say_hi": "Says hi."}
    assert results_by_call(brain) == {"call_1": ("hi gi", False)}


def test_a_code_agent_is_refused_with_the_reason(tools_dir: Path, make_loader: MakeLoader) -> None:
    loader = make_loader(tools_dir, watch=False)
    with pytest.raises(TypeError, match=r"CodeAgent.*once per run"):
        LiveTools(loader).attach(CodeAgent(tools=[], model=BrainModel()))


def test_fuzz_every_call_runs_the_version_its_step_offered(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = SmolagentsDriver(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=50))
    with rewriting(path, "ver", start=0) as written:
        driver.run(brain, max_steps=60)
    answered = brain.answered()
    assert len(answered) == 50
    assert mixed_calls(brain) == []
    assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == 50
    assert written() > 50
