"""Content fingerprints: one tool's digest, and the fingerprint of a whole tool set.

A tool's digest (``tool_digest``) is the sha256 of what a model sees of it:
its MCP ``Tool`` entry as listed (name, title, description, input and output
schema, annotations; never ``_meta``) in the canonical JSON of RFC 8785 (JCS).
Any client can recompute it from a listing, a client can pin it and notice when
a tool changes under it, and a trace can say which version of a tool answered.
It depends on the spec alone: equal specs give equal digests on every replica.

Replicas behind a load balancer may be one sync apart; comparing fingerprints
tells an operator (or a client, from a result's ``_meta``) which tool set
answered. The fingerprint covers the sorted tool names, each tool's spec as
canonical JSON and the content hash of the file defining it. Paths are left
out on purpose: every replica may watch a different folder.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import rfc8785

from .status import FileStatus
from .types import AgentTool, ToolSpec

__all__ = [
    "FingerprintCache",
    "canonical_json",
    "content_hashes",
    "model_view",
    "spec_digest",
    "tool_digest",
    "tool_set_fingerprint",
]

_LISTED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
"""The parts of a spec a model is shown, as the MCP ``Tool`` names them."""

_SAFE_INTEGER = 2**53 - 1
"""JSON numbers are IEEE doubles (RFC 8785 section 3.2.2.3): larger integers are written as the double
a JavaScript client would read, so every client computes the same digest."""


def _schema(wrapped: Any) -> dict[str, Any] | None:
    """The JSON Schema inside a spec's ``{"json": schema}`` wrapper (a bare schema passes through)."""
    if not isinstance(wrapped, Mapping):
        return None
    inner = wrapped.get("json", wrapped)
    return dict(inner) if isinstance(inner, Mapping) else None


def model_view(spec: ToolSpec | Mapping[str, Any]) -> dict[str, Any]:
    """What a model sees of a tool: its MCP ``Tool`` entry as listed to current clients, without ``_meta``.

    Camel-case keys, ``None`` values left out, schemas unwrapped from Bedrock's
    ``{"json": ...}``, and an input schema that names no type rooted at
    ``"type": "object"`` (MCP requires an object). The MCP server lists this
    very dict (``loader.mcp.wire.to_mcp_tool``).
    """
    view: dict[str, Any] = {}
    for key in _LISTED_FIELDS:
        value = spec.get(key)
        if value is None:
            continue
        if key == "inputSchema":
            schema = _schema(value) or {}
            value = schema if "type" in schema else {"type": "object", **schema}
        elif key == "outputSchema":
            value = _schema(value)
            if value is None:
                continue
        view[key] = value
    return view


def _plain(value: Any) -> Any:
    """``value`` as JCS can write it: non-finite floats as ``null`` (as the wire writes them), integers
    beyond a double's precision as that double, tuples as lists, unknown objects as their ``str``, so a
    tool's odd spec never makes its digest (and the listing that carries it) fail."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):  # a lone surrogate cannot be UTF-8: it becomes "?", never an exception
        return value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, int):
        return value if -_SAFE_INTEGER <= value <= _SAFE_INTEGER else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return str(value)


def canonical_json(value: Any) -> bytes:
    """``value`` as RFC 8785 canonical JSON (sorted keys, no whitespace, ECMAScript numbers), UTF-8."""
    return rfc8785.dumps(_plain(value))


def spec_digest(spec: ToolSpec | Mapping[str, Any]) -> str:
    """The sha256 (hex) of ``model_view(spec)`` as canonical JSON: the tool's identity as a model sees it."""
    return hashlib.sha256(canonical_json(model_view(spec))).hexdigest()


# Per tool object (a spec is fixed per tool object, as the listing caches assume): id -> (ref, digest).
# Keyed by identity, not hash: a tool class may define __eq__ and be unhashable.
_digests: dict[int, tuple[weakref.ref[AgentTool], str]] = {}


def tool_digest(tool: AgentTool) -> str:
    """``spec_digest`` of ``tool``'s spec, worked out once per tool object."""
    key = id(tool)
    entry = _digests.get(key)
    if entry is not None and entry[0]() is tool:
        return entry[1]
    digest = spec_digest(tool.tool_spec)

    def forget(_: object) -> None:
        gone = _digests.get(key)
        if gone is not None and gone[0]() is None:
            del _digests[key]

    try:
        _digests[key] = (weakref.ref(tool, forget), digest)
    except TypeError:  # a tool that cannot be referenced weakly is digested each time
        pass
    return digest


