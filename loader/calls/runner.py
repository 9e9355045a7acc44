"""Running one registry call under the call limits: on which thread, for how long, and what failure becomes.

* From async code (``ainvoke``: the MCP server, Strands agents; ``astream``:
  ``tool-loader call``) a synchronous tool runs on its own bounded lane of
  threads (``loader.calls.lanes``), so a stuck tool can only use up its own
  ``max_concurrent_per_tool`` threads, never the ones other tools need; the
  caller awaits the result with the deadline. Calls beyond the cap wait in
  line rather than fail at once: a model that fans out ten calls of one tool
  gets ten answers, and the same deadline bounds the wait (a call still in
  line when it passes is dropped unstarted, and its result says so). A call
  that passes its deadline, or whose caller is cancelled, while running is
  asked to stop (``CallLane.stop``): an endless Python loop ends at once and
  frees its slot; a call blocked in C keeps its slot until that call returns.
* An async tool (``AgentTool.is_async``) runs on the caller's event loop and
  is cancelled when its deadline passes or its caller is cancelled (an MCP
  client's ``notifications/cancelled``); it holds no thread, so no cap applies.
* From synchronous code (``invoke``) a synchronous tool runs right in the
  calling thread, with no deadline: that thread is the caller's to give, a
  deadline could only abandon it to a second thread, and the hand-over would
  cost every call many times its overhead (``bench/call_overhead.py``). An async
  tool called from ``invoke`` still gets its deadline (it is cancellable).

Whatever tool code raises becomes an error result (``loader.calls.containment``
says which exceptions are the caller's instead); a timeout is an error result
naming it (``ToolCallTimeout``). ``release`` is called exactly once per call,
when the tool's code has really finished (a call abandoned at its deadline
keeps counting as in flight until then, so its tool is not cleaned up under it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import math
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ..errors import ToolCallTimeout
from ..results import error_result, exception_result, is_tool_result_like, oversized_result, result_size
from ..types import AgentTool, ToolCall, ToolResult, ToolUse, run_sync
from . import tracing
from .containment import belongs_to_caller, failure_log_level, safe_name
from .lanes import CallLane, LaneMap

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_MAX_RESULT_BYTES", "CallLimits", "CallRunner", "safe_name"]

logger = logging.getLogger("loader.registry")

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds a call may take unless configured otherwise."""
DEFAULT_MAX_RESULT_BYTES = 32 * 1024 * 1024
"""The largest result handed on unless configured otherwise (a model's context holds far less)."""


@dataclass(frozen=True, slots=True)
class CallLimits:
    """How long one call may take, and how many calls of one tool may run at once.

    Attributes:
        timeout: Seconds a call may take, waiting for a free slot included;
            ``None`` or 0 means no limit. An overrunning call returns an error
            result naming the timeout.
        max_concurrent_per_tool: Threads one synchronous tool may occupy at
            once; further calls of it wait in line (within their timeout).
        max_result_bytes: Largest result handed on (``loader.results.result_size``);
            a larger one becomes an error result naming the limit and the size.
            ``None`` or 0 means no limit.

    Raises:
        ValueError: A negative or NaN timeout, or a cap below 1.
    """

    timeout: float | None = DEFAULT_CALL_TIMEOUT
    max_concurrent_per_tool: int = 8
    max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES

    def __post_init__(self) -> None:
        timeout = self.timeout
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
                raise ValueError(f"call timeout must be a number of seconds >= 0 (0: none), got {timeout!r}")
            if timeout == 0 or math.isinf(timeout):
                object.__setattr__(self, "timeout", None)
        cap = self.max_concurrent_per_tool
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ValueError(f"max_concurrent_per_tool must be an integer >= 1, got {cap!r}")
        size = self.max_result_bytes
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"max_result_bytes must be a number of bytes >= 0 (0: none), got {size!r}")
            if size == 0:
                object.__setattr__(self, "max_result_bytes", None)


