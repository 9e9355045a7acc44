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
from collections.abc import Awaitable, Iterable
from typing import Any, Generic, Protocol, TypeVar

from .results import error_result, exception_result, is_tool_result_like
from .types import AgentTool, ToolResult, run_sync

__all__ = ["Lifecycle", "acleanup", "arun_counted", "cleanup", "run_counted", "safe_name"]

logger = logging.getLogger("loader.registry")


class _Snapshot(Protocol):
    def get(self, name: str) -> AgentTool | None: ...


S = TypeVar("S", bound=_Snapshot)


def safe_name(tool: AgentTool) -> str:
    """The tool's name for a log line, even when its ``tool_name`` raises."""
    try:
        return tool.tool_name
    except Exception:
        return repr(type(tool).__name__)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def cleanup(tool: AgentTool) -> None:
    """Run ``tool.cleanup()`` to completion from synchronous code; failures are logged only."""
    try:
        outcome = tool.cleanup()
        if inspect.isawaitable(outcome):
            run_sync(lambda: _await(outcome))
        logger.debug("tool_name=<%s> | cleaned up", safe_name(tool))
    except Exception:
        logger.exception("tool_name=<%s> | cleanup failed", safe_name(tool))


async def acleanup(tool: AgentTool) -> None:
    """Run ``tool.cleanup()`` on the caller's event loop; failures are logged only."""
    try:
        outcome = tool.cleanup()
        if inspect.isawaitable(outcome):
            await outcome
        logger.debug("tool_name=<%s> | cleaned up", safe_name(tool))
    except Exception:
        logger.exception("tool_name=<%s> | cleanup failed", safe_name(tool))


class Lifecycle(Generic[S]):
    """The current snapshot, in-flight call counts and tools waiting for their cleanup.

    One small lock guards all three, so a registry call either starts before a
    swap (and delays the old tool's cleanup) or sees the new snapshot.
    """

    def __init__(self, initial: S) -> None:
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


def _checked(result: Any, name: str, tool_use_id: str) -> ToolResult:
    if is_tool_result_like(result):
        checked = dict(result)
        checked["toolUseId"] = tool_use_id
        return checked  # type: ignore[return-value]
    kind = type(result).__name__
    logger.error("tool_name=<%s>, result_type=<%s> | tool returned no ToolResult", name, kind)
    return error_result(tool_use_id, f"Error: tool {name} returned {kind}, not a ToolResult")


def _failed(name: str, tool_use_id: str, exc: Exception) -> ToolResult:
    logger.error("tool_name=<%s> | tool call raised %s", name, type(exc).__name__, exc_info=exc)
    return exception_result(tool_use_id, exc)


def run_counted(
    tool: AgentTool,
    lifecycle: Lifecycle[Any] | None,
    input: Any,
    tool_use_id: str,
    invocation_state: dict[str, Any] | None,
    agent: Any,
) -> ToolResult:
    """Call an already-counted tool synchronously; the last caller out runs a pending cleanup."""
    name = safe_name(tool)
    try:
        result = tool.invoke(input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent)
        return _checked(result, name, tool_use_id)
    except Exception as exc:
        return _failed(name, tool_use_id, exc)
    finally:
        if lifecycle is not None and lifecycle.exit(tool):
            cleanup(tool)


async def arun_counted(
    tool: AgentTool,
    lifecycle: Lifecycle[Any] | None,
    input: Any,
    tool_use_id: str,
    invocation_state: dict[str, Any] | None,
    agent: Any,
) -> ToolResult:
    """Call an already-counted tool on the caller's loop; the last caller out runs a pending cleanup."""
    name = safe_name(tool)
    try:
        result = await tool.ainvoke(
            input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
        )
        return _checked(result, name, tool_use_id)
    except Exception as exc:
        return _failed(name, tool_use_id, exc)
    finally:
        if lifecycle is not None and lifecycle.exit(tool):
            await acleanup(tool)
