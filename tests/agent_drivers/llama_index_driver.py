"""LlamaIndex: a ``FunctionAgent`` with a ``LiveToolRetriever``, driven by ``MockFunctionCallingLLM``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from live_agents import Brain, Driver, Offer, Result, check_failures
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import BaseTool

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.llama_index import LiveToolRetriever
from loader.integrations.skills import SkillsMode
from loader.reload.loader import ToolLoader


class LlamaIndexDriver(Driver):
    """One ``FunctionAgent``, built once around a ``MockFunctionCallingLLM`` that asks the current brain.

    ``mode`` is ``"streaming"`` or ``"blocking"``: whether the agent streams the model's answers.
    """

    def __init__(
        self,
        loader: ToolLoader,
        *,
        tools: Sequence[BaseTool] = (),
        mode: str = "streaming",
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        self.brain: Brain | None = None
        self.seen_tools: list[dict[str, Any]] = []
        self.tool_results: list[ToolCallResult] = []
        self.llm = MockFunctionCallingLLM(response_generator=self._respond)
        self.agent = FunctionAgent(
            llm=self.llm,
            tools=list(tools) or None,
            tool_retriever=LiveToolRetriever(loader, discovery=discovery, skills=skills),
            streaming=mode == "streaming",
        )

    def _respond(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        assert self.brain is not None
        tools: list[BaseTool] = kwargs.get("tools") or []
        self.seen_tools = [tool.metadata.to_openai_tool()["function"] for tool in tools]
        offered = {t["name"]: t["description"] for t in self.seen_tools}
        # The model sees the blocks of a tool's output, not whether it failed: ``results`` adds that.
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
        self.tool_results = []

        async def run() -> None:
            handler = self.agent.run("go", max_iterations=max_steps + 5)
            async for event in handler.stream_events():
                if isinstance(event, ToolCallResult):
                    self.tool_results.append(event)
            await handler

        asyncio.run(run())

    def outputs(self) -> dict[str, ToolCallResult]:
        return {event.tool_id: event for event in self.tool_results}

    def results(self, brain: Brain) -> dict[str, tuple[str, bool]]:
        """The text the model saw, with the error flag of the tool's output (every result must have one)."""
        outputs = self.outputs()
        return {
            call_id: (result.text, outputs[call_id].tool_output.is_error)
            for call_id, result in brain.results.items()
        }

    def offered(self, name: str) -> Offer:
        [offered] = [t for t in self.seen_tools if t["name"] == name]
        return Offer(offered["description"], offered["parameters"])

    def check_error_path(self) -> None:
        outputs = {call_id: event.tool_output for call_id, event in self.outputs().items()}
        check_failures({call_id: (output.content, output.is_error) for call_id, output in outputs.items()})

    def check_media(self) -> None:
        outputs = self.outputs()
        assert outputs["call_1"].tool_output.content == '{"who": "gi", "count": 3}'
        text, image = outputs["call_2"].tool_output.blocks
        assert isinstance(text, TextBlock) and text.text == "a dot for ha"
        assert isinstance(image, ImageBlock) and image.image_mimetype == "image/png"
        assert image.resolve_image().read() == b"PNGDATA"
