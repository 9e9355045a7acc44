"""Bridges from the registry to agent frameworks and protocols (Strands, MCP).

What they share lives here: calling a registry tool from an event loop
without ever blocking that loop. The framework adapters themselves are in
submodules that import their framework (``loader.integrations.strands``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..types import AgentTool, ToolResult

if TYPE_CHECKING:
    from ..registry.snapshot import RegistrySnapshot

__all__ = ["ainvoke_nonblocking", "runs_on_event_loop"]


def runs_on_event_loop(tool: AgentTool | None) -> bool:
    """Whether the registry drives a tool on the caller's event loop (``is_async``), not on a thread.

    An unknown name counts as on the loop: the registry answers it with an
    error result without running anything.
    """
    return tool is None or tool.is_async


async def ainvoke_nonblocking(
    snapshot: RegistrySnapshot,
    name: str,
    input: Any = None,
    *,
    tool_use_id: str | None = None,
    invocation_state: dict[str, Any] | None = None,
    agent: Any = None,
) -> ToolResult:
    """Call ``name`` through ``snapshot`` from async code without ever blocking the loop.

    The snapshot pins the tool version for the whole call, so a reload that
    lands mid-call never mixes two versions. The registry runs synchronous
    tools on their own bounded lane of threads and async tools on this loop,
    under its ``CallLimits`` (see ``loader.calls.runner``); cancelling the caller
    cancels an async tool, drops a synchronous call that has not started and
    asks a running one to stop.
    """
    return await snapshot.ainvoke(
        name, input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
    )
