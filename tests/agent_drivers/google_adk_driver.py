"""Google ADK: an ``LlmAgent`` with a ``LiveToolset``, driven by a ``BaseLlm`` subclass (no network)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from live_agents import Brain, Driver, Offer, Result, own_greet

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.google_adk import LiveToolset
from loader.integrations.skills import SkillsMode
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


class GoogleADKDriver(Driver):
    """One ``LlmAgent`` and runner, built once; each ``run`` is a new session."""

    def __init__(
        self,
        loader: ToolLoader,
        *,
        tools: Sequence[Any] = (),
        mode: str = "run_async",
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        self.llm = BrainLlm()
        self.toolset = LiveToolset(loader, discovery=discovery, skills=skills)
        self.agent = LlmAgent(name="a", model=self.llm, tools=[*tools, self.toolset])
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

    @staticmethod
    def own_greet() -> Callable[[str], str]:
        return own_greet()  # ADK wraps a plain function itself

    def offered(self, name: str) -> Offer:
        [declaration] = [
            declaration
            for tool in self.llm.requests[-1].config.tools or []
            for declaration in getattr(tool, "function_declarations", None) or []
            if declaration.name == name
        ]
        return Offer(declaration.description or "", declaration.parameters_json_schema)
