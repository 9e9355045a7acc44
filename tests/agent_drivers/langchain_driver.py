"""LangChain v1: ``create_agent`` with ``LiveToolsMiddleware``, driven by a fake chat model."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from live_agents import Brain, Driver, Offer, Result, own_greet

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.langchain import LiveToolsMiddleware
from loader.integrations.skills import SkillsMode
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


class LangChainDriver(Driver):
    """One agent, built once; each ``run`` is a new conversation."""

    def __init__(
        self,
        loader: ToolLoader,
        *,
        tools: Sequence[BaseTool] = (),
        mode: str = "invoke",
        max_pins: int = 1024,
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        self.model = BrainChatModel()
        self.middleware = LiveToolsMiddleware(loader, max_pins=max_pins, discovery=discovery, skills=skills)
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

    @staticmethod
    def own_greet() -> BaseTool:
        return tool(own_greet())

    def tool_messages(self) -> list[ToolMessage]:
        return [m for m in self.model.seen_messages if isinstance(m, ToolMessage)]

    def offered(self, name: str) -> Offer:
        [offered] = [t["function"] for t in self.model.seen_tools if t["function"]["name"] == name]
        return Offer(offered["description"], offered["parameters"])

    def check_error_path(self) -> None:
        assert [m.status for m in self.tool_messages()] == ["error", "error", "error"]

    def check_media(self) -> None:
        contents = {m.tool_call_id: m.content for m in self.tool_messages()}
        assert contents["call_1"] == '{"who": "gi", "count": 3}'
        assert contents["call_2"] == [
            {"type": "text", "text": "a dot for ha"},
            {"type": "image", "base64": base64.b64encode(b"PNGDATA").decode(), "mime_type": "image/png"},
        ]