class ToolSet(Protocol):
    """What a fingerprint reads from a registry snapshot (``RegistrySnapshot`` fits)."""

    @property
    def generation(self) -> int: ...

    def names(self) -> tuple[str, ...]: ...

    def source_of(self, name: str) -> str | None: ...

    def specs(self) -> list[ToolSpec]: ...


def content_hashes(statuses: Iterable[FileStatus]) -> dict[str, str | None]:
    """Source path (as the registry records it) to the hash of the bytes last loaded from it."""
    return {str(status.path): status.content_hash for status in statuses}


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def _file_hashes(tools: ToolSet, hashes: Mapping[str, str | None]) -> tuple[tuple[str, str | None], ...]:
    return tuple((name, hashes.get(tools.source_of(name) or "")) for name in tools.names())


def tool_set_fingerprint(tools: ToolSet, statuses: Iterable[FileStatus] = ()) -> str:
    """The sha256 (hex) of the tool set: names, specs, and defining files' content hashes.

    Args:
        tools: A registry snapshot.
        statuses: The loader's file statuses (``ToolLoader.status()``); without
            them only names and specs count.
    """
    return _digest(tools, _file_hashes(tools, content_hashes(statuses)))


def _digest(tools: ToolSet, file_hashes: tuple[tuple[str, str | None], ...]) -> str:
    specs = {spec["name"]: spec for spec in tools.specs()}
    digest = hashlib.sha256()
    for name, file_hash in file_hashes:
        digest.update(_line(name, specs.get(name), file_hash))
    return digest.hexdigest()


def _line(name: str, spec: ToolSpec | None, file_hash: str | None) -> bytes:
    """One tool's share of the digest."""
    return _canonical([name, spec, file_hash]) + b"\n"


class _Lines:
    """Each tool's digest line, kept while its tool object and file hash stay the same.

    A reload replaces only the tools of the files it applied, so the next
    fingerprint re-reads those specs alone (a spec is fixed per tool object,
    as the listing caches assume too). Tool sets that cannot hand out their
    tool objects (no ``get``) are digested whole.
    """

    def __init__(self) -> None:
        # Tools are held weakly: a replaced tool (and its module) must not outlive its last use here.
        self._kept: dict[str, tuple[weakref.ref[object], str | None, bytes]] = {}

    def digest(self, tools: ToolSet, file_hashes: tuple[tuple[str, str | None], ...]) -> str:
        get = getattr(tools, "get", None)
        if not callable(get):
            return _digest(tools, file_hashes)
        kept = self._kept
        now: dict[str, tuple[weakref.ref[object], str | None, bytes]] = {}
        digest = hashlib.sha256()
        for name, file_hash in file_hashes:
            tool = get(name)
            entry = kept.get(name)
            if entry is not None and tool is not None and entry[0]() is tool and entry[1] == file_hash:
                now[name] = entry
                digest.update(entry[2])
                continue
            spec = tool.tool_spec if tool is not None else None
            if spec is not None and spec.get("name") != name:  # a spec named otherwise: as _digest
                return _digest(tools, file_hashes)
            line = _line(name, spec, file_hash)
            if tool is not None:
                try:
                    now[name] = (weakref.ref(tool), file_hash, line)
                except TypeError:  # a tool that cannot be referenced weakly: its line is made each time
                    pass
            digest.update(line)
        self._kept = now
        return digest.hexdigest()


class FingerprintCache:
    """Recomputes a fingerprint only when the tools or their files' hashes changed.

    The loader publishes file statuses just after the registry commit, so
    the key holds the hashes too, not only the generation: a fingerprint
    taken in between is never kept past the statuses' update.
    """

    def __init__(self) -> None:
        # One attribute, swapped whole, so threads never pair a key with another key's value.
        self._cached: tuple[tuple[int, tuple[tuple[str, str | None], ...]], str] | None = None
        self._lines = _Lines()
        self._lock = threading.Lock()  # the per-tool lines are shared by every thread asking

    def __call__(self, tools: ToolSet, statuses: Iterable[FileStatus] = ()) -> str:
        """The fingerprint of ``tools`` (as ``tool_set_fingerprint``), cached per tool set."""
        file_hashes = _file_hashes(tools, content_hashes(statuses))
        key = (tools.generation, file_hashes)
        cached = self._cached
        if cached is not None and cached[0] == key:
            return cached[1]
        with self._lock:
            value = self._lines.digest(tools, file_hashes)
        self._cached = (key, value)
        return value
