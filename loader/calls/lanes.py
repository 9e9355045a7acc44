"""Per-tool worker threads for synchronous tool bodies: one bounded lane per tool.

A shared thread pool lets one runaway tool take every thread: forty calls of
a tool that never returns, and no other synchronous tool is ever answered
again. So each tool object gets its own lane with at most ``workers`` threads;
calls beyond that wait in the lane's queue (their caller's deadline bounds the
wait, and cancels them unstarted). A stuck tool can only exhaust its own lane.

Lane threads are daemons: a call that never returns cannot be stopped from
outside, and must not keep the process from exiting either (the standard
``ThreadPoolExecutor`` joins its threads at exit). Idle threads end after
``idle_seconds``, and a lane lives only as long as its tool object, so a tool
replaced by a reload takes its lane (and, once they return, its threads) along.
"""

from __future__ import annotations

import ctypes
import logging
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from .containment import CallAbandoned

__all__ = ["CallAbandoned", "CallLane", "LaneMap"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class CallLane:
    """At most ``workers`` daemon threads running submitted calls in order of arrival."""

    def __init__(
        self, name: str, workers: int, *, idle_seconds: float = 10.0, thread_name: str | None = None
    ) -> None:
        if workers < 1:
            raise ValueError(f"a lane needs at least one worker, got {workers}")
        self.name = name
        self._thread_name = thread_name or f"tool-loader-call[{name}]"
        self.workers = workers
        self._idle_seconds = idle_seconds
        self._jobs: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._threads = 0
        self._idle = 0
        self._running: dict[Future[Any], int] = {}  # call -> the thread running it
        self._stopping: set[Future[Any]] = set()  # calls asked to stop, whose thread has not noticed yet

    @property
    def threads(self) -> int:
        """How many threads the lane holds right now (running or idle)."""
        return self._threads

    def submit(self, function: Callable[[], T]) -> Future[T]:
        """Queue ``function``; a thread runs it as soon as one of the lane's slots is free.

        Cancelling the returned future before it starts removes the call for good.
        """
        future: Future[T] = Future()
        with self._cond:
            self._jobs.append((future, function))
            spawn = len(self._jobs) > self._idle and self._threads < self.workers
            if spawn:
                self._threads += 1
            self._cond.notify()
        if spawn:
            thread = threading.Thread(target=self._serve, name=self._thread_name, daemon=True)
            thread.start()
        return future

    def _next(self) -> tuple[Future[Any], Callable[[], Any]] | None:
        """The next job, or None once the thread has been idle for ``idle_seconds`` (it then ends)."""
        with self._cond:
            self._idle += 1
            try:
                while not self._jobs:
                    if not self._cond.wait(self._idle_seconds) and not self._jobs:
                        self._threads -= 1
                        return None
                return self._jobs.popleft()
            finally:
                self._idle -= 1

    def stop(self, future: Future[Any]) -> bool:
        """Ask the thread running ``future``'s call to stop; False if the call is not running.

        Raises ``CallAbandoned`` in that thread, the way the import worker
        stops a stuck import: pure-Python code (an endless loop) ends at once,
        a call blocked in C ends when that C call returns, and code that
        swallows ``BaseException`` is not stopped. Sent at most once per call,
        and never after the call's code has finished (see ``_run``).
        """
        with self._cond:
            thread_id = self._running.get(future)
            if thread_id is None or future in self._stopping:
                return False
            self._stopping.add(future)
            _raise_in(thread_id, CallAbandoned)
        logger.warning("lane=<%s> | asked an abandoned call to stop", self.name)
        return True

    def _serve(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            self._run(*job)
            del job  # an idle thread holds no tool alive

    def _run(self, future: Future[Any], function: Callable[[], Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        thread_id = threading.get_ident()
        failed: BaseException | None = None
        result: Any = None
        try:
            with self._cond:
                self._running[future] = thread_id
            try:
                result = function()
            except BaseException as exc:  # handed to the waiting caller, which decides what it means
                failed = exc
            with self._cond:
                del self._running[future]
                stopped = future in self._stopping
                self._stopping.discard(future)
            if stopped:  # a stop sent as the call returned may still be pending: it must not land later
                _raise_in(thread_id, None)
        except CallAbandoned as late:  # the stop landed here, after the call's own code
            with self._cond:
                self._running.pop(future, None)
                self._stopping.discard(future)
            failed = failed or late
        if failed is not None:
            future.set_exception(failed)
        else:
            future.set_result(result)


def _raise_in(thread_id: int, exc_type: type[BaseException] | None) -> None:
    """Raise ``exc_type`` in another thread at its next bytecode (None clears a pending one)."""
    exc = ctypes.py_object(exc_type) if exc_type is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), exc)


class LaneMap:
    """One lane per tool object, made on first use and dropped when the tool object is collected.

    Keyed by identity, not by hash: a tool class may define ``__eq__`` and be unhashable.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._lanes: dict[int, CallLane] = {}
        self._lock = threading.RLock()  # the drop callback may run from a collection inside lane_for

    def lane_for(self, tool: object, name: str) -> CallLane:
        """The lane of ``tool``."""
        key = id(tool)
        with self._lock:
            lane = self._lanes.get(key)
            if lane is None:
                lane = CallLane(name, self.workers)
                self._lanes[key] = lane
                weakref.finalize(tool, self._drop, key, lane)
            return lane

    def __len__(self) -> int:
        return len(self._lanes)

    def _drop(self, key: int, lane: CallLane) -> None:
        with self._lock:
            if self._lanes.get(key) is lane:
                del self._lanes[key]
