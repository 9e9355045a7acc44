"""In-flight call counting, and the cleanup of tools once their last call has returned.

A tool that leaves the registry (replaced or removed) may still be running
calls that started before the swap. ``Lifecycle`` counts calls per tool object
and keeps a retired tool until its count drops to zero; whichever side finishes
last (the swap, or the last call out) runs ``cleanup()``, exactly once.

Records are logged under ``loader.registry``: this is the registry's machinery,
and operators filter by that name.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import Any, Generic, Protocol, TypeVar

from ..calls.containment import belongs_to_caller
from ..calls.runner import CallRunner, safe_name
from ..types import AgentTool, ToolCall, ToolResult, ToolUse, run_sync

__all__ = ["Lifecycle", "acleanup", "arun_counted", "astream_counted", "cleanup", "run_counted", "safe_name"]

logger = logging.getLogger("loader.registry")


class _Snapshot(Protocol):
    def get(self, name: str) -> AgentTool | None: ...


S = TypeVar("S", bound=_Snapshot)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def cleanup(tool: AgentTool) -> None:
    """Run ``tool.cleanup()`` to completion from synchronous code; failures are logged only."""
    try:
        outcome = tool.cleanup()
        if inspect.isawaitable(outcome):
            run_sync(lambda: _await(outcome))
        logger.debug("tool_name=<%s> | cleaned up", safe_name(tool))
    except BaseException as exc:  # a tool's cleanup may not stop the host either
        if belongs_to_caller(exc):
            raise
        logger.exception("tool_name=<%s> | cleanup failed", safe_name(tool))


async def acleanup(tool: AgentTool) -> None:
    """Run ``tool.cleanup()`` on the caller's event loop; failures are logged only."""
    try:
        outcome = tool.cleanup()
        if inspect.isawaitable(outcome):
            await outcome
        logger.debug("tool_name=<%s> | cleaned up", safe_name(tool))
    except BaseException as exc:  # a tool's cleanup may not stop the host either
        if belongs_to_caller(exc):
            raise
        logger.exception("tool_name=<%s> | cleanup failed", safe_name(tool))


class Lifecycle(Generic[S]):
    """The current snapshot, in-flight call counts, tools waiting for their cleanup, and the call runner.

    Snapshots reach the registry's ``CallRunner`` (its limits and lanes) through
    the lifecycle they share, so a call through a pinned snapshot is bounded too.

    One small lock guards all three, so a registry call either starts before a
    swap (and delays the old tool's cleanup) or sees the new snapshot.
    """

    def __init__(self, initial: S, runner: CallRunner | None = None) -> None:
        self.runner = runner if runner is not None else CallRunner()
        self.lock = threading.Lock()
        self.current: S = initial
        self._calls: dict[int, int] = {}
        self._retired: dict[int, AgentTool] = {}

    def acquire(self, name: str) -> tuple[S, AgentTool | None]:
        """The current snapshot and the named tool in it, counted as in flight."""
        with self.lock:
            snapshot = self.current
            tool = snapshot.get(name)
            if tool is not None:
                self._calls[id(tool)] = self._calls.get(id(tool), 0) + 1
        return snapshot, tool

    def enter(self, tool: AgentTool) -> None:
        """Count a call through a pinned snapshot as in flight."""
        with self.lock:
            self._calls[id(tool)] = self._calls.get(id(tool), 0) + 1

    def exit(self, tool: AgentTool) -> bool:
        """Count a call as finished; True when the caller must now run the tool's cleanup."""
        with self.lock:
            remaining = self._calls[id(tool)] - 1
            if remaining:
                self._calls[id(tool)] = remaining
                return False
            del self._calls[id(tool)]
            return self._retired.pop(id(tool), None) is not None

    def swap(
        self, snapshot: S, retired: Iterable[AgentTool], revived: Iterable[AgentTool]
    ) -> list[AgentTool]:
        """Install ``snapshot``; return the retired tools with no call in flight (clean them now)."""
        ready: list[AgentTool] = []
        with self.lock:
            self.current = snapshot
            for tool in revived:
                self._retired.pop(id(tool), None)
            for tool in retired:
                if id(tool) in self._calls:
                    self._retired[id(tool)] = tool
                else:
                    ready.append(tool)
        return ready


def run_counted(
    tool: AgentTool, lifecycle: Lifecycle[Any] | None, call: ToolCall, *, generation: int | None = None
) -> ToolResult:
    """Call an already-counted tool synchronously; the last caller out runs a pending cleanup.

    ``generation`` is that of the snapshot the tool was taken from (its call's span names it).
    """

    def release() -> None:
        if lifecycle is not None and lifecycle.exit(tool):
            cleanup(tool)

    return _runner_of(lifecycle).run(tool, call, release, generation=generation)


async def arun_counted(
    tool: AgentTool, lifecycle: Lifecycle[Any] | None, call: ToolCall, *, generation: int | None = None
) -> ToolResult:
    """Call an already-counted tool from async code; the last caller out runs a pending cleanup.

    An async cleanup runs on the caller's loop when the tool ran there, else on
    the thread the synchronous tool ran on.
    """

    def release() -> None:
        if lifecycle is not None and lifecycle.exit(tool):
            cleanup(tool)

    async def arelease() -> None:
        if lifecycle is not None and lifecycle.exit(tool):
            await acleanup(tool)

    return await _runner_of(lifecycle).arun(tool, call, release, arelease, generation=generation)


async def astream_counted(
    tool: AgentTool,
    lifecycle: Lifecycle[Any] | None,
    input: Any,
    tool_use_id: str,
    invocation_state: dict[str, Any] | None,
    *,
    generation: int | None = None,
) -> AsyncIterator[Any]:
    """Stream a pinned tool's events under the call limits; the last event is its result.

    The call counts as in flight from the first event asked for (a stream never
    started never counted) until the tool's code has finished.
    """
    if lifecycle is not None:
        lifecycle.enter(tool)

    def release() -> None:
        if lifecycle is not None and lifecycle.exit(tool):
            cleanup(tool)

    tool_use: ToolUse = {"toolUseId": tool_use_id, "name": tool.tool_name, "input": input}
    runner = _runner_of(lifecycle)
    async for event in runner.astream(tool, tool_use, invocation_state or {}, release, generation=generation):
        yield event


_DEFAULT_RUNNER = CallRunner()


def _runner_of(lifecycle: Lifecycle[Any] | None) -> CallRunner:
    """The registry's runner; a snapshot made on its own uses the default limits."""
    return lifecycle.runner if lifecycle is not None else _DEFAULT_RUNNER
