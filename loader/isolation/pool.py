"""The supervised warm pool: worker processes started ahead of need, replaced when they die.

Each worker serves one user at a time (the import role, or one call), so a call
that crashes or hangs harms that call only. A call worker belongs to one tool
file (its ``owner``, a trust unit) for its whole life: it is handed out only for
calls of that file's tools, so nothing one file's call leaves in a process (a
patched function, a global) is ever seen by another file's call. Unowned
spares are kept up to ``spare_workers``, so neither a save nor a call waits for
an interpreter to start; an idle owned worker is kept for its file's next call
(at most four per call worker, the least recently used stopped first).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .errors import WorkerError, WorkerStartError, WorkerTimeout
from .messages import Request
from .process import WorkerProcess
from .protocol import ChannelClosed

__all__ = ["WorkerPool"]

logger = logging.getLogger(__name__)

_STARTS_KILLED = 3
"""New workers killed by a signal before they were ready, in a row, before a caller is told."""
_STARTS_FAILED = 3
"""Worker starts failing in a row before the pool reports that it cannot serve (``problem``)."""
_IDLE_PER_CALL_WORKER = 4
"""Idle owned workers kept per call worker: files called in turn each keep theirs warm, up to a bound
on the processes (and memory) a quiet pool holds."""
_MAX_PREPARED = 16
"""Unanswered prepare requests one idle worker may hold (its answers must never fill the pipe)."""


class WorkerPool:
    """Hands out ready workers; takes them back healthy (kept) or not (killed and replaced)."""

    def __init__(
        self,
        start: Callable[[], WorkerProcess],
        *,
        max_in_use: int,
        spares: int,
        start_timeout: float,
    ) -> None:
        self._factory = start
        # Linux sends a child's parent-death signal when the *thread* that started it ends, and
        # calls arrive on short-lived threads: every worker is started from this one long-lived thread.
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tool-loader-spawn")
        self._max_in_use = max_in_use
        self._spares = spares
        self._start_timeout = start_timeout
        self._idle: list[WorkerProcess] = []
        self._in_use: set[WorkerProcess] = set()
        self._lock = threading.Condition()
        self._closed = False
        self.replaced = 0
        """How many workers were thrown away unhealthy (crashed, stuck, cancelled)."""
        self._failed_starts: list[str] = []
        """Why each worker start since the last good one failed."""

    @property
    def max_in_use(self) -> int:
        """Most workers running calls at once."""
        return self._max_in_use

    def _start(self) -> WorkerProcess:
        return self._spawner.submit(self._factory).result()

    def warm(self) -> None:
        """Start the spares now (the loader calls this when it is created)."""
        with self._lock:
            self._top_up()

    def _top_up(self) -> None:
        """Start processes until ``spares`` are idle (lock held; starting is a fork and exec, not a wait)."""
        while not self._closed and len(self._idle) < self._spares:
            try:
                self._idle.append(self._start())
            except WorkerStartError:
                logger.exception("could not start a spare worker")
                return

    def acquire(
        self, timeout: float | None, *, owner: str | None = None, role_limit: bool = True
    ) -> WorkerProcess:
        """A ready worker, for one user; ``WorkerTimeout`` if none frees up in time.

        ``owner`` (a tool file) gets its own idle worker, or a spare that becomes
        its own; None gets a spare, which stays unowned. ``role_limit`` counts the
        worker against ``max_in_use`` (calls do; the import role does not, so
        imports never wait for calls). A spare that died
        while idle (an OOM killer, a stray ``kill``) is dropped and replaced,
        never handed out; a new worker killed by a signal before it was ready is
        retried too. Only a worker that cannot start (it said why, or exited by
        itself, or stayed silent past the start timeout) fails the caller.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        killed_at_start = 0
        while True:
            worker, fresh = self._hand_out(deadline, owner, role_limit)
            remaining = self._start_timeout if deadline is None else max(0.1, deadline - time.monotonic())
            try:
                worker.wait_ready(min(remaining, self._start_timeout))
            except WorkerStartError as exc:
                self.release(worker, healthy=False)
                if remaining < self._start_timeout and deadline is not None and time.monotonic() >= deadline:
                    raise WorkerTimeout("the caller's time ran out while a worker started") from None
                with self._lock:
                    self._failed_starts = [*self._failed_starts[-(_STARTS_FAILED - 1) :], str(exc)]
                killed_at_start += fresh and worker.killed_by_signal()
                if fresh and (not worker.killed_by_signal() or killed_at_start >= _STARTS_KILLED):
                    raise
                continue
            if worker.alive():
                if self._failed_starts:
                    with self._lock:
                        self._failed_starts = []
                return worker
            self.release(worker, healthy=False)

    def _hand_out(
        self, deadline: float | None, owner: str | None, role_limit: bool
    ) -> tuple[WorkerProcess, bool]:
        """A worker for ``owner`` once one may be in use (``acquire``), and whether it was started for it."""
        with self._lock:
            while True:
                if self._closed:
                    raise WorkerError("the worker pool is closed")
                if not role_limit or len(self._in_use) < self._max_in_use:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise WorkerTimeout(f"all {self._max_in_use} call workers stayed busy")
                self._lock.wait(remaining)
            worker = self._take_idle(owner)
            fresh = worker is None
            if worker is None:
                worker = self._start()
            worker.owner = owner
            if role_limit:
                self._in_use.add(worker)
            self._top_up()
            return worker, fresh

    def _take_idle(self, owner: str | None) -> WorkerProcess | None:
        """``owner``'s most recently used live idle worker, else a spare (a ready one first); idle
        workers that died are dropped (``_top_up`` replaces them). Lock held."""
        for worker in [w for w in self._idle if not w.alive()]:
            self._idle.remove(worker)
            self.replaced += 1
            how = worker.exit_description()
            worker.kill()
            logger.warning("pid=<%s> | idle worker died (%s); replacing it", worker.pid, how)
        for wanted in (owner, None) if owner is not None else (None,):
            mine = [w for w in self._idle if w.owner == wanted]
            for worker in reversed(mine):
                if worker.ready_now():
                    self._idle.remove(worker)
                    return worker
            if mine:
                self._idle.remove(mine[-1])
                return mine[-1]
        return None

    def try_acquire_ready(self, owner: str) -> WorkerProcess | None:
        """An idle worker of ``owner`` that is ready now, without waiting or starting one (else None)."""
        with self._lock:
            if self._closed or len(self._in_use) >= self._max_in_use:
                return None
            for worker in reversed(self._idle):
                if worker.owner != owner:
                    continue
                if worker.ready_now() and worker.alive() and len(worker.prepared) < _MAX_PREPARED:
                    self._idle.remove(worker)
                    self._in_use.add(worker)
                    return worker
        return None

    def release(self, worker: WorkerProcess, *, healthy: bool) -> None:
        """Take a worker back: kept idle if ``healthy``, else killed and replaced by a warm one."""
        if healthy:
            worker.stop_strays()
        if healthy and worker.pending:
            healthy = self._flush(worker)
        evicted: WorkerProcess | None = None
        with self._lock:
            self._in_use.discard(worker)
            if healthy and not self._closed and worker.alive():
                self._idle.append(worker)  # kept warm, with the tool versions it has built
                evicted = self._over_idle(worker.owner)
            else:
                if not healthy:
                    self.replaced += 1
                worker.kill()
                self._top_up()
            self._lock.notify_all()
        if evicted is not None:
            evicted.kill()

    def _over_idle(self, owner: str | None) -> WorkerProcess | None:
        """The idle worker to stop now that one of ``owner`` came back, if too many are idle: spares
        beyond ``spares``, or the least recently used owned one beyond four per call worker. Lock held."""
        same = [w for w in self._idle if (w.owner is None) == (owner is None)]
        if len(same) <= (self._spares if owner is None else self._max_in_use * _IDLE_PER_CALL_WORKER):
            return None
        self._idle.remove(same[0])
        return same[0]

    def _flush(self, worker: WorkerProcess) -> bool:
        """Send the requests queued for this worker while it was busy (cleanups)."""
        if worker.prepared:
            return True  # answered in order after the prepare; sent by the next user instead
        while worker.pending:
            message = worker.pending.pop(0)
            try:
                worker.request(message, 10.0)
            except WorkerError:
                return False
        return True

    def tell(self, wanted: Callable[[WorkerProcess], bool], message: Request) -> None:
        """Send ``message`` to every matching worker: idle ones now, busy ones when handed back."""
        with self._lock:
            idle = [w for w in self._idle if wanted(w)]
            for worker in idle:
                self._idle.remove(worker)
            for worker in self._in_use:
                if wanted(worker):
                    worker.pending.append(message)
        for worker in idle:
            try:
                worker.collect_prepared(time.monotonic() + 10.0)
                worker.request(message, 10.0)
                worker.stop_strays()
                healthy = True
            except WorkerError:
                healthy = False
            with self._lock:
                if healthy and not self._closed:
                    self._idle.append(worker)
                else:
                    worker.kill()
                self._lock.notify_all()

    def stop_idle_strays(self) -> None:
        """Stop what idle workers' builds left running (sandbox mode).

        A build sent ahead of a call (``prepare``) is answered to nobody until
        the worker's next call, so its processes are looked for here, once its
        answer is in the pipe (earlier would stop a build's own subprocess).
        """
        with self._lock:
            for worker in self._idle:
                if not worker.ready_now():  # a spare still starting ran no tool: its processes are its own
                    continue
                try:
                    answered = not worker.prepared or worker.channel.poll(0)
                except ChannelClosed:  # gone: its next user finds out and replaces it
                    continue
                if answered:
                    worker.stop_strays()

    def problem(self) -> str | None:
        """Why this pool cannot serve calls now (None: it can): closed, or its last worker starts all
        failed. Calls keep trying to start workers, so the pool recovers once one starts again."""
        with self._lock:
            if self._closed:
                return "the worker pool is closed"
            if len(self._failed_starts) >= _STARTS_FAILED:
                return (
                    f"the last {_STARTS_FAILED} worker processes failed to start ({self._failed_starts[-1]})"
                )
        return None

    def workers(self) -> list[WorkerProcess]:
        """Every worker of the pool now, idle or in use by a call."""
        with self._lock:
            return [*self._idle, *self._in_use]

    def close(self) -> None:
        """Stop every worker (calls still running in them end with a crash result)."""
        with self._lock:
            self._closed = True
            workers = [*self._idle, *self._in_use]
            self._idle.clear()
            self._lock.notify_all()
        for worker in workers:
            worker.kill()
        self._spawner.shutdown(wait=False)
