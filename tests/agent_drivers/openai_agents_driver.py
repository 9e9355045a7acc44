"""The OpenAI Agents SDK: ``LiveAgent``, driven by the SDK's own ``agents.testing.ScriptedModel``."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from typing import Any

from agents import FunctionTool, RunConfig, Runner, RunResult, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel
from live_agents import Brain, Driver, Offer, Result, own_greet
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.openai_agents import LiveAgent, LiveToolError
from loader.integrations.skills import SkillsMode
from loader.reload.loader import ToolLoader

ERROR_PREFIX = "failed: "
"""What the driver's tool error function puts before the error text, so the model can tell an error."""


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(item.get("text", "") for item in output)


class OpenAIAgentsDriver(Driver):
    """One ``LiveAgent``, built once around a ``ScriptedModel`` whose every step asks the current brain."""

    def __init__(
        self,
        loader: ToolLoader,
        *,
        tools: Sequence[Any] = (),
        mode: str = "run_sync",
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        self.brain: Brain | None = None
        self.mode = mode
        self.model = ScriptedModel()
        self.outputs: dict[str, Any] = {}
        self.errors: list[Exception] = []
        self.result: RunResult | None = None
        self.agent: LiveAgent[Any] = LiveAgent(
            name="a",
            model=self.model,
            tools=list(tools),
            tool_source=loader,
            tool_error_function=self._word,
            discovery=discovery,
            skills=skills,
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

    def run(self, brain: Brain, max_steps: int) -> None:
        self.brain = brain
        if self.model.remaining_steps == 0:
            self.model.enqueue(ModelStep.respond(self._respond))
        config = RunConfig(tracing_disabled=True)
        if self.mode == "run":
            self.result = asyncio.run(
                Runner.run(self.agent, "go", max_turns=max_steps + 5, run_config=config)
            )
        else:
            self.result = Runner.run_sync(self.agent, "go", max_turns=max_steps + 5, run_config=config)

    @staticmethod
    def own_greet() -> FunctionTool:
        return function_tool(own_greet())

    def _offered_tool(self, name: str) -> FunctionTool:
        call = self.model.last_call
        assert call is not None
        [offered] = [t for t in call.tools if isinstance(t, FunctionTool) and t.name == name]
        return offered

    def offered(self, name: str) -> Offer:
        offered = self._offered_tool(name)
        return Offer(offered.description, offered.params_json_schema)

    def check_offer(self, name: str) -> None:
        assert self._offered_tool(name).strict_json_schema is False

    def check_live_run(self) -> None:
        assert self.result is not None and self.result.final_output == "done"
        assert self.agent.tools == []  # the agent's own list is never touched

    def check_error_path(self) -> None:
        assert self.result is not None and self.result.final_output == "done"
        assert [type(error) for error in self.errors] == [LiveToolError] * 3

    def check_media(self) -> None:
        assert self.outputs["call_1"] == '{"who": "gi", "count": 3}'
        picture = self.outputs["call_2"]
        assert [item["type"] for item in picture] == ["input_text", "input_image"]
        assert picture[1]["image_url"] == "data:image/png;base64," + base64.b64encode(b"PNGDATA").decode()
