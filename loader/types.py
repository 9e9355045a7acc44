"""The tool model, wire-compatible with Strands Agents and the Bedrock Converse API.

Everything that crosses a boundary (a model, an MCP client, a Strands agent) is a
plain dict with camelCase keys; the ``TypedDict`` classes below only describe
those dicts. ``AgentTool`` is the abstract base every tool implements.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Coroutine
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "AGENT_TOOL_HOOK",
    "AgentTool",
    "AudioContent",
    "Component",
    "ComponentKind",
    "DocumentContent",
    "ImageContent",
    "JSONSchema",
    "ResourceContent",
    "Tool",
    "ToolCall",
    "ToolChoice",
    "ToolChoiceAny",
    "ToolChoiceAuto",
    "ToolChoiceTool",
    "ToolConfig",
    "ToolExample",
    "ToolGenerator",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSpec",
    "ToolUse",
    "as_agent_tool",
    "call_frame",
    "new_tool_use_id",
    "run_sync",
]

JSONSchema = dict[str, Any]
"""A JSON Schema document as a plain dict."""


class ToolSpec(TypedDict):
    """What a model is told about a tool: its name, description and input schema.

    ``inputSchema`` wraps the schema as ``{"json": schema}``, as Bedrock expects.
    """

    name: str
    description: str
    inputSchema: JSONSchema
    outputSchema: NotRequired[JSONSchema]


class Tool(TypedDict):
    """A tool as it appears in a model request."""

    toolSpec: ToolSpec


class ToolUse(TypedDict):
    """A model's request to run a tool."""

    toolUseId: str
    name: str
    input: Any


class ImageSource(TypedDict):
    """Raw image bytes."""

    bytes: bytes


class ImageContent(TypedDict):
    """An image in a tool result (``format`` is png, jpeg, gif or webp)."""

    format: str
    source: ImageSource


class DocumentSource(TypedDict):
    """Raw document bytes."""

    bytes: bytes


class DocumentContent(TypedDict, total=False):
    """A document in a tool result (``format`` is pdf, csv, txt, md, ...)."""

    format: str
    name: str
    source: DocumentSource


class AudioSource(TypedDict):
    """Raw audio bytes."""

    bytes: bytes


class AudioContent(TypedDict):
    """Audio in a tool result (``format`` is wav, mp3, ogg, flac, ...); not a Strands block, our extension."""

    format: str
    source: AudioSource


class ResourceContent(TypedDict, total=False):
    """A resource embedded in a tool result, with its URI; not a Strands block, our extension.

    ``uri`` is required; the body is ``text`` or raw ``source: {"bytes": ...}``;
    ``mimeType`` defaults to ``text/plain`` for text, ``application/octet-stream`` for bytes.
    """

    uri: str
    mimeType: str
    text: str
    source: DocumentSource


class ToolResultContent(TypedDict, total=False):
    """One block of a tool result: exactly one of the keys is set.

    ``text``, ``json``, ``image`` and ``document`` are the Strands blocks;
    ``audio`` and ``resource`` are ours, for what MCP can carry and Strands has no block for.
    """

    text: str
    json: Any
    image: ImageContent
    document: DocumentContent
    audio: AudioContent
    resource: ResourceContent


ToolResultStatus = Literal["success", "error"]
"""Whether a tool call succeeded."""


class ToolResult(TypedDict):
    """The outcome of one tool call."""

    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


class ToolChoiceAuto(TypedDict):
    """The model decides whether to call a tool."""


class ToolChoiceAny(TypedDict):
    """The model must call some tool."""


class ToolChoiceTool(TypedDict):
    """The model must call the named tool."""

    name: str


ToolChoice = (
    dict[Literal["auto"], ToolChoiceAuto]
    | dict[Literal["any"], ToolChoiceAny]
    | dict[Literal["tool"], ToolChoiceTool]
)
"""How the model picks tools: ``{"auto": {}}``, ``{"any": {}}`` or ``{"tool": {"name": ...}}``."""


class ToolConfig(TypedDict):
    """The tools section of a model request."""

    tools: list[Tool]
    toolChoice: ToolChoice


_NO_OUTPUT: Any = object()


