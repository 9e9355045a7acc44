"""The messages between the loader and its workers, one ``TypedDict`` each, so ``mypy --strict`` checks
both ends of the pipe (``protocol`` frames them; ``process``, ``calls`` and ``backend`` send requests,
``worker_main`` answers them).

A worker's answers are read as what they claim to be (a ``cast`` at the
receiving end): the loader still treats every field as untrusted data and
checks it where it is used, because a tool can write to its worker's pipe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "Ack",
    "BeginRequest",
    "CallReply",
    "CallRequest",
    "CleanupRequest",
    "ComponentMessage",
    "Encoded",
    "ForgetRequest",
    "Hello",
    "LoadError",
    "LoadReply",
    "LoadRequest",
    "Message",
    "ModuleEntry",
    "PingRequest",
    "PrepareRequest",
    "Request",
    "SandboxPolicy",
    "ToolMessage",
    "WorkerSettings",
]

Message: TypeAlias = Mapping[str, Any]
"""Any message as the framing sees it: a JSON object."""

Encoded: TypeAlias = Any
"""A value as ``protocol.encode_value`` makes it: plain data (``None``, bools, numbers, text, bytes, lists,
dicts with text keys)."""

ModuleEntry: TypeAlias = list[Any]
"""One module version: ``[name, serial, path, source]``; ``source`` (encoded bytes) is None when the
worker already holds that version."""


# ------------------------------------------------------------------ settings
class SandboxPolicy(TypedDict):
    """What a sandboxed worker applies to itself before any tool code (``sandbox.policy.worker_policy``)."""

    read: list[str]
    write: list[str]
    """The worker's own scratch folder first, then what ``allow_write`` adds."""
    list: list[str]
    devices: list[str]
    connect: list[int]
    network: bool
    best_effort: bool
    max_file_mb: int | None
    max_open_files: int | None
    max_cpu_seconds: float | None


class WorkerSettings(TypedDict):
    """A worker's start-up settings, its command line's last argument."""

    tag: str
    roots: list[str]
    builtin_plugins: bool
    entry_point_plugins: bool
    max_memory_mb: int | None
    subreaper: bool
    max_result_bytes: int | None
    sandbox: NotRequired[SandboxPolicy]
    fault_fd: NotRequired[int]
    """Where the worker's ``faulthandler`` writes its stacks (added by ``WorkerProcess``)."""


# ------------------------------------------------------------------ requests
class PingRequest(TypedDict):
    op: Literal["ping"]


class BeginRequest(TypedDict):
    """A new reload batch (import role)."""

    op: Literal["begin"]


class ForgetRequest(TypedDict):
    """Drop these modules (deleted or renamed files)."""

    op: Literal["forget"]
    names: list[str]


class LoadRequest(TypedDict):
    """Import one tool file (import role)."""

    op: Literal["load"]
    path: str
    module: str
    source: Encoded
    hash: str
    preload: list[ModuleEntry]
    """Every module version the file imported last time, helpers first (each import starts afresh)."""
    serial_base: int


class PrepareRequest(TypedDict):
    """Build a tool version ahead of its first call, answered later (fire and forget)."""

    op: Literal["prepare"]
    build: list[ModuleEntry]
    serial: int


class CallRequest(TypedDict):
    """Run one tool of one module version."""

    op: Literal["call"]
    sync: list[ModuleEntry]
    drop: list[str]
    build: list[ModuleEntry]
    serial: int
    tool: str
    tool_use: Encoded
    state: dict[str, Any]
    stream: bool
    trace: NotRequired[dict[str, str]]
    context: NotRequired[dict[str, Any]]
    """The caller's context handlers, offered (``context_relay.REQUEST``)."""


class CleanupRequest(TypedDict):
    """Run ``cleanup()`` of one tool instance."""

    op: Literal["cleanup"]
    serial: int
    tool: str


Request: TypeAlias = (
    PingRequest | BeginRequest | ForgetRequest | LoadRequest | PrepareRequest | CallRequest | CleanupRequest
)


# ------------------------------------------------------------------ replies
class Hello(TypedDict):
    """A worker's first message: ready, or why it could not start."""

    ok: bool
    ready: NotRequired[bool]
    pid: NotRequired[int]
    fatal: NotRequired[str]


class Ack(TypedDict):
    """The answer to ping, begin, forget, prepare and cleanup (and to an unknown op)."""

    ok: bool
    error: NotRequired[str]
    fatal: NotRequired[str]


class LoadError(TypedDict):
    """Why a tool file did not import (``status.LoadErrorInfo`` as plain data)."""

    exc_type: str
    message: str
    file: str | None
    line: int | None
    traceback: str
    kind: str
    source: NotRequired[str | None]


class ToolMessage(TypedDict):
    """A ``ToolDescription`` on the wire (``description_wire``): what a proxy stands in for."""

    name: str
    spec: Encoded
    type: str
    is_async: bool
    streaming: bool
    source_file: str | None
    source_line: int | None
    version: str | None
    category: str | None
    tags: list[str]
    display: Encoded
    hot_reload: bool
    metadata: dict[str, Any] | None
    examples: list[dict[str, Any]]
    search_hint: str | None
    always_load: bool


class ComponentMessage(TypedDict):
    """A prompt, resource or resource template on the wire (``components.describe_component``)."""

    kind: str
    key: str
    name: str
    title: str | None
    description: str | None
    mime_type: str | None
    arguments: list[dict[str, Any]]
    """A prompt's arguments: ``{"name", "description", "required"}`` each."""
    values: dict[str, list[str]]
    """The values completion offers per argument (``Literal``, ``Enum``, front matter ``values:``)."""
    complete: bool
    """Whether a ``complete=`` callable answers completion (in the worker)."""
    source_file: str | None


class LoadReply(TypedDict):
    """The answer to a load: the tools found, every module version executed and the import graph."""

    ok: bool
    error: LoadError | None
    tools: list[ToolMessage]
    components: NotRequired[list[ComponentMessage]]
    executed: list[ModuleEntry]
    deps: dict[str, list[str]]
    executions: int
    crashed: NotRequired[int]
    """The import's process ended without answering: its exit code (negative: the signal that ended it)."""
    too_large: NotRequired[int]
    """The import's answer is longer than this many bytes (the wire limit): never read."""
    malformed: NotRequired[bool]
    """The import's answer arrived whole but was not a message (its process was stopped)."""


class CallReply(TypedDict):
    """A call's last message: its result, and what it built or imported on the way."""

    result: Encoded
    raised: NotRequired[list[str]]
    """The tool raised through (``raise_errors=True``): its exception's type name and text."""
    prepared: NotRequired[bool]
    """False when the tool version could not be rebuilt (the worker's modules are then unknown)."""
    imported: NotRequired[list[str]]
