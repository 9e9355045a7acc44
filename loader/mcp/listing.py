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

from ..reload.published import Published
from .served import ServedTools
from .wire import FINGERPRINT_META_KEY

__all__ = ["ListingCache"]

LIST_TOOLS = "tools/list"

_PINNED: ContextVar[Published | None] = ContextVar("tool_loader_listing_record", default=None)


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
    """Keeps the ``tools/list`` wire dict per (served generation, protocol version)."""

    def __init__(self, served: ServedTools) -> None:
        self._served = served
        self._entries: dict[tuple[int, str], dict[str, Any]] = {}

    def pinned(self) -> Published:
        """The record the listing in progress is for (the one served now outside a listing)."""
        record = _PINNED.get()
        return record if record is not None else self._served.current()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != LIST_TOOLS or ctx.request_id is None:
            return await call_next(ctx)
        record = self._served.current()
        key = (record.generation, ctx.protocol_version)
        cached = self._entries.get(key)
        if cached is not None and _plain(ctx):
            return _fresh(cached)
        token = _PINNED.set(record)
        try:
            result = await call_next(ctx)
        finally:
            _PINNED.reset(token)
        if isinstance(result, dict) and self._keeps(result, record) and _plain(ctx):
            entries = {k: v for k, v in self._entries.items() if k[0] == key[0]}
            entries[key] = _fresh(result)
            self._entries = entries
        return result

    def _keeps(self, result: dict[str, Any], record: Published) -> bool:
        """Whether ``result`` is the listing of the record served now (a reload may have landed meanwhile)."""
        if not isinstance(result.get("tools"), list):
            return False
        if self._served.current() is not record:
            return False
        meta = result.get("_meta")
        return isinstance(meta, dict) and meta.get(FINGERPRINT_META_KEY) == record.fingerprint
