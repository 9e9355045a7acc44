"""Live tools in the OpenAI Agents SDK (``LiveAgent``), driven by the SDK's own ``agents.testing.ScriptedModel``."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from agents import FunctionTool, RunConfig, Runner, RunResult, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel
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
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from support import MakeLoader, write

from loader.integrations.live import input_schema
from loader.integrations.openai_agents import LiveAgent, LiveToolError
from loader.reload.loader import ToolLoader

ERROR_PREFIX = "failed: "


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(item.get("text", "") for item in output)


class OpenAIAgentsDriver:
    """One ``LiveAgent``, built once around a ``ScriptedModel`` whose every step asks the current brain."""

    def __init__(self, loader: ToolLoader, *, tools: list[Any] | None = None, mode: str = "run_sync") -> None:
        self.brain: Brain | None = None
        self.mode = mode
        self.model = ScriptedModel()
        self.outputs: dict[str, Any] = {}
        self.errors: list[Exception] = []
        self.agent: LiveAgent[Any] = LiveAgent(
            name="a", model=self.model, tools=tools or [], tool_source=loader, tool_error_function=self._word
        )

    def _word(self, ctx: Any, error: Exception) -> str:
        self.errors.append(error)
        return ERROR_PREFIX + str(error)

    def _respond(self, call: ModelCall) -> list[Any]:
        assert self.brain is not None
        self.model.enqueue(ModelStep.respond(self._respond))  # the script never runs dry
        results: dict[str, Result] = {}
        for item in call.input if isinstance(call.input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                self.outputs[item["call_id"]] = item["output"]
                text = _output_text(item["output"])
                results[item["call_id"]] = Result(
                    text.removeprefix(ERROR_PREFIX), text.startswith(ERROR_PREFIX)
                )
        offered = {tool.name: tool.description for tool in call.tools if isinstance(tool, FunctionTool)}
        calls = self.brain.decide(offered, results)
        if not calls:
            done = ResponseOutputText(type="output_text", text="done", annotations=[])
            return [
                ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[done]
                )
            ]
        return [
            ResponseFunctionToolCall(
                type="function_call", id=f"fc_{c.id}", call_id=c.id, name=c.name, arguments=json.dumps(c.args)
            )
            for c in calls
        ]

    def run(self, brain: Brain, max_steps: int) -> RunResult:
        self.brain = brain
        if self.model.remaining_steps == 0:
            self.model.enqueue(ModelStep.respond(self._respond))
        config = RunConfig(tracing_disabled=True)
        if self.mode == "run":
            return asyncio.run(Runner.run(self.agent, "go", max_turns=max_steps + 5, run_config=config))
        return Runner.run_sync(self.agent, "go", max_turns=max_steps + 5, run_config=config)


def results_by_call(brain: Brain) -> dict[str, tuple[str, bool]]:
    return {call_id: (result.text, result.error) for call_id, result in brain.results.items()}


@pytest.mark.parametrize("mode", ["run_sync", "run"])
def test_edits_additions_and_removals_reach_the_next_turn(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = OpenAIAgentsDriver(loader, mode=mode)
    brain = Brain(live_plan(tools_dir, loader))
    result = driver.run(brain, max_steps=5)
    assert result.final_output == "done"

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
    assert driver.agent.tools == []  # the agent's own list is never touched

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
    driver = OpenAIAgentsDriver(loader)
    brain = Brain(lambda brain, step: [("weather", {"city": "Oslo", "unit": "F"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    weather = loader.registry.get("weather")
    assert weather is not None
    call = driver.model.first_call
    assert call is not None
    [offered] = call.tools
    assert isinstance(offered, FunctionTool)
    assert offered.params_json_schema == input_schema(weather)
    assert offered.strict_json_schema is False
    assert results_by_call(brain) == {"call_1": ("Oslo 1 F", False)}


@pytest.mark.parametrize("mode", ["run_sync", "run"])
def test_tool_errors_reach_the_model_and_the_run_goes_on(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = OpenAIAgentsDriver(loader, mode=mode)
    brain = Brain(lambda brain, step: FAILING_CALLS if step.index == 0 else [])
    assert driver.run(brain, max_steps=3).final_output == "done"
    check_failures(results_by_call(brain))
    assert [type(error) for error in driver.errors] == [LiveToolError] * 3


def test_without_an_error_function_the_error_text_is_the_output(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = OpenAIAgentsDriver(loader)
    driver.agent.tool_error_function = None
    brain = Brain(lambda brain, step: [("greet", {})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    output = driver.outputs["call_1"]
    assert isinstance(output, str) and not output.startswith(ERROR_PREFIX)
    assert "who" in output


def test_the_agents_own_tool_keeps_its_name(tools_dir: Path, make_loader: MakeLoader) -> None:
    @function_tool
    def greet(who: str) -> str:
        """The agent's own greeting."""
        return f"own greeting for {who}"

    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "farewell.py", versioned_tool("farewell", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = OpenAIAgentsDriver(loader, tools=[greet])
    brain = Brain(lambda brain, step: [("greet", {"who": "fa"})] if step.index == 0 else [])
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"greet": "The agent's own greeting.", "farewell": "farewell version 1."}
    assert results_by_call(brain) == {"call_1": ("own greeting for fa", False)}


def test_json_and_image_results_become_sdk_outputs(tools_dir: Path, make_loader: MakeLoader) -> None:
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
    driver = OpenAIAgentsDriver(loader)
    brain = Brain(
        lambda brain, step: [("stats", {"who": "gi"}), ("picture", {"who": "ha"})] if step.index == 0 else []
    )
    driver.run(brain, max_steps=3)
    assert driver.outputs["call_1"] == '{"who": "gi", "count": 3}'
    picture = driver.outputs["call_2"]
    assert [item["type"] for item in picture] == ["input_text", "input_image"]
    assert picture[1]["image_url"] == "data:image/png;base64," + base64.b64encode(b"PNGDATA").decode()


def test_fuzz_every_call_runs_the_version_its_turn_offered(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = OpenAIAgentsDriver(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=50))
    with rewriting(path, "ver", start=0) as written:
        driver.run(brain, max_steps=60)
    answered = brain.answered()
    assert len(answered) == 50
    assert mixed_calls(brain) == []
    assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == 50
    assert written() > 50
