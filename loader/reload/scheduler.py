"""Per-path deadlines, applied in batches one at a time: the loader's single writer.

The watcher notes a path with a delay (``loader.reload.watcher`` says which
event earns which); the scheduler's thread applies every path that is due in
one batch, and runs the loader's other actions (folder reconciles, periodic
supervision) between batches. A save that falls due while nothing else runs is
applied on the watcher's thread instead (``apply_now``); batches never overlap,
so the loader's state has one writer.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..health import ThreadHealth

__all__ = ["ChangeScheduler"]

logger = logging.getLogger(__name__)


class ChangeScheduler:
    """Per-path deadlines, applied in batches that never overlap.

    Every loader action (file batches, periodic checks) runs on this scheduler's
    thread, except a save ``apply_now`` applies on the watcher's thread while
    this one is idle; either way one batch runs at a time, so the loader's own
    state has a single writer.
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

    def connect(self, *, tick: Callable[[], None]) -> None:
        """Set the supervision ``tick`` (for an owner built after the scheduler); call before ``start``."""
        self._tick = tick

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
            if self._busy or self._tasks:
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
            self._busy = True
        with self._running():
            self._apply(batch)

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        """Around one batch (``_busy`` set by the caller): log its failure, then clear ``_busy``."""
        try:
            yield
        except Exception:
            logger.exception("scheduler=<%s> | batch failed", self._name)
        finally:
            with self._cond:
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
        """Wait until no path is pending and no batch is running."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._due or self._busy or self._tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopping:
                        return
                    if self._busy:  # a batch runs on the watcher's thread (apply_now)
                        self._cond.wait()
                        continue
                    now = time.monotonic()
                    if self._tasks:
                        tasks, self._tasks = self._tasks, []
                        self._busy = True
                        batch: set[Path] | None = None
                        break
                    tasks = []
                    ready = {p for p, t in self._due.items() if t <= now}
                    if ready:
                        for path in ready:
                            del self._due[path]
                        self._busy = True
                        batch = ready
                        break
                    if self._tick is not None and now >= self._next_tick:
                        self._busy = True
                        batch = None
                        break
                    wake = min(self._due.values(), default=now + self._tick_interval)
                    if self._tick is not None:
                        wake = min(wake, self._next_tick)
                    timeout = max(wake - now, 0.0005)
                    self._sleeping_until = now + timeout
                    self._cond.wait(timeout)
                    self._sleeping_until = -math.inf
            with self._running():
                for task in tasks:
                    task()
                if batch is not None:
                    self._apply(batch)
                elif not tasks and self._tick is not None:
                    self._tick()
                    self._next_tick = time.monotonic() + self._tick_interval