class CallRunner:
    """Runs calls under one ``CallLimits``; owns the per-tool lanes of synchronous tools."""

    def __init__(self, limits: CallLimits | None = None) -> None:
        self.limits = limits if limits is not None else CallLimits()
        self._lanes = LaneMap(self.limits.max_concurrent_per_tool)

    def run(
        self, tool: AgentTool, call: ToolCall, release: Callable[[], None], *, generation: int | None = None
    ) -> ToolResult:
        """Run a call from synchronous code and return its result; never raises for the tool's fault.

        A synchronous tool runs right here, in the caller's thread, with no
        deadline (see the module docstring); an async one gets its deadline.
        ``generation`` (the registry's, for traces) names the snapshot the tool came from.
        """
        trace = tracing.start_call(tool, call.tool_use_id, generation)
        with trace or contextlib.nullcontext():
            timeout = self.limits.timeout
            try:
                if tool.is_async and timeout is not None and not tool.enforces_call_timeout:
                    result: ToolResult = run_sync(functools.partial(self._on_loop, tool, call, timeout))
                else:
                    result = _invoke(tool, call)
            finally:
                release()
            result = self._sized(result, tool)
        if trace is not None:
            trace.end(result)
        return result

    async def arun(
        self,
        tool: AgentTool,
        call: ToolCall,
        release: Callable[[], None],
        arelease: Callable[[], Awaitable[None]],
        *,
        generation: int | None = None,
    ) -> ToolResult:
        """Run a call from async code; async tools on this loop, sync tools on their lane."""
        trace = tracing.start_call(tool, call.tool_use_id, generation)
        with trace or contextlib.nullcontext():
            if tool.is_async:
                try:
                    result = self._sized(await self._on_loop(tool, call, self.limits.timeout), tool)
                finally:
                    await arelease()
            else:
                result = await self._on_lane(tool, call, release)
        if trace is not None:
            trace.end(result)
        return result

    async def _on_lane(self, tool: AgentTool, call: ToolCall, release: Callable[[], None]) -> ToolResult:
        """A synchronous tool's call on its lane, awaited here with the deadline."""
        timeout = self.limits.timeout
        lane = self._lanes.lane_for(tool, safe_name(tool))
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[ToolResult | None] = loop.create_future()  # None: the deadline came first
        # The lane thread runs in this context (as asyncio.to_thread would): the tool sees the caller's trace.
        context = contextvars.copy_context()

        release_once = _once(release)

        def run() -> None:
            try:
                result = context.run(_invoke, tool, call)
            finally:
                release_once()  # before the answer, as a sync call: the caller sees the cleanup done
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for the answer
                loop.call_soon_threadsafe(_settle, answer, result)

        future = lane.submit(run)
        future.add_done_callback(lambda _: release_once())  # a call given up before it started
        timer = None if timeout is None else loop.call_later(timeout, _settle, answer, None)
        try:
            result = await answer
        except BaseException:  # the caller was cancelled (an MCP client's notifications/cancelled)
            _give_up(lane, future)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if result is None:
            assert timeout is not None
            return self._timed_out(tool, call, timeout, started=_give_up(lane, future))
        return self._sized(result, tool)

    async def astream(
        self,
        tool: AgentTool,
        tool_use: ToolUse,
        invocation_state: dict[str, Any],
        release: Callable[[], None] = lambda: None,
        *,
        generation: int | None = None,
    ) -> AsyncIterator[Any]:
        """Drive ``tool.stream`` under the limits, yielding its events as they come; the last is a result.

        For callers that show progress (``tool-loader call``): an async tool's
        stream runs on this loop; a synchronous tool's runs on its lane (on a
        loop of that thread) and its events are handed over as they come, so
        this loop, and a Ctrl-C that cancels it, never wait on tool code.
        Whatever escapes the stream ends it with an error result; past the
        deadline it ends with the timeout's error result. ``release`` runs once,
        when the tool's code has really finished.
        """
        tool_use_id = str(tool_use.get("toolUseId") or "")
        trace = tracing.start_call(tool, tool_use_id, generation, attach=False)
        timeout = self.limits.timeout
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        last: Any = None
        with trace or contextlib.nullcontext():
            source, lane, future = self._event_source(tool, tool_use, invocation_state, release, trace)
            settled = False  # the stream ended on its own (its thread needs no stop)
            try:
                while not settled:
                    try:
                        async with asyncio.timeout_at(deadline) as scope:
                            kind, value = await anext(source)
                    except TimeoutError:
                        if not scope.expired():
                            raise
                        assert timeout is not None
                        settled = True
                        started = _give_up(lane, future)
                        if trace is not None:
                            trace.error_type = tracing.TIMEOUT
                        call = ToolCall(tool_use.get("input"), tool_use_id, invocation_state)
                        last = self._timed_out(tool, call, timeout, started=started)
                        yield last
                        continue
                    settled = kind in ("end", "error")
                    if kind == "error":
                        if trace is not None:
                            trace.raised(value)
                        last = _failed(safe_name(tool), tool_use_id, value)
                        yield last
                    elif kind != "end":
                        last = self._sized(value, tool) if is_tool_result_like(value) else value
                        yield last
            finally:
                if not settled:
                    _give_up(lane, future)  # the consumer left early, or its task was cancelled
                await source.aclose()
                if future is None:
                    release()
        if trace is not None:
            trace.end(last if is_tool_result_like(last) else None)

    def _event_source(
        self,
        tool: AgentTool,
        tool_use: ToolUse,
        invocation_state: dict[str, Any],
        release: Callable[[], None],
        trace: tracing.CallTrace | None,
    ) -> tuple[AsyncGenerator[tuple[str, Any], None], CallLane | None, Future[None] | None]:
        """The call's events: an async tool's on this loop; a sync tool's pumped from its lane thread
        (with the lane and the thread's future, which releases the call's slot when it ends)."""
        if tool.is_async:
            return _events_on_loop(tool, tool_use, invocation_state, trace), None, None
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        lane = self._lanes.lane_for(tool, safe_name(tool))
        context = contextvars.copy_context() if trace is None else trace.context()
        future = lane.submit(
            functools.partial(context.run, _pump_on_thread, tool, tool_use, invocation_state, loop, queue)
        )
        future.add_done_callback(lambda _: release())
        return _drain(queue), lane, future

    async def _on_loop(self, tool: AgentTool, call: ToolCall, timeout: float | None) -> ToolResult:
        try:
            async with asyncio.timeout(timeout):
                return await _ainvoke(tool, call)
        except TimeoutError:
            assert timeout is not None
            return self._timed_out(tool, call, timeout, started=True)

    def _sized(self, result: ToolResult, tool: AgentTool) -> ToolResult:
        """``result``, or the error naming the limit when it is larger than ``max_result_bytes``."""
        limit = self.limits.max_result_bytes
        if limit is None:
            return result
        size = result_size(result, limit)
        if size is None:
            return result
        name = safe_name(tool)
        logger.warning(
            "tool_name=<%s>, size=<%d>, limit=<%d> | result over the size limit", name, size, limit
        )
        return oversized_result(str(result.get("toolUseId") or ""), name, size, limit)

    def _timed_out(self, tool: AgentTool, call: ToolCall, timeout: float, *, started: bool) -> ToolResult:
        tracing.note_timeout()
        name = safe_name(tool)
        exc = ToolCallTimeout(
            name, timeout, started=started, max_concurrent=self.limits.max_concurrent_per_tool
        )
        logger.warning("tool_name=<%s>, timeout=<%g>, started=<%s> | call timed out", name, timeout, started)
        return exception_result(call.tool_use_id, exc)


