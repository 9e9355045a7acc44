"""The loader's live tools in a LangChain v1 agent (``create_agent``, LangGraph underneath), as middleware.

``create_agent(model, tools=[], middleware=[LiveToolsMiddleware(loader)])``

* Before every model call (``wrap_model_call``) the middleware takes one
  registry snapshot and adds its tools to the request: each one a LangChain
  ``BaseTool`` whose ``args_schema`` is the tool's JSON Schema, as is.
* The snapshot is pinned to the tool-call ids of the model's answer; when
  LangGraph's ``ToolNode`` reaches a call it does not know (``request.tool`` is
  None), ``wrap_tool_call`` hands it the tool from that call's snapshot, so the
  call runs the version the model was shown even if the file changed since.
* A tool's error result is raised as ``ToolException`` inside the tool, which
  LangChain turns into a ``ToolMessage`` with ``status="error"``; the run goes on.

An agent's own tool (given to ``create_agent``) keeps its name: a live tool of
the same name is left out. Pins are kept for the newest ``max_pins`` calls; a
call older than that, or one resumed from a checkpoint in another process,
runs the registry's current version.

LangChain is an optional extra: ``langchain``.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import Annotated, Any, NotRequired

from ..distribution import missing_extra

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ExtendedModelResponse,
        ModelRequest,
        ModelResponse,
        ToolCallRequest,
    )
    from langchain.agents.middleware.types import PrivateStateAttr
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.tools import BaseTool, ToolException
    from langgraph.prebuilt.tool_node import INVALID_TOOL_NAME_ERROR_TEMPLATE
    from langgraph.runtime import Runtime
    from langgraph.types import Command
    from pydantic import PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "LangChain v1", "langchain", exc) from exc

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..types import AgentTool, ToolResult
from .discovery import DiscoveryMode
from .live import ResultPart, ToolSource, failed, input_schema, mime_type, registry_of, result_parts
from .offer import ToolOffer
from .skills import ACTIVATE_SKILL, SkillRun, SkillsMode

__all__ = ["LiveTool", "LiveToolsMiddleware"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_PINS = 1024
"""How many tool calls keep the snapshot they were offered from (oldest forgotten first)."""

SKILLS_KEY = "tool_loader_skills"
"""The agent-state key holding the skills this run activated (``skills="on-activation"``)."""


def _skills_update(current: list[str] | None, update: list[str] | None) -> list[str]:
    """The state's reducer for ``SKILLS_KEY``: None starts a run with none active, a list adds to them."""
    return [] if update is None else sorted({*(current or []), *update})


class SkillsState(AgentState[Any]):
    """The agent state with the skills this run activated, private to the middleware."""

    tool_loader_skills: NotRequired[Annotated[list[str], PrivateStateAttr, _skills_update]]


class LiveTool(BaseTool):
    """One registry tool, pinned to the snapshot it came from, as a LangChain ``BaseTool``."""

    handle_tool_error: Any = True
    _snapshot: RegistrySnapshot = PrivateAttr()
    _call_id: str | None = PrivateAttr(default=None)

    @classmethod
    def pinned(cls, snapshot: RegistrySnapshot, tool: AgentTool, call_id: str | None = None) -> LiveTool:
        """The tool as ``snapshot`` holds it; ``call_id`` names the call its results answer."""
        spec = tool.tool_spec
        live = cls(name=spec["name"], description=spec.get("description", ""), args_schema=input_schema(tool))
        live._snapshot = snapshot
        live._call_id = call_id
        return live

    def _run(self, **kwargs: Any) -> Any:
        return _content(self._snapshot.invoke(self.name, kwargs, tool_use_id=self._call_id))

    async def _arun(self, **kwargs: Any) -> Any:
        return _content(await self._snapshot.ainvoke(self.name, kwargs, tool_use_id=self._call_id))


