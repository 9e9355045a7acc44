"""Bridges from the registry to agent frameworks and protocols (Strands, MCP).

What they share lives here: calling a registry tool from an event loop
without ever blocking that loop. The framework adapters themselves are in
submodules that import their framework (``loader.integrations.strands``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..types import AgentTool, ToolResult

if TYPE_CHECKING:
    from ..registry import RegistrySnapshot

__all__ = ["ainvoke_nonblocking", "runs_on_event_loop"]


def runs_on_event_loop(tool: AgentTool | None) -> bool:
    """Whether a tool's ``stream`` is safe to drive on an event loop (it never blocks it).

    Only tools that say so (``is_async`` is True: an ``async def`` body, or an
    adapter that hands sync work to a thread itself) run on the loop; every
    other tool, whose synchronous body would stall the loop and every other
    call with it, runs in a worker thread. An unknown name runs on the loop:
    the registry answers it with an error result without running anything.
    """
    if tool is None:
        return True
    return getattr(tool, "is_async", None) is True


async def ainvoke_nonblocking(
    snapshot: RegistrySnapshot,
    name: str,
    input: Any = None,
    *,
    tool_use_id: str | None = None,
    invocation_state: dict[str, Any] | None = None,
    agent: Any = None,
) -> ToolResult:
    """Call ``name`` through ``snapshot`` from async code, synchronous tools in a worker thread.

    The snapshot pins the tool version for the whole call, so a reload that
    lands mid-call never mixes two versions. A thread hop costs tens of
    microseconds, far below any real tool body, and keeps a blocking tool from
    delaying concurrent calls; cancelling the caller abandons the thread (the
    tool body runs to its end, its result is dropped).
    """
    if runs_on_event_loop(snapshot.get(name)):
        return await snapshot.ainvoke(
            name, input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
        )
    call = functools.partial(
        snapshot.invoke, name, input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
    )
    return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
