"""A tool that receives the ``ToolContext``: the request and the caller's invocation state."""

from __future__ import annotations

from typing import Any

from loader import ToolContext, tool


@tool(context=True, category="debug", tags=["context"])
def call_info(note: str, tool_context: ToolContext) -> dict[str, Any]:
    """Echo a note together with what the framework knows about this call.

    Useful to check how an agent calls tools: the tool use id, the agent (if
    any) and the keys of the invocation state it passed along.

    Args:
        note: Any text; it is echoed back unchanged.
    """
    agent = tool_context.agent
    return {
        "note": note,
        "tool_use_id": tool_context.tool_use["toolUseId"],
        "tool_name": tool_context.tool_use["name"],
        "agent": None if agent is None else getattr(agent, "name", type(agent).__name__),
        "invocation_state_keys": sorted(tool_context.invocation_state),
    }
