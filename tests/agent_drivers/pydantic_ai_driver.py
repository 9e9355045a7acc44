"""pydantic-ai: an ``Agent`` with a ``LiveToolset``, driven by pydantic-ai's own ``FunctionModel``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from live_agents import FAILING_CALLS, Brain, Driver, Offer, Result, Step, own_greet
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

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.pydantic_ai import LiveToolset
from loader.integrations.skills import SkillsMode
from loader.reload.loader import ToolLoader


class PydanticAIDriver(Driver):
    """One agent, built once around a ``FunctionModel`` that asks the current brain."""

    failing_steps = 2  # more failures than the default retry budget (1): failed returns never spend it

    def __init__(
        self,
        loader: ToolLoader,
        *,
        mode: str = "run_sync",
        tools: Sequence[Tool[None]] = (),
        toolset: LiveToolset | None = None,
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        self.brain: Brain | None = None
        self.mode = mode
        self.seen_tools: list[ToolDefinition] = []
        self.returns: dict[str, ToolReturnPart | RetryPromptPart] = {}
        self.toolset = toolset or LiveToolset(loader, discovery=discovery, skills=skills)
        self.agent = Agent(FunctionModel(self._respond), tools=tools, toolsets=[self.toolset])

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
        if self.mode == "run":
            asyncio.run(self.arun(brain, max_steps))
        else:
            self.brain = brain
            self.agent.run_sync("go", usage_limits=UsageLimits(request_limit=max_steps + 5))

    async def arun(self, brain: Brain, max_steps: int) -> None:
        """``run`` inside a running event loop (``agent.run``)."""
        self.brain = brain
        await self.agent.run("go", usage_limits=UsageLimits(request_limit=max_steps + 5))

    @staticmethod
    def own_greet() -> Tool[None]:
        return Tool(own_greet())

    def offered(self, name: str) -> Offer:
        [offered] = [t for t in self.seen_tools if t.name == name]
        return Offer(offered.description or "", offered.parameters_json_schema)

    def failing_plan(self, brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        return FAILING_CALLS if step.index < self.failing_steps else []

    def check_error_path(self) -> None:
        assert {type(part).__name__ for part in self.returns.values()} == {"ToolReturnPart"}
        assert {part.outcome for part in self.returns.values() if isinstance(part, ToolReturnPart)} == {
            "failed"
        }

    def check_media(self) -> None:
        stats, picture = self.returns["call_1"], self.returns["call_2"]
        assert stats.content == '{"who": "gi", "count": 3}'
        assert picture.content == ["a dot for ha", BinaryContent(b"PNGDATA", media_type="image/png")]