def _block(part: ResultPart) -> dict[str, Any]:
    if part.kind == "text":
        return {"type": "text", "text": part.text}
    kind = "image" if part.kind == "image" else "file"
    block: dict[str, Any] = {
        "type": kind,
        "base64": base64.b64encode(part.data).decode("ascii"),
        "mime_type": mime_type(part),
    }
    if part.kind == "document":
        block["filename"] = f"{part.name}.{part.format}"
    return block


def _content(result: ToolResult) -> str | list[dict[str, Any]]:
    """A result as ``ToolMessage`` content: one string for text, standard content blocks otherwise.

    An error result raises ``ToolException``, which LangChain answers with a
    ``ToolMessage`` of ``status="error"`` (``handle_tool_error`` is on).
    """
    parts = result_parts(result)
    text = "\n".join(part.text for part in parts if part.kind == "text")
    if failed(result):
        raise ToolException(text)
    if all(part.kind == "text" for part in parts):
        return text
    return [_block(part) for part in parts]


class _Pins:
    """Tool-call id -> the snapshot its step offered, for the newest ``limit`` calls."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._pins: OrderedDict[str, RegistrySnapshot] = OrderedDict()
        self._lock = threading.Lock()

    def pin(self, call_ids: Iterable[str], snapshot: RegistrySnapshot) -> None:
        with self._lock:
            for call_id in call_ids:
                self._pins[call_id] = snapshot
                self._pins.move_to_end(call_id)
            while len(self._pins) > self._limit:
                self._pins.popitem(last=False)

    def get(self, call_id: str) -> RegistrySnapshot | None:
        with self._lock:
            return self._pins.get(call_id)


def _messages(response: Any) -> list[BaseMessage]:
    if isinstance(response, ExtendedModelResponse):
        response = response.model_response
    if isinstance(response, ModelResponse):
        return list(response.result)
    return [response] if isinstance(response, BaseMessage) else []


def _own_names(tools: Iterable[BaseTool | dict[str, Any]]) -> set[str]:
    names: set[str] = set()
    for tool in tools:
        if isinstance(tool, BaseTool):
            names.add(tool.name)
        elif isinstance(tool, dict):
            name = tool.get("name") or tool.get("function", {}).get("name")
            if isinstance(name, str):
                names.add(name)
    return names


class LiveToolsMiddleware(AgentMiddleware[SkillsState]):
    """The loader's tools for a LangChain agent: a fresh snapshot each model call, its calls pinned to it.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = create_agent(model, tools=[], middleware=[LiveToolsMiddleware(loader)])
    """

    state_schema = SkillsState

    def __init__(
        self,
        source: ToolSource,
        *,
        max_pins: int = DEFAULT_MAX_PINS,
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        Args:
            source: Where the tools come from; it keeps loading and reloading on its own.
            max_pins: How many recent tool calls remember the snapshot they were offered from.
            discovery: ``"search"`` offers ``search_tools`` and ``call_tool`` instead of every tool
                (``loader.integrations.discovery``).
            skills: ``"on-activation"`` offers a skill's tools only once the run called
                ``activate_skill`` for it (``loader.integrations.skills``); the run's skills
                live in the agent state, so each invocation starts with none.
        """
        super().__init__()
        self.tools: list[BaseTool] = []
        self._registry = registry_of(source)
        self._pins = _Pins(max_pins)
        self._cache_lock = threading.Lock()
        self._cached: tuple[RegistrySnapshot | None, list[LiveTool]] = (None, [])
        self._own: set[str] = set()
        self._offering = ToolOffer(self._registry, discovery=discovery, skills=skills)

    @property
    def registry(self) -> ToolRegistry:
        """The registry the tools come from."""
        return self._registry

    def _current(self, state: Any = None) -> RegistrySnapshot:
        """What a step offers now: the registry's snapshot, or the search's or the run's skills' view."""
        run = None
        if self._offering.per_run:
            activated = state.get(SKILLS_KEY) if isinstance(state, dict) else None
            run = SkillRun(self._registry, activated or ())
        return self._offering.step(run)

    def before_agent(self, state: SkillsState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """A new invocation starts with no skill active (``skills="on-activation"``)."""
        return {SKILLS_KEY: None} if self._offering.per_run else None

    def live_tools(self, snapshot: RegistrySnapshot | None = None) -> list[LiveTool]:
        """The tools of ``snapshot`` (default: the current one) as pinned ``BaseTool`` s."""
        snapshot = snapshot or self._current()
        with self._cache_lock:
            cached, tools = self._cached
            if cached is not snapshot:
                tools = [LiveTool.pinned(snapshot, tool) for tool in snapshot.tools()]
                self._cached = (snapshot, tools)
            return tools

    # -- model calls ------------------------------------------------------------------

    def _offer(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], RegistrySnapshot, set[str]]:
        snapshot = self._current(request.state)
        own = _own_names(request.tools)
        self._own = own
        live = [tool for tool in self.live_tools(snapshot) if tool.name not in own]
        return request.override(tools=[*request.tools, *live]), snapshot, {tool.name for tool in live}

    def _pin(self, response: Any, snapshot: RegistrySnapshot, names: set[str]) -> None:
        ids = [
            call["id"]
            for message in _messages(response)
            if isinstance(message, AIMessage)
            for call in message.tool_calls
            if call.get("id") and call["name"] in names
        ]
        self._pins.pin([call_id for call_id in ids if call_id], snapshot)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Offer this step's snapshot and pin the calls the model makes to it."""
        offered, snapshot, names = self._offer(request)
        response = handler(offered)
        self._pin(response, snapshot, names)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async ``wrap_model_call``."""
        offered, snapshot, names = self._offer(request)
        response = await handler(offered)
        self._pin(response, snapshot, names)
        return response

    # -- tool calls ---------------------------------------------------------------------

    def _resolve(self, request: ToolCallRequest) -> ToolCallRequest | ToolMessage:
        """The request with our tool for a call the agent's ``ToolNode`` does not know.

        A name no tool answers to gets LangChain's own error, listing the tools
        live now (the ``ToolNode`` alone knows only the agent's own tools).
        """
        if request.tool is not None:
            return request
        call = request.tool_call
        call_id = call.get("id")
        call_key = (call["name"], call_id)
        snapshot = self._pins.get(call_id) if call_id else None
        if snapshot is None:
            logger.debug(
                "tool_name=<%s>, call_id=<%s> | no pinned snapshot, using the current one", *call_key
            )
            snapshot = self._current(request.state)
        tool = snapshot.get(call["name"])
        if tool is None:
            return self._unknown(call["name"], call_id)
        return request.override(tool=LiveTool.pinned(snapshot, tool, call_id))

    def _unknown(self, name: str, call_id: str | None) -> ToolMessage:
        live = sorted(self._own | set(self._registry.snapshot().names()))
        content = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
            requested_tool=name, available_tools=", ".join(live)
        )
        return ToolMessage(content, name=name, tool_call_id=call_id, status="error")

    def _activated(
        self, request: ToolCallRequest, response: ToolMessage | Command[Any]
    ) -> ToolMessage | Command[Any]:
        """A successful ``activate_skill`` as a state update: its skill's tools from the next step on."""
        call = request.tool_call
        activated = self._offering.per_run and call["name"] == ACTIVATE_SKILL
        if not activated or not isinstance(response, ToolMessage) or response.status == "error":
            return response
        return Command(update={"messages": [response], SKILLS_KEY: [str(call["args"].get("name"))]})

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        """Run a live tool's call through the snapshot its step offered."""
        resolved = self._resolve(request)
        if isinstance(resolved, ToolMessage):
            return resolved
        return self._activated(request, handler(resolved))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async ``wrap_tool_call``."""
        resolved = self._resolve(request)
        if isinstance(resolved, ToolMessage):
            return resolved
        return self._activated(request, await handler(resolved))
