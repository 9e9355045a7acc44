"""Per-path deadlines, applied in batches one at a time: the loader's single writer.

The watcher notes a path with a delay (``loader.reload.watcher`` says which
event earns which); the scheduler's thread applies every path that is due in
one batch, and runs the loader's other actions (folder reconciles, periodic
supervision) between batches. A save that falls due while nothing else runs is
applied on the watcher's thread instead (``apply_now``); batches never overlap,
so the loader's state has one writer.

A batch whose only work left is one file's import may leave it running and give
the writer role back (``defer``): the import thread that ran it takes the role
again when it ends and commits right there, instead of handing the outcome back
to the thread that waited for it. A batch that ran meanwhile leaves the import
to a later batch; an import still running at its patience is detached and goes
on as an ordinary import in flight, so a slow file still delays no other.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..health import ThreadHealth

__all__ = ["CarriedWork", "ChangeScheduler"]

logger = logging.getLogger(__name__)


class CarriedWork(Protocol):
    """A batch's one import left running on an import thread, its commit to follow there (``defer``)."""

    @property
    def patience_ends(self) -> float:
        """When (``time.monotonic()``) the batch would have stopped waiting for the import."""
        ...

    @property
    def spoiled(self) -> bool:
        """Whether the import was given up on (abandoned): nothing of it may be committed."""
        ...

    def start(self, ended: Callable[[], None]) -> None:
        """Call ``ended`` (on the import's thread) once the import ends, unless it was detached first."""
        ...

    def finish(self) -> None:
        """With the writer role back (no batch ran meanwhile): take the import in and commit."""
        ...

    def hand_back(self) -> None:
        """Another batch ran meanwhile, or the loader stops: leave the finished import to a later batch."""
        ...

    def detach(self) -> bool:
        """Patience is over (scheduler thread, writer role): go on as an import in flight.

        False if the import ended first (its thread takes it in).
        """
        ...


@dataclass(slots=True, eq=False)
class _Carried:
    work: CarriedWork
    settled: bool = False
    """Its thread has taken it in or handed it back (a detach that lost the race leaves it alone)."""