@dataclass(frozen=True, slots=True)
class ToolExample:
    """A worked call of a tool: documentation for readers and models, and a check run before a reload.

    ``expected_output`` is compared with the result (equality for plain values,
    a subset match for dicts); when it is not given the call only has to succeed.
    """

    params: dict[str, Any]
    description: str = ""
    expected_output: Any = _NO_OUTPUT

    @property
    def has_expected_output(self) -> bool:
        """Whether the example says what the result must be."""
        return self.expected_output is not _NO_OUTPUT


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call's arguments as ``invoke``/``ainvoke`` take them, carried as one value.

    Attributes:
        input: The tool input (a dict for every tool style).
        tool_use_id: The id the result is tagged with.
        invocation_state: Caller-provided state passed along with the call.
        agent: The agent making the call, or None.
    """

    input: Any
    tool_use_id: str
    invocation_state: dict[str, Any] | None = None
    agent: Any = None


ToolGenerator = AsyncGenerator[Any, None]
"""The events of one tool call; the last one is the ``ToolResult``."""


_id_counter = itertools.count()
_id_prefix = "tooluse_" + os.urandom(6).hex()


def _new_id_prefix() -> None:
    global _id_prefix
    _id_prefix = "tooluse_" + os.urandom(6).hex()


os.register_at_fork(after_in_child=_new_id_prefix)


def new_tool_use_id() -> str:
    """A fresh id for a call made outside a model turn.

    A random per-process prefix (new in every forked child) plus a counter: unique
    like random bytes, without a ``getrandom`` system call on every inline call.
    """
    return "%s%08x" % (_id_prefix, next(_id_counter))  # noqa: UP031 - %-formatting is the cheapest here


def call_frame(
    tool_name: str,
    input: Any,
    tool_use_id: str | None,
    invocation_state: dict[str, Any] | None,
    agent: Any,
) -> tuple[ToolUse, dict[str, Any]]:
    """The ``ToolUse`` and invocation state for a direct ``invoke``/``ainvoke`` call.

    One place turns the convenience arguments into what ``stream`` expects, so
    every tool fills them the same way: a fresh id when none is given, ``{}``
    for missing input, and a copy of the state (the caller's dict is never
    changed) with ``agent`` added unless the state already names one.
    """
    tool_use: ToolUse = {
        "toolUseId": tool_use_id or new_tool_use_id(),
        "name": tool_name,
        "input": {} if input is None else input,
    }
    state = dict(invocation_state or {})
    if agent is not None:
        state.setdefault("agent", agent)
    return tool_use, state


def run_sync(factory: Any) -> Any:
    """Run ``factory()`` (returning a coroutine) to completion from synchronous code.

    Used by ``invoke`` conveniences: if no loop is running in this thread the
    coroutine runs with ``asyncio.run``; otherwise in a short-lived worker thread
    so the caller's loop is never re-entered, in a copy of the caller's context
    (as ``asyncio.run`` would give it: context variables, a caller's trace).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(factory())
        except BaseException as exc:  # handed back to the caller below
            box["error"] = exc

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(worker,), name="tool-loader-invoke", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class AgentTool(ABC):
    """The interface every tool implements; compatible with Strands' ``AgentTool``.

    Subclasses provide ``tool_name``, ``tool_spec``, ``tool_type`` and ``stream``.
    ``invoke``/``ainvoke`` are conveniences for callers that just want the
    result. Their signatures are stated here once: a subclass changes how they
    run by overriding ``_invoke``/``_ainvoke``, which take the same four values
    in order (a synchronous body overrides ``_invoke`` so a call needs no event
    loop at all).
    """

    _is_dynamic: bool

    def __init__(self) -> None:
        self._is_dynamic = False

    @property
    @abstractmethod
    def tool_name(self) -> str:
        """The unique name the model calls the tool by."""

    @property
    @abstractmethod
    def tool_spec(self) -> ToolSpec:
        """The specification sent to the model."""

    @property
    @abstractmethod
    def tool_type(self) -> str:
        """The kind of implementation: ``function``, ``class``, ``module``, ..."""

    @property
    def supports_hot_reload(self) -> bool:
        """Whether the tool can be swapped for a new version while running."""
        return False

    @abstractmethod
    def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Run the tool, yielding progress events and, last, the ``ToolResult``."""

    @property
    def is_dynamic(self) -> bool:
        """Whether the tool was loaded at runtime (by the directory loader)."""
        return self._is_dynamic

    def mark_dynamic(self) -> None:
        """Mark the tool as loaded at runtime."""
        self._is_dynamic = True

    def get_display_properties(self) -> dict[str, str]:
        """Properties shown in listings; subclasses add their own."""
        return {"Name": self.tool_name, "Type": self.tool_type}

    @property
    def is_async(self) -> bool:
        """Whether ``stream`` never blocks an event loop, so callers may drive it on theirs.

        False (the default) makes async callers, such as the registry's
        ``ainvoke``, run the tool on a worker thread instead; a tool whose body
        is ``async def``, or that hands blocking work to a thread itself, says True.
        """
        return False

    @property
    def enforces_call_timeout(self) -> bool:
        """Whether the tool stops an overdue call by itself (a proxy kills its worker process).

        The call runner then calls ``invoke`` directly from synchronous code
        instead of driving the call on an event loop just to bound it.
        """
        return False

    @property
    def isolation(self) -> Literal["thread", "process"]:
        """Where the tool's code runs: in this process (``thread``, the default) or in a worker process."""
        return "thread"

    @property
    def source_file(self) -> str | None:
        """The file the tool is defined in, when known (listings, ``inspect``, error locations)."""
        return None

    @property
    def source_line(self) -> int | None:
        """The line in ``source_file`` where the tool's definition starts, when known."""
        return None

    @property
    def version(self) -> str | None:
        """The version the tool declares (class tools' ``version=``), when it declares one."""
        return None

    @property
    def category(self) -> str | None:
        """A grouping for listings and ``ToolRegistry.search``."""
        return None

    @property
    def tags(self) -> tuple[str, ...]:
        """Free-form labels for listings and ``ToolRegistry.search``."""
        return ()

    @property
    def search_hint(self) -> str | None:
        """Extra words ``search_tools`` finds the tool by (``@tool(search_hint=...)``)."""
        return None

    @property
    def always_load(self) -> bool:
        """Whether a search-mode listing still lists the tool itself (``@tool(always_load=True)``)."""
        return False

    @property
    def examples(self) -> tuple[ToolExample, ...]:
        """Worked calls of the tool; with the loader's gate on, a reload whose examples fail is rejected."""
        return ()

    def cleanup(self) -> Awaitable[None] | None:
        """Release resources when the tool is unregistered, replaced or the registry closes."""
        return None

    async def ainvoke(
        self,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the tool and return its final result, discarding stream events."""
        return await self._ainvoke(input, tool_use_id, invocation_state, agent)

    async def _ainvoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        """The body of ``ainvoke``; this default drives ``stream``."""
        tool_use, state = call_frame(self.tool_name, input, tool_use_id, invocation_state, agent)
        last: Any = None
        async for event in self.stream(tool_use, state):
            last = event
        return _as_final_result(last, tool_use["toolUseId"])

    def invoke(
        self,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the tool synchronously and return its final result."""
        return self._invoke(input, tool_use_id, invocation_state, agent)

    def _invoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        """The body of ``invoke``; this default drives ``ainvoke`` on an event loop (see ``run_sync``).

        Tools with a synchronous body override it so a call needs no loop.
        """

        def factory() -> Coroutine[Any, Any, ToolResult]:  # the public ainvoke: a subclass may override it
            return self.ainvoke(
                input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
            )

        return run_sync(factory)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tool_name!r} type={self.tool_type}>"


AGENT_TOOL_HOOK = "__agent_tool__"
"""The method an object defines to stand for an ``AgentTool`` (``@tool`` gives it to the classes it
decorates): called with the object, it returns the tool, the same one each time."""


def as_agent_tool(obj: object) -> AgentTool | None:
    """``obj`` if it is an ``AgentTool``, the tool it stands for if its class says (``AGENT_TOOL_HOOK``),
    else None.

    So an instance of a ``@tool`` class is accepted wherever a tool is, as that very
    instance, though the registry knows nothing of tool classes. The hook is looked up
    on the class, so an instance cannot fake it through ``__getattr__``.
    """
    if isinstance(obj, AgentTool):
        return obj
    provide = getattr(type(obj), AGENT_TOOL_HOOK, None)
    if not callable(provide):
        return None
    found = provide(obj)
    return found if isinstance(found, AgentTool) else None


def _as_final_result(event: Any, tool_use_id: str) -> ToolResult:
    """The last stream event as a ``ToolResult`` (a tool that yielded nothing failed)."""
    if isinstance(event, dict) and "status" in event and "content" in event:
        return event  # type: ignore[return-value]
    inner = getattr(event, "tool_result", None)  # Strands' ToolResultEvent
    if isinstance(inner, dict):
        return inner  # type: ignore[return-value]
    return {
        "toolUseId": tool_use_id,
        "status": "error",
        "content": [{"text": "Error: the tool finished without producing a result"}],
    }


class ComponentKind(StrEnum):
    """What else an MCP server serves beside tools."""

    PROMPT = "prompt"
    RESOURCE = "resource"
    RESOURCE_TEMPLATE = "resource-template"
    SKILL = "skill"
    SKILL_FILE = "skill-file"


class Component(ABC):
    """A prompt, resource, resource template, skill or skill file: held by the registry beside the tools.

    The registry knows only its kind, its key (a prompt's name, a resource's URI,
    a template's URI template) and where it came from; ``loader.components`` has
    the kinds themselves (each sets ``kind`` as a class attribute). Its ``repr``
    names the class and the key.
    """

    source_file: str | None = None
    module: str | None = None
    """The module whose code defined it (discovery takes a module's own, not what it imported)."""

    @property
    @abstractmethod
    def kind(self) -> ComponentKind:
        """Which kind of component this is."""

    @property
    @abstractmethod
    def key(self) -> str:
        """Unique within its kind: the prompt name, or the (template) URI."""

    @property
    def component_id(self) -> str:
        """Unique across kinds: ``prompt:review``, ``resource:data://x``, ``resource-template:data://{id}``."""
        return f"{self.kind.value}:{self.key}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key!r}>"
