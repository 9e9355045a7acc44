"""``discovery="search"`` for the framework adapters: ``search_tools`` and ``call_tool``, not every tool.

``search_view(registry)`` is a registry snapshot holding just those two tools:
an adapter that offers a snapshot's tools and runs their calls through it
offers and runs this one unchanged. Both answer from the registry's snapshot
at the time of the call (``call_tool`` checks and runs the tool in one
snapshot), so a model finds and calls a tool saved after its step began.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ..registry.snapshot import RegistryEntry, RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..results import error_result
from ..tools.function_tool import FunctionTool
from ..types import ToolResult, new_tool_use_id

__all__ = ["DiscoveryMode", "search_view"]

DiscoveryMode: TypeAlias = Literal["all", "search"]
"""What an adapter offers a model: every tool, or ``search_tools`` and ``call_tool``."""

MAX_LIMIT = 50


def _search(registry: ToolRegistry) -> FunctionTool[Any, Any]:
    def search_tools(query: str, limit: int = 5) -> dict[str, Any]:
        """Find tools by what they do; call one with call_tool.

        Args:
            query: What you want to do, in a few words.
            limit: How many tools to return (1 to 50).
        """
        hits = registry.search_tools(query, max(1, min(limit, MAX_LIMIT)))
        return {"tools": [hit.to_json() for hit in hits]}

    return FunctionTool(search_tools)


def _call(registry: ToolRegistry) -> FunctionTool[Any, Any]:
    def call_tool(name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool found with search_tools, by name, with arguments matching its input schema.

        Args:
            name: The tool's name, as search_tools gave it.
            arguments: The tool's arguments.
        """
        snapshot = registry.snapshot()
        if name not in snapshot:
            hits = snapshot.search_tools(name.replace("_", " ").replace("-", " "), 5)
            candidates = [{"name": h.name, "inputSchema": h.input_schema} for h in hits]
            text = f"Unknown tool: {name}. Search again, or call one of these candidates."
            return error_result(new_tool_use_id(), text, json_content=candidates)
        return snapshot.invoke(name, arguments or {})

    return FunctionTool(call_tool)


def search_view(registry: ToolRegistry) -> RegistrySnapshot:
    """A snapshot of ``search_tools`` and ``call_tool``, both answering from ``registry`` as it is then."""
    entries = [
        RegistryEntry("search_tools", _search(registry), None),
        RegistryEntry("call_tool", _call(registry), None),
    ]
    return RegistrySnapshot(1, entries)