async def _events_on_loop(
    tool: AgentTool, tool_use: ToolUse, invocation_state: dict[str, Any], trace: tracing.CallTrace | None
) -> AsyncGenerator[tuple[str, Any], None]:
    """An async tool's stream events as ``("event", e)``, then ``("error", exc)`` or ``("end", None)``.

    Each step of the tool's stream runs with the call's span current (a generator runs in its consumer's
    context, so the span is made current around each step, never across a ``yield``).
    """
    events = tool.stream(tool_use, invocation_state)
    current = trace.current if trace is not None else contextlib.nullcontext
    try:
        while True:
            try:
                with current():
                    event = await anext(events)
            except StopAsyncIteration:
                break
            except BaseException as exc:
                if belongs_to_caller(exc):
                    raise
                yield "error", exc
                return
            yield "event", event
    finally:
        await events.aclose()
    yield "end", None


def _pump_on_thread(
    tool: AgentTool,
    tool_use: ToolUse,
    invocation_state: dict[str, Any],
    loop: asyncio.AbstractEventLoop,
    queue: asyncio.Queue[tuple[str, Any]],
) -> None:
    """Run a synchronous tool's stream on this lane thread, handing each event to the caller's loop."""

    def put(kind: str, value: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
        except RuntimeError:  # the caller's loop is gone: nobody is listening any more
            pass

    async def pump() -> None:
        async for event in tool.stream(tool_use, invocation_state):
            put("event", event)

    try:
        asyncio.run(pump())
    except BaseException as exc:  # on a lane thread, always the tool's own
        put("error", exc)
    else:
        put("end", None)


async def _drain(queue: asyncio.Queue[tuple[str, Any]]) -> AsyncGenerator[tuple[str, Any], None]:
    while True:
        yield await queue.get()


def _once(action: Callable[[], None]) -> Callable[[], None]:
    """``action``, run by the first of its callers only."""
    pending = [True]
    lock = threading.Lock()

    def run() -> None:
        with lock:
            first, pending[0] = pending[0], False
        if first:
            action()

    return run


def _settle(answer: asyncio.Future[ToolResult | None], result: ToolResult | None) -> None:
    """The first of a sync call's result and its deadline (None) answers its caller."""
    if not answer.done():
        answer.set_result(result)


def _give_up(lane: CallLane | None, future: Future[Any] | None) -> bool:
    """Drop a call nobody waits for any more: unstarted, it never runs; running, it is asked to stop.

    Returns whether the call had started. With no lane (an async tool's stream runs on the
    caller's loop) there is nothing to stop, and it had.
    """
    if lane is None or future is None:
        return True
    if future.cancel() or future.cancelled():
        return False
    lane.stop(future)
    return True


def _invoke(tool: AgentTool, call: ToolCall) -> ToolResult:
    name = safe_name(tool)
    try:
        result = tool.invoke(
            call.input, tool_use_id=call.tool_use_id, invocation_state=call.invocation_state, agent=call.agent
        )
    except BaseException as exc:
        return _failed(name, call.tool_use_id, exc)
    return _checked(result, name, call.tool_use_id)


async def _ainvoke(tool: AgentTool, call: ToolCall) -> ToolResult:
    name = safe_name(tool)
    try:
        result = await tool.ainvoke(
            call.input, tool_use_id=call.tool_use_id, invocation_state=call.invocation_state, agent=call.agent
        )
    except BaseException as exc:
        return _failed(name, call.tool_use_id, exc)
    return _checked(result, name, call.tool_use_id)


def _checked(result: Any, name: str, tool_use_id: str) -> ToolResult:
    if is_tool_result_like(result):
        checked = dict(result)
        checked["toolUseId"] = tool_use_id
        return checked  # type: ignore[return-value]
    kind = type(result).__name__
    logger.error("tool_name=<%s>, result_type=<%s> | tool returned no ToolResult", name, kind)
    return error_result(tool_use_id, f"Error: tool {name} returned {kind}, not a ToolResult")


def _failed(name: str, tool_use_id: str, exc: BaseException) -> ToolResult:
    if belongs_to_caller(exc):
        raise exc
    tracing.note_exception(exc)
    logger.log(
        failure_log_level(exc), "tool_name=<%s> | tool call raised %s", name, type(exc).__name__, exc_info=exc
    )
    return exception_result(tool_use_id, exc)
