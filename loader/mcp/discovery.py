"""``serve --discovery search|hybrid``: a small, steady listing of ``search_tools`` and ``call_tool``.

A folder of thousands of tools is more than a client can list or a model can
choose from. In search mode ``tools/list`` holds two tools whatever the folder
holds (in ``hybrid`` also the tools marked ``@tool(always_load=True)``); the
model finds tools with ``search_tools`` and calls them with ``call_tool``,
both answered from the same registry snapshot, so a tool saved after the
client listed is found and callable without a new listing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import mcp_types as types

from ..registry.snapshot import RegistrySnapshot
from ..results import error_result, success_result
from ..types import AgentTool, ToolResult, ToolSpec, new_tool_use_id
from .wire import EXPECTED_DIGEST_META_KEY, to_mcp_tool

__all__ = [
    "ALWAYS_LOAD_META_KEY",
    "CALL_TOOL",
    "SEARCH_HINT_META_KEY",
    "SEARCH_TOOLS",
    "Discovery",
    "DiscoveryFront",
    "hint_meta",
]

ALWAYS_LOAD_META_KEY = "anthropic/alwaysLoad"
SEARCH_HINT_META_KEY = "anthropic/searchHint"
SEARCH_TOOLS = "search_tools"
CALL_TOOL = "call_tool"
MAX_LIMIT = 50


class Discovery(StrEnum):
    """How ``tools/list`` presents the folder."""

    ALL = "all"
    """Every tool (the default)."""
    SEARCH = "search"
    """``search_tools`` and ``call_tool`` only."""
    HYBRID = "hybrid"
    """``search_tools``, ``call_tool`` and the tools marked ``always_load``."""


_SEARCH_SPEC: ToolSpec = {
    "name": SEARCH_TOOLS,
    "description": (
        "Find tools by what they do. Returns the best matches, each with its name, description, "
        "input schema and digest; call one with call_tool."
    ),
    "inputSchema": {
        "json": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do, in a few words."},
                "limit": {
                    "type": "integer",
                    "default": 5,
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "How many tools to return.",
                },
            },
            "required": ["query"],
        }
    },
}

_CALL_SPEC: ToolSpec = {
    "name": CALL_TOOL,
    "description": (
        "Call a tool found with search_tools, by name, with arguments matching its input schema. "
        "Pass the digest search_tools gave to be told if the tool changed since."
    ),
    "inputSchema": {
        "json": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments."},
                "digest": {"type": "string", "description": "The digest search_tools gave (optional)."},
            },
            "required": ["name"],
        }
    },
}


def hint_meta(tool: AgentTool) -> dict[str, Any]:
    """The ``_meta`` hints clients read from a tool's full-listing entry (none when it sets none)."""
    meta: dict[str, Any] = {}
    if tool.always_load:
        meta[ALWAYS_LOAD_META_KEY] = True
    if tool.search_hint:
        meta[SEARCH_HINT_META_KEY] = tool.search_hint
    return meta


def _candidates(snapshot: RegistrySnapshot, name: str) -> list[dict[str, Any]]:
    """The tools a mistaken name most likely meant (its words as a query)."""
    return [hit.to_json() for hit in snapshot.search_tools(name.replace("_", " ").replace("-", " "), 5)]


@dataclass(frozen=True, slots=True)
class Routed:
    """A ``tools/call`` after discovery: answered here (``answer``), or to run as ``params``."""

    params: types.CallToolRequestParams
    answer: ToolResult | None = None


class DiscoveryFront:
    """The search-mode listing and the answers of ``search_tools`` and ``call_tool``."""

    def __init__(self, mode: Discovery) -> None:
        self.mode = mode
        self._listing: tuple[tuple[int, ...], str, list[types.Tool]] | None = None
        self._announced: tuple[int, ...] | None = None

    @property
    def active(self) -> bool:
        """Whether the listing is the search front rather than every tool."""
        return self.mode is not Discovery.ALL

    def _chosen(self, snapshot: RegistrySnapshot) -> tuple[AgentTool, ...]:
        """The registry tools this listing holds: the always-load ones in ``hybrid``, else none."""
        return tuple(t for t in snapshot.tools() if t.always_load) if self.mode is Discovery.HYBRID else ()

    def listing_changed(self, snapshot: RegistrySnapshot) -> bool:
        """Whether ``snapshot`` changes the listing since the last time this was asked (always in ``all``).

        A search-mode listing changes only with the always-load tools, so a
        reload of any other tool sends clients no ``tools/list_changed``.
        """
        if not self.active:
            return True
        key = tuple(id(t) for t in self._chosen(snapshot))
        changed, self._announced = key != self._announced, key
        return changed

    def listing(self, snapshot: RegistrySnapshot, protocol_version: str) -> list[types.Tool]:
        """The two tools (and in ``hybrid`` the always-load ones); the same objects while those stay."""
        chosen = self._chosen(snapshot)
        key = tuple(id(t) for t in chosen)
        kept = self._listing
        if kept is not None and kept[0] == key and kept[1] == protocol_version:
            return kept[2]
        tools = [to_mcp_tool(spec, protocol_version=protocol_version) for spec in (_SEARCH_SPEC, _CALL_SPEC)]
        tools += [
            to_mcp_tool(t.tool_spec, protocol_version=protocol_version, meta=hint_meta(t)) for t in chosen
        ]
        self._listing = (key, protocol_version, tools)
        return tools

    def route(self, snapshot: RegistrySnapshot, params: types.CallToolRequestParams) -> Routed:
        """Answer ``search_tools``, unwrap ``call_tool`` to the call it names; other calls pass."""
        if not self.active or params.name not in (SEARCH_TOOLS, CALL_TOOL):
            return Routed(params)
        arguments = params.arguments or {}
        if params.name == SEARCH_TOOLS:
            return Routed(params, self._search(snapshot, arguments))
        name, inner = arguments.get("name"), arguments.get("arguments", {})
        tool_use_id = new_tool_use_id()
        if not isinstance(name, str) or not isinstance(inner, dict):
            message = "call_tool needs name (a string) and arguments (an object)"
            return Routed(params, error_result(tool_use_id, message))
        if name not in snapshot:
            text = f"Unknown tool: {name}. Search again, or call one of these candidates."
            return Routed(params, error_result(tool_use_id, text, json_content=_candidates(snapshot, name)))
        meta = dict(params.meta or {})
        digest = arguments.get("digest")
        if digest is not None:
            meta[EXPECTED_DIGEST_META_KEY] = digest
        update: dict[str, Any] = {"name": name, "arguments": inner, "meta": meta or None}
        return Routed(params.model_copy(update=update))

    def _search(self, snapshot: RegistrySnapshot, arguments: dict[str, Any]) -> ToolResult:
        query, limit = arguments.get("query"), arguments.get("limit", 5)
        tool_use_id = new_tool_use_id()
        if not isinstance(query, str) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            message = f"search_tools needs query (a string) and limit (an integer from 1 to {MAX_LIMIT})"
            return error_result(tool_use_id, message)
        hits = [hit.to_json() for hit in snapshot.search_tools(query, limit)]
        return success_result(tool_use_id, [{"json": {"tools": hits}}])
