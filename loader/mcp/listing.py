"""``tools/list`` answered from the wire form the SDK produced for the same registry generation.

A listing is the same for every client of one protocol version until the
registry changes, but the SDK's pipeline re-validates and re-dumps the whole
result on each request (over a thousand tools, milliseconds). ``ListingCache``
is a server middleware (``Server.middleware``, inside the SDK's OpenTelemetry
one): the first listing of a generation in a protocol version runs the whole
pipeline (initialization gate, params validation, our handler, the cache hint,
the result schema check) and its wire dict is kept; a later listing of that
generation and version gets a copy of it, after the same request check the SDK
runs (``mcp_types.methods.validate_client_request``), on a connection past its
``initialize``, with no cursor. Any other request goes the whole way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp_types import methods as _methods

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from .fingerprints import GenerationFingerprints
from .wire import FINGERPRINT_META_KEY

__all__ = ["ListingCache"]

LIST_TOOLS = "tools/list"

_PINNED: ContextVar[RegistrySnapshot | None] = ContextVar("tool_loader_listing_snapshot", default=None)


def _plain(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the SDK would hand this request to the handler as is: initialized, no cursor, valid."""
    params: Mapping[str, Any] | None = ctx.params
    if params is not None and any(key != "_meta" for key in params):
        return False
    if ctx.session.client_params is None:  # no initialize seen: let the SDK's gate answer
        return False
    try:
        _methods.validate_client_request(LIST_TOOLS, ctx.protocol_version, params)
    except Exception:  # the SDK's own pipeline gives the right error
        return False
    return True


def _fresh(wire: dict[str, Any]) -> dict[str, Any]:
    """A copy a response may own: a new top level, tool list and ``_meta`` (the tool entries are shared)."""
    answer = dict(wire)
    answer["tools"] = list(wire["tools"])
    if "_meta" in wire:
        answer["_meta"] = copy.deepcopy(wire["_meta"])
    return answer


class ListingCache:
    """Keeps the ``tools/list`` wire dict per (registry generation, protocol version)."""

    def __init__(self, registry: ToolRegistry, fingerprints: GenerationFingerprints) -> None:
        self._registry = registry
        self._fingerprints = fingerprints
        self._entries: dict[tuple[int, str], dict[str, Any]] = {}

    def pinned(self) -> RegistrySnapshot:
        """The snapshot the listing in progress is for (the registry's current one outside a listing)."""
        snapshot = _PINNED.get()
        return snapshot if snapshot is not None else self._registry.snapshot()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != LIST_TOOLS or ctx.request_id is None:
            return await call_next(ctx)
        snapshot = self._registry.snapshot()
        key = (snapshot.generation, ctx.protocol_version)
        cached = self._entries.get(key)
        if cached is not None and _plain(ctx):
            return _fresh(cached)
        token = _PINNED.set(snapshot)
        try:
            result = await call_next(ctx)
        finally:
            _PINNED.reset(token)
        if isinstance(result, dict) and self._keeps(result, snapshot) and _plain(ctx):
            entries = {k: v for k, v in self._entries.items() if k[0] == key[0]}
            entries[key] = _fresh(result)
            self._entries = entries
        return result

    def _keeps(self, result: dict[str, Any], snapshot: RegistrySnapshot) -> bool:
        """Whether ``result`` is the final listing of the current generation (its fingerprint settled)."""
        if not isinstance(result.get("tools"), list):
            return False
        if self._registry.snapshot() is not snapshot:  # a reload landed meanwhile: an older listing
            return False
        meta = result.get("_meta")
        fingerprint = self._fingerprints.ready(snapshot)
        if not isinstance(meta, dict) or fingerprint is None:
            return False
        return bool(meta.get(FINGERPRINT_META_KEY) == fingerprint)
