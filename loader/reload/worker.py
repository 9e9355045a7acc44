"""Running tool-file imports on a worker thread with a deadline.

A tool file that never finishes importing (an endless loop at module level)
must not stall the loader. Imports run on a worker thread; when one overruns,
the loader reports the file as stuck, abandons that thread (asking it to stop
with an asynchronous exception, which ends pure-Python loops) and carries on
with a fresh worker.
"""

from __future__ import annotations

import ctypes
import logging
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["ImportAbandoned", "ImportTimeout", "ImportWorker"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


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


class _Job(Generic[_T]):
    def __init__(self, function: Callable[[], _T]) -> None:
        self.function = function
        self.done = threading.Event()
        self.result: _T | None = None
        self.error: BaseException | None = None


class ImportWorker:
    """One worker thread at a time, replaced when a job overruns."""

    def __init__(self, name: str = "tool-loader-import") -> None:
        self._name = name
        self._queue: queue.SimpleQueue[_Job[Any] | None] | None = None
        self._thread: threading.Thread | None = None
        self._current: tuple[Path, float] | None = None

    @property
    def current(self) -> tuple[Path, float] | None:
        """The file being imported now and since when (``time.monotonic()``), so a console can show it."""
        return self._current

    def run(self, function: Callable[[], _T], timeout: float, *, watch_file: Path | None = None) -> _T:
        """Run ``function`` on the worker; raise ``ImportTimeout`` if it overruns ``timeout``."""
        if self._thread is None or self._queue is None:
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(
                target=self._serve, args=(self._queue,), name=self._name, daemon=True
            )
            self._thread.start()
        job: _Job[_T] = _Job(function)
        self._current = None if watch_file is None else (watch_file, time.monotonic())
        try:
            self._queue.put(job)
            finished = job.done.wait(timeout)
        finally:
            self._current = None
        if not finished:
            thread, self._thread = self._thread, None
            stuck_queue, self._queue = self._queue, None
            stuck_queue.put(None)  # the worker exits once the stuck job ends
            line, stack = _where(thread, watch_file)
            _interrupt(thread)
            raise ImportTimeout(timeout, line, stack)
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def close(self) -> None:
        """Let the worker thread exit."""
        if self._queue is not None:
            self._queue.put(None)
        self._thread = None
        self._queue = None

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[_Job[Any] | None]) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            try:
                job.result = job.function()
            except BaseException as exc:  # handed to the waiting caller
                job.error = exc
            finally:
                job.done.set()


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


def _interrupt(thread: threading.Thread | None) -> None:
    """Ask a thread to stop by raising ``ImportAbandoned`` in it (best effort)."""
    if thread is None or thread.ident is None:
        return
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    changed = set_async_exc(ctypes.c_ulong(thread.ident), ctypes.py_object(ImportAbandoned))
    if changed > 1:  # should never happen; undo as the C API asks
        set_async_exc(ctypes.c_ulong(thread.ident), None)
    logger.warning("thread=<%s> | abandoned an import that did not finish", thread.name)