class ChangeScheduler:
    """Per-path deadlines, applied in batches that never overlap.

    Every loader action (file batches, periodic checks) runs on this scheduler's
    thread, except a save ``apply_now`` applies on the watcher's thread while
    this one is idle, and a deferred import commits on its import thread;
    either way one batch runs at a time, so the loader's own state has a single
    writer.
    """

    def __init__(
        self,
        apply: Callable[[set[Path]], None],
        *,
        tick: Callable[[], None] | None = None,
        tick_interval: float = 0.25,
        name: str = "tool-loader-scheduler",
        threads: ThreadHealth | None = None,
    ) -> None:
        self._apply = apply
        self._threads = threads if threads is not None else ThreadHealth()
        self._tick = tick
        self._tick_interval = tick_interval
        self._name = name
        self._due: dict[Path, float] = {}
        self._tasks: list[Callable[[], None]] = []
        self._cond = threading.Condition()
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._next_tick = 0.0
        self._sleeping_until = -math.inf
        """When the thread looks at its deadlines again by itself (-inf: it is not sleeping on them)."""
        self._carried: list[_Carried] = []
        """Deferred imports still running, neither taken in nor detached."""
        self._batches = 0
        """Batches begun so far: a deferred import commits on its own only if none began after its batch."""
        self._local = threading.local()

    def note(self, path: Path, delay: float) -> None:
        """Schedule ``path``; the latest event decides when it is due."""
        with self._cond:
            due = self._due[path] = time.monotonic() + delay
            self._wake_for(due)

    def look_again(self, path: Path, delay: float) -> None:
        """Schedule ``path`` no later than ``delay`` from now: an earlier deadline stands.

        For the loader's own follow-ups (an import in flight, a grace running out). Unlike
        an event's ``note``, they must never postpone a look already due sooner: an import
        that ends just as the loader arranges its deadline check asks for a look at once,
        which a later "look at the deadline" would otherwise push back to the deadline.
        """
        with self._cond:
            due = time.monotonic() + delay
            current = self._due.get(path)
            if current is not None and current <= due:
                return
            self._due[path] = due
            self._wake_for(due)

    def quiet_for(self, seconds: float) -> bool:
        """Whether nothing runs now and no path falls due within ``seconds`` (tests wait on this)."""
        with self._cond:
            if self._busy or self._tasks or self._carried:
                return False
            horizon = time.monotonic() + seconds
            return all(due > horizon for due in self._due.values())

    def apply_now(self, path: Path) -> None:
        """``path`` is due now: apply it on the calling thread if the scheduler is idle, else note it.

        The watcher's thread calls this for a rename or a completed write: applying
        there saves waking the scheduler's thread (a thread hand-over, and a wait
        for the GIL, on the path of every save). The batch runs exactly as on the
        scheduler's thread (that thread stays away while it runs), and an import
        that does not finish within ``import_patience`` is left in flight as
        there, so a slow file holds the watcher's thread no longer than it would
        hold the scheduler's.
        """
        with self._cond:
            if self._busy or self._tasks or self._stopping or self._thread is None:
                due = self._due[path] = time.monotonic()
                self._wake_for(due)
                return
            now = time.monotonic()
            batch = {path, *(p for p, t in self._due.items() if t <= now)}
            for ready in batch:
                self._due.pop(ready, None)
            self._begin()
        self._apply_batch(batch)

    def may_defer(self) -> bool:
        """Whether the batch running on this thread may leave its import running (``defer``)."""
        return bool(getattr(self._local, "may_defer", False))

    def defer(self, work: CarriedWork) -> None:
        """The batch running on this thread leaves ``work`` running; it commits where it ends.

        Only a batch of due paths may (not a task nor the tick): the role is given
        back when the batch returns, and ``work`` started then.
        """
        if not self.may_defer():
            raise RuntimeError("only a batch of due paths can defer its import")
        self._local.deferred = work

    def _apply_batch(self, batch: set[Path]) -> None:
        """Apply ``batch`` (writer role taken by the caller), then give the role back."""
        self._local.may_defer, self._local.deferred = True, None
        try:
            self._apply(batch)
        except Exception:
            logger.exception("scheduler=<%s> | batch failed", self._name)
        finally:
            self._local.may_defer = False
            work, self._local.deferred = self._local.deferred, None
            with self._cond:
                if work is not None:
                    carried = _Carried(work)
                    self._carried.append(carried)
                    serial = self._batches
                self._release()
        if work is not None:
            work.start(lambda: self._take_in(carried, serial))

    def _take_in(self, carried: _Carried, serial: int) -> None:
        """A deferred import ended (on its thread): commit it there, or leave it to a later batch.

        It commits only if no batch began since its own and it was not given up on:
        a batch may abandon an import only while it holds the role, so once this
        thread holds it unspoiled, no stop meant for the import can reach the commit.
        """
        with self._cond:
            resume = (
                not self._busy and not self._stopping and serial == self._batches and not carried.work.spoiled
            )
            if resume:
                carried.settled = True
                self._discard(carried)
                self._begin()
        if resume:
            # The commit runs here now: a plugin that kills this thread kills a loader thread.
            self._threads.watch(threading.current_thread())
            try:
                carried.work.finish()
            except Exception:
                logger.exception("scheduler=<%s> | batch failed", self._name)
            finally:
                with self._cond:
                    self._release()
            return
        try:
            carried.work.hand_back()
        finally:
            with self._cond:
                carried.settled = True
                self._discard(carried)
                self._cond.notify_all()

    def _discard(self, carried: _Carried) -> None:
        if carried in self._carried:
            self._carried.remove(carried)

    def _begin(self) -> None:
        """Take the writer role (``_cond`` held)."""
        self._busy = True
        self._batches += 1

    def _release(self) -> None:
        """Give the writer role back (``_cond`` held)."""
        self._busy = False
        self._cond.notify_all()

    def note_many(self, paths: Iterable[Path], delay: float) -> None:
        """Schedule several paths with the same delay."""
        deadline = time.monotonic() + delay
        with self._cond:
            for path in paths:
                self._due[path] = deadline
            self._wake_for(deadline)

    def _wake_for(self, due: float) -> None:
        """Wake the thread for a path due at ``due`` only if it would sleep past that (``_cond`` held).

        An editor's save sends a burst of events for one file, each rescheduling it a
        little later: waking the thread for each only to sleep again costs the save a
        GIL hand-over per event.
        """
        if due < self._sleeping_until:
            self._cond.notify_all()

    def submit(self, task: Callable[[], None]) -> None:
        """Run ``task`` on the scheduler thread before the next due paths."""
        with self._cond:
            self._tasks.append(task)
            self._cond.notify_all()

    def pending(self) -> int:
        """How many paths are waiting."""
        with self._cond:
            return len(self._due)

    def start(self) -> None:
        """Start the applying thread."""
        if self._thread is not None:
            return
        self._stopping = False
        self._next_tick = time.monotonic() + self._tick_interval
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._threads.watch(self._thread)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread after the batch in progress."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no path is pending, no batch is running and no deferred import is left."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._due or self._busy or self._tasks or self._carried:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def _next_work(self) -> tuple[list[Callable[[], None]], set[Path] | None, bool] | None:
        """Wait for the next thing to do (``_cond`` held): tasks, a batch, or the tick; None: stop."""
        while True:
            if self._stopping:
                return None
            if self._busy:  # a batch runs on another thread (apply_now, a deferred import)
                self._cond.wait()
                continue
            now = time.monotonic()
            overdue = [c for c in self._carried if c.work.patience_ends <= now]
            if overdue or self._tasks:
                tasks, self._tasks = self._tasks, []
                for carried in overdue:
                    self._carried.remove(carried)
                self._begin()
                return [*(self._detacher(c) for c in overdue), *tasks], None, False
            ready = {p for p, t in self._due.items() if t <= now}
            if ready:
                for path in ready:
                    del self._due[path]
                self._begin()
                return [], ready, False
            if self._tick is not None and now >= self._next_tick:
                self._begin()
                return [], None, True
            wake = min(self._due.values(), default=now + self._tick_interval)
            if self._tick is not None:
                wake = min(wake, self._next_tick)
            for carried in self._carried:
                wake = min(wake, carried.work.patience_ends)
            timeout = max(wake - now, 0.0005)
            self._sleeping_until = now + timeout
            self._cond.wait(timeout)
            self._sleeping_until = -math.inf

    def _detacher(self, carried: _Carried) -> Callable[[], None]:
        def detach() -> None:
            if carried.work.detach():
                return
            with self._cond:  # it ended first: until its thread takes it in, it still counts as work
                if not carried.settled and carried not in self._carried:
                    self._carried.append(carried)

        return detach

    def _run(self) -> None:
        while True:
            with self._cond:
                work = self._next_work()
            if work is None:
                return
            tasks, batch, tick = work
            try:
                for task in tasks:
                    task()
                if batch is not None:
                    self._apply_batch(batch)
                elif tick and self._tick is not None:
                    self._tick()
                    self._next_tick = time.monotonic() + self._tick_interval
            except Exception:
                logger.exception("scheduler=<%s> | batch failed", self._name)
            finally:
                if batch is None:
                    with self._cond:
                        self._release()
