"""Running tool-file imports on a small pool of threads, with deadlines.

A tool file that never finishes importing (an endless loop at module level, a
network call that hangs) must not stall the loader: every other file keeps
reloading at the usual latency. Imports run as jobs on a bounded pool of
threads; a job that overruns its deadline is reported as stuck and asked to
stop with an asynchronous exception (which ends pure-Python loops). A thread
comes back to the pool when its job ends, so stuck saves never leak threads:
at most ``max_threads`` exist, and a job waits in line when all are busy.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["ImportAbandoned", "ImportJob", "ImportPool", "ImportTimeout"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

DEFAULT_MAX_THREADS = 4


class ImportAbandoned(BaseException):
    """Raised inside an overrunning import to stop it.

    A ``BaseException``, so the tool's own ``except Exception`` cannot swallow it.
    """


class ImportTimeout(Exception):
    """An import did not finish in time; carries where it was stuck."""

    def __init__(self, seconds: float, line: int | None, stack: str) -> None:
        super().__init__(
            f"import did not finish within {seconds:g} s" + (f" (at line {line})" if line else "")
        )
        self.seconds = seconds
        self.line = line
        self.stack = stack


class ImportJob(Generic[_T]):
    """One import in flight: wait for it, read its outcome, or give up on it."""

    def __init__(self, function: Callable[[], _T], watch_file: Path | None) -> None:
        self.function = function
        self.watch_file = watch_file
        self.submitted = time.monotonic()
        self.started: float | None = None
        self.thread: threading.Thread | None = None
        self.abandoned = False
        self.follower: ImportJob[Any] | None = None
        """The next job of a chain (``ImportPool.submit_chain``): it runs on this job's thread next."""
        self._done = False
        # Held from creation until the job ends: waiting is acquiring it (a scan makes one job
        # per file, and a lock costs a tenth of an Event with its Condition).
        self._gate = threading.Lock()
        self._gate.acquire()
        self._result: _T | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def done(self) -> bool:
        """Whether the job finished (returned or raised)."""
        return self._done

    def wait(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds; True if the job finished."""
        if self._done:
            return True
        if self._gate.acquire(timeout=-1 if timeout is None else max(timeout, 0.0)):
            self._gate.release()
        return self._done

    def outcome(self) -> _T:
        """The job's return value, or raise what it raised (only once ``done``)."""
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]

    def on_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from the worker thread) when the job ends; at once if it has."""
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback()

    def timeout_error(self, seconds: float) -> ImportTimeout:
        """An ``ImportTimeout`` saying where in ``watch_file`` the job is now."""
        line, stack = _where(self.thread, self.watch_file)
        return ImportTimeout(seconds, line, stack)

    def _finish(self, result: _T | None, error: BaseException | None) -> None:
        with self._lock:
            if self._done:
                return  # the first ending stands (an interrupt can arrive as a job returns)
            self._result, self._error = result, error
            self._done = True
            callbacks, self._callbacks = self._callbacks, []
            self._gate.release()
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("import job callback raised")


class ImportPool:
    """At most ``max_threads`` import threads, created on demand and reused."""

    def __init__(self, name: str = "tool-loader-import", max_threads: int = DEFAULT_MAX_THREADS) -> None:
        self._name = name
        self._max_threads = max_threads
        self._cond = threading.Condition()
        self._queue: deque[ImportJob[Any]] = deque()
        self._threads: set[threading.Thread] = set()
        self._idle = 0
        self._closed = False
        self._retiring = False

    @property
    def thread_count(self) -> int:
        """How many import threads exist now (never more than ``max_threads``)."""
        with self._cond:
            return len(self._threads)

    def submit(self, function: Callable[[], _T], *, watch_file: Path | None = None) -> ImportJob[_T]:
        """Queue ``function``; it starts as soon as a thread is free."""
        job: ImportJob[_T] = ImportJob(function, watch_file)
        with self._cond:
            if self._closed:
                raise RuntimeError("the import pool is closed")
            self._retiring = False
            self._queue.append(job)
            self._grow()
            self._cond.notify()
        return job

    def _grow(self) -> None:
        """Start a thread for a queued job if none is idle and the cap allows (``_cond`` held)."""
        if self._idle == 0 and len(self._threads) < self._max_threads:
            thread = threading.Thread(
                target=self._serve, name=f"{self._name}-{len(self._threads)}", daemon=True
            )
            self._threads.add(thread)
            thread.start()

    def submit_chain(self, functions: list[tuple[Callable[[], _T], Path | None]]) -> list[ImportJob[_T]]:
        """Queue ``functions`` to run one after another on one thread, in order.

        For a batch of imports that must each be waited for (a one-off scan):
        the thread goes from one job to the next without a round trip through
        the queue, while the caller waits on each job as before. A job abandoned
        before it starts is skipped; when a running one is interrupted, the
        rest of the chain goes back to the front of the queue.
        """
        jobs: list[ImportJob[_T]] = [ImportJob(function, watch_file) for function, watch_file in functions]
        for job, follower in itertools.pairwise(jobs):
            job.follower = follower
        if jobs:
            with self._cond:
                if self._closed:
                    raise RuntimeError("the import pool is closed")
                self._retiring = False
                self._queue.append(jobs[0])
                self._grow()
                self._cond.notify()
        return jobs

    def run(self, function: Callable[[], _T], timeout: float, *, watch_file: Path | None = None) -> _T:
        """Run ``function`` and wait for it; raise ``ImportTimeout`` (and abandon it) if it overruns."""
        job = self.submit(function, watch_file=watch_file)
        if not job.wait(timeout):
            error = job.timeout_error(timeout)
            self.abandon(job)
            raise error
        return job.outcome()

    def abandon(self, job: ImportJob[Any], *, interrupt: bool = True) -> None:
        """Give up on ``job``: drop it if it has not started, else ask its thread to stop.

        ``interrupt=False`` leaves a running job alone (its owner stops it another
        way, as the process backend does by stopping the job's worker process).
        """
        with self._cond:
            job.abandoned = True
            if job in self._queue:
                self._queue.remove(job)
                if job.follower is not None:
                    self._queue.appendleft(job.follower)
                job._finish(None, ImportAbandoned())
                return
            if job.thread is None and not job.done:  # a chained job not started yet: skipped
                job._finish(None, ImportAbandoned())
                return
            if job.thread is not None and not job.done:
                # The rest of its chain goes on on another thread now: an import stuck in C code
                # (a lock, a socket) may never see the interrupt, and must not hold up the files after it.
                self._requeue_followers(job)
                if interrupt:
                    _interrupt(job.thread)

    def release_idle(self) -> None:
        """Let every thread exit once it has nothing to do; the next ``submit`` starts one again."""
        with self._cond:
            self._retiring = True
            self._cond.notify_all()

    def close(self) -> None:
        """Let every idle thread exit; busy ones exit when their job ends (stuck ones are interrupted)."""
        with self._cond:
            self._closed = True
            queued, self._queue = list(self._queue), deque()
            self._cond.notify_all()
        for job in queued:
            _abandon_chain(job)

    def _serve(self) -> None:
        me = threading.current_thread()
        job: ImportJob[Any] | None = None
        try:
            while True:
                with self._cond:
                    if job is not None and job.abandoned:
                        # An interrupted thread is not reused: a late interrupt must not hit the next job.
                        self._requeue_followers(job)
                        return
                    job = job.follower if job is not None else None
                    if self._closed:
                        _abandon_chain(job)
                        job = None
                    job = _first_pending(job)
                    while job is None:
                        self._idle += 1
                        while not self._queue and not self._closed and not self._retiring:
                            self._cond.wait()
                        self._idle -= 1
                        if not self._queue:
                            return
                        job = _first_pending(self._queue.popleft())
                    job.thread = me
                    job.started = time.monotonic()
                try:
                    result = job.function()
                except BaseException as exc:  # handed to whoever waits on the job
                    job._finish(None, exc)
                else:
                    job._finish(result, None)
        except ImportAbandoned:
            if job is not None and not job.done:
                job._finish(None, ImportAbandoned())
            if job is not None:
                with self._cond:
                    self._requeue_followers(job)
        finally:
            with self._cond:
                self._threads.discard(me)
                if self._queue and not self._closed:
                    # A thread left after an abandoned job (a stopped import is never reused): the
                    # jobs queued while every thread was taken must not wait for the next submit.
                    self._grow()
                    self._cond.notify()

    def _requeue_followers(self, job: ImportJob[Any]) -> None:
        """The rest of ``job``'s chain goes first in line for another thread (``_cond`` held)."""
        follower, job.follower = job.follower, None
        if self._closed:
            _abandon_chain(follower)
        elif follower is not None:
            self._queue.appendleft(follower)
            self._grow()
            self._cond.notify()


def _first_pending(job: ImportJob[Any] | None) -> ImportJob[Any] | None:
    """``job``, or the first of its chain not ended already (chained jobs abandoned before they ran)."""
    while job is not None and job.done:
        job = job.follower
    return job


def _abandon_chain(job: ImportJob[Any] | None) -> None:
    """End ``job`` and the rest of its chain without running them (the pool is closing)."""
    while job is not None:
        if not job.done:
            job._finish(None, ImportAbandoned())
        job = job.follower


def _where(thread: threading.Thread | None, watch_file: Path | None) -> tuple[int | None, str]:
    """The line of ``watch_file`` the thread is executing, and its whole stack."""
    if thread is None or thread.ident is None:
        return None, ""
    frame = sys._current_frames().get(thread.ident)
    if frame is None:
        return None, ""
    stack = "".join(traceback.format_stack(frame))
    line = None
    target = str(watch_file) if watch_file else None
    while frame is not None:
        if target and frame.f_code.co_filename == target:
            line = frame.f_lineno
            break
        frame = frame.f_back
    return line, stack


def _interrupt(thread: threading.Thread) -> None:
    """Ask a thread to stop by raising ``ImportAbandoned`` in it (best effort)."""
    if thread.ident is None:
        return
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    changed = set_async_exc(ctypes.c_ulong(thread.ident), ctypes.py_object(ImportAbandoned))
    if changed > 1:  # should never happen; undo as the C API asks
        set_async_exc(ctypes.c_ulong(thread.ident), None)
    logger.warning("thread=<%s> | abandoned an import that did not finish", thread.name)
