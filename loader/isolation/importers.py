"""The import role: worker processes that run tool-file imports, one import each at a time.

A hanging import holds only its own worker: the next file's import takes
another one (up to ``max_workers`` at once, then imports wait in line), so
another file's save goes live at its usual latency while the hanging one runs
to its deadline. An import worker never runs a tool file's code itself: each
import runs in a fork of it that ends once it has answered (``import_fork``),
so any idle worker serves any file, and nothing one file's import left in a
process is there for the next file's. Workers come from the warm pool, so a
second import worker is already started.
"""

from __future__ import annotations

import threading
import time
from typing import Final

from .errors import WorkerError
from .pool import WorkerPool
from .process import WorkerProcess

__all__ = ["ImportWorkers"]

_IDLE_KEPT: Final = 2
"""Idle import workers kept: the usual one, and the one that took over while another hung."""

_SETTLE_TIMEOUT: Final = 30.0
"""How long a worker taken from the pool may take to answer the prepare requests it still owes."""


class ImportWorkers:
    """Hands out import workers, at most ``max_workers`` busy at once."""

    def __init__(self, pool: WorkerPool, max_workers: int) -> None:
        self._pool = pool
        self._max_workers = max_workers
        self._cond = threading.Condition()
        self._idle: list[WorkerProcess] = []
        self._busy: set[WorkerProcess] = set()
        self._starting = 0
        self._closed = False

    def acquire(self) -> WorkerProcess:
        """A live import worker for one import; waits while ``max_workers`` are busy."""
        with self._cond:
            while True:
                if self._closed:
                    raise WorkerError("the import workers are closed")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        self._busy.add(worker)
                        return worker
                    worker.kill()
                if len(self._busy) + self._starting < self._max_workers:
                    self._starting += 1
                    break
                self._cond.wait()
        try:
            worker = self._from_pool()
        finally:
            with self._cond:
                self._starting -= 1
                self._cond.notify_all()
        with self._cond:
            if self._closed:
                worker.kill()
                raise WorkerError("the import workers are closed")
            self._busy.add(worker)
        return worker

    def _from_pool(self) -> WorkerProcess:
        """A pool worker with no answer outstanding: an idle call worker may still owe the answer
        to a prepare request, which an import request would otherwise read as its own."""
        while True:
            worker = self._pool.acquire(None, role_limit=False)
            try:
                worker.collect_prepared(time.monotonic() + _SETTLE_TIMEOUT)
            except WorkerError:
                worker.kill()
                self._pool.warm()
                continue
            return worker

    def release(self, worker: WorkerProcess, *, healthy: bool) -> None:
        """Take a worker back: kept idle when healthy (up to a few), else stopped and the pool topped up."""
        if healthy:
            worker.stop_strays()
        with self._cond:
            self._busy.discard(worker)
            keep = healthy and not self._closed and worker.alive() and len(self._idle) < _IDLE_KEPT
            if keep:
                self._idle.append(worker)
            self._cond.notify_all()
        if not keep:
            worker.kill()
            self._pool.warm()

    def workers(self) -> list[WorkerProcess]:
        """Every import worker now, idle or busy."""
        with self._cond:
            return [*self._idle, *self._busy]

    def close(self) -> None:
        """Stop every import worker (an import still running ends as crashed)."""
        with self._cond:
            self._closed = True
            idle, busy = list(self._idle), list(self._busy)
            self._idle.clear()
            self._cond.notify_all()
        for worker in idle:
            worker.kill()
        for worker in busy:
            worker.stop()  # its import's thread sees the end of the pipe and lets it go
