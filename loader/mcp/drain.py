"""Stopping a replica without dropping calls: the calls in flight, and how a drain ends them.

A rolling update stops every replica in turn. Cut off at once, a call in
flight ends as an HTTP 200 with an empty stream: the client gets neither a
result nor an error. So the server counts its ``tools/call`` s in flight; a
drain waits for them for a grace period, then stops what is still running
(a synchronous tool's thread is asked to stop, as at a call's deadline) and
answers it with an error result that says why. The transport refuses new
work meanwhile (``loader.mcp.transports``). A call that has ended still has
its answer to write: over HTTP the drain then waits, briefly, for the
exchanges still open, because ending the server ends every event stream
still open (the SSE library's shutdown) and would cut an answer half-written.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from ..results import error_result
from ..types import ToolResult

__all__ = [
    "FOLLOW_UP_SECONDS",
    "SHUTTING_DOWN",
    "CallsInFlight",
    "DrainReport",
    "ExchangesInFlight",
    "answered_while_draining",
    "stopped_by_shutdown",
]

logger = logging.getLogger(__name__)

SHUTTING_DOWN = "the server is shutting down"
"""The words every refusal and stopped call carries, so clients and logs can tell a shutdown apart."""

FOLLOW_UP_SECONDS = 1.0
"""After the last answer of a drain, how long a client gets to send the request that receives it."""

_READS_WHILE_DRAINING = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "ping"}
)
"""What a client asks to take in a result it is owed: the SDK lists tools after a call, to check
the result against the tool's output schema, before it hands the result over."""


def answered_while_draining(message: object) -> bool:
    """Whether a JSON-RPC message (or batch) is still answered during a drain.

    Listings and pings (nothing runs), notifications and responses to the
    server's own requests pass; ``initialize`` (a new session belongs on another
    replica), ``tools/call`` and everything else are refused.
    """
    messages = message if isinstance(message, list) else [message]
    for item in messages:
        if not isinstance(item, dict):
            return False
        method = item.get("method")
        if method is None or (isinstance(method, str) and method.startswith("notifications/")):
            continue  # a response, or a notification: nothing to run
        if method not in _READS_WHILE_DRAINING:
            return False
    return bool(messages)


def _now() -> float:
    return time.monotonic()


@dataclass(frozen=True, slots=True)
class DrainReport:
    """How a drain went: calls that finished within the grace, calls stopped when it ended, time taken."""

    finished: int
    stopped: int
    seconds: float


def stopped_by_shutdown(tool_use_id: str, grace: float) -> ToolResult:
    """The error result of a call still running when the shutdown grace ended."""
    return error_result(
        tool_use_id, f"Error: {SHUTTING_DOWN}: the call was stopped when its {grace:g} s grace ended"
    )


@dataclass(slots=True, eq=False)
class _Call:
    """One call in flight: the task it runs in, and a future done when it ends."""

    task: asyncio.Task[Any]
    ended: asyncio.Future[None]
    stopped: bool = False
    """The drain cancelled its task at the end of the grace."""


class CallsInFlight:
    """The calls running now, on one event loop; ``drain`` waits for them, then stops the rest.

    A call runs in its request's own task, not in one made for it: a task of
    its own would cost two turns of the event loop per call (its start, and the
    wake-up of the request awaiting it), about a tenth of a ``tools/call``.
    """

    def __init__(self) -> None:
        self._calls: set[_Call] = set()
        self.draining = False
        """A drain has begun (new calls are the transport's to refuse)."""

    def __len__(self) -> int:
        return len(self._calls)

    async def run(self, work: Coroutine[Any, Any, ToolResult]) -> ToolResult | None:
        """Await ``work`` as a call in flight; None when a drain stopped it at the end of its grace.

        A cancellation of the caller itself (a client's ``notifications/cancelled``)
        still cancels the call and propagates, as before.
        """
        task = asyncio.current_task()
        if task is None:  # not in a task (asyncio always runs coroutines in one): nothing to stop
            return await work
        call = _Call(task, task.get_loop().create_future())
        self._calls.add(call)
        try:
            result = await work
        except asyncio.CancelledError:
            # The drain's cancel is taken back; one from anyone else (as well) goes on up.
            if call.stopped and task.uncancel() == 0:
                return None
            raise
        finally:
            self._calls.discard(call)
            call.ended.set_result(None)
        if call.stopped:  # the tool caught the drain's cancel and answered: the request's task goes on
            task.uncancel()
        return result

    async def drain(self, grace: float) -> DrainReport:
        """Wait up to ``grace`` seconds for the calls in flight, then stop the ones still running."""
        self.draining = True
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + grace
        finished = 0
        while self._calls and (left := deadline - loop.time()) > 0:
            ends = {call.ended for call in self._calls}
            done, _ = await asyncio.wait(ends, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finished += len(done)
        running = set(self._calls)
        for call in running:
            call.stopped = True
            call.task.cancel()
        if running:
            await asyncio.wait({call.ended for call in running})
            logger.warning(
                "calls=<%d>, grace=<%g> | stopped calls still running at shutdown", len(running), grace
            )
        return DrainReport(finished=finished, stopped=len(running), seconds=loop.time() - started)


class ExchangesInFlight:
    """Requests still being answered (an HTTP transport's POSTs), so a drain can wait for their answers."""

    def __init__(self) -> None:
        self._open = 0
        self.last_change = 0.0
        """When (``time.monotonic()``) an exchange last began or ended."""
        # Made by the wait itself: an event binds to the first loop that waits on it, and a
        # server may be served by more than one loop in its life.
        self._idle: asyncio.Event | None = None

    def __len__(self) -> int:
        return self._open

    def opened(self) -> None:
        """An exchange began (on the event loop)."""
        self._open += 1
        self.last_change = _now()

    def closed(self) -> None:
        """An exchange ended, its answer written or its client gone."""
        self._open -= 1
        self.last_change = _now()
        if self._open == 0 and self._idle is not None:
            self._idle.set()

    async def settled(self, timeout: float, *, quiet: float = 0.0, since: float | None = None) -> int:
        """Wait up to ``timeout`` seconds for the open exchanges to end; how many are still open.

        With ``quiet``, also for ``quiet`` seconds without a new exchange once one has ended after
        ``since``: a client that has just received a result may still ask for what it needs to
        accept it (the tool list), and gets an answer rather than a closed connection.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (left := deadline - loop.time()) > 0:
            if self._open:
                self._idle = asyncio.Event()
                try:
                    await asyncio.wait_for(self._idle.wait(), left)
                except TimeoutError:
                    break
                finally:
                    self._idle = None
                continue
            if since is None or self.last_change < since:
                break  # nothing was answered during the drain: no client is owed a follow-up
            wait = min(self.last_change + quiet - _now(), deadline - loop.time())
            if wait <= 0:
                break
            await asyncio.sleep(wait)
        if self._open:
            logger.warning("exchanges=<%d> | answers still unwritten when the drain ended", self._open)
        return self._open
