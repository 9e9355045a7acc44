"""From watchdog events to settled batches of paths.

Events only say *that* something happened to a path; the loader looks at the
disk when a path is due and loads what is there. The delay before a path is
due depends on the last event seen for it:

* a rename onto the path: at once, since a rename lands a complete file;
* a completed write (Linux reports the close of a written file): ``settle``
  (0 by default: a closed file is complete, and saves that land while a batch
  is being applied join the next batch anyway);
* a create or modify without a close yet: ``debounce``, since the writer is
  still busy;
* a delete or a move away: ``disappear_grace``, because editors save by
  deleting (or renaming to a backup) and then writing the file anew; if the
  file is back when the path is due, that was an edit, not a removal.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

__all__ = ["ChangeScheduler", "FolderWatcher", "WatchTimings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WatchTimings:
    """Delays (seconds) between an event and the moment its path is loaded."""

    settle: float = 0.0
    debounce: float = 0.05
    disappear_grace: float = 0.05


class ChangeScheduler:
    """Per-path deadlines, applied in batches by one thread.

    Every loader action (file batches, periodic checks) runs on this thread, so
    the loader's own state has a single writer.
    """

    def __init__(
        self,
        apply: Callable[[set[Path]], None],
        *,
        tick: Callable[[], None] | None = None,
        tick_interval: float = 0.25,
        name: str = "tool-loader-scheduler",
    ) -> None:
        self._apply = apply
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

    def note(self, path: Path, delay: float) -> None:
        """Schedule ``path``; the latest event decides when it is due."""
        with self._cond:
            self._due[path] = time.monotonic() + delay
            self._cond.notify_all()

    def note_many(self, paths: Iterable[Path], delay: float) -> None:
        """Schedule several paths with the same delay."""
        deadline = time.monotonic() + delay
        with self._cond:
            for path in paths:
                self._due[path] = deadline
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
                    self._cond.wait(max(wake - now, 0.0005))
            try:
                for task in tasks:
                    task()
                if batch is not None:
                    self._apply(batch)
                elif not tasks and self._tick is not None:
                    self._tick()
                    self._next_tick = time.monotonic() + self._tick_interval
            except Exception:
                logger.exception("scheduler=<%s> | batch failed", self._name)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


class _EventHandler(FileSystemEventHandler):
    def __init__(self, watcher: FolderWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self._watcher._on_event(event)
        except Exception:
            logger.exception("event=<%s> | could not handle file event", event)


def _as_path(raw: str | bytes) -> Path:
    return Path(raw.decode() if isinstance(raw, bytes) else raw)


class FolderWatcher:
    """Watches folders with watchdog and feeds a ``ChangeScheduler``.

    ``on_dir`` is called with a folder that appeared or vanished, so the owner
    can reconcile everything under it (watchdog does not list the files of a
    folder that was moved in).
    """

    def __init__(
        self,
        scheduler: ChangeScheduler,
        timings: WatchTimings,
        *,
        recursive: bool,
        on_dir: Callable[[Path], None],
    ) -> None:
        self._scheduler = scheduler
        self._timings = timings
        self._recursive = recursive
        self._on_dir = on_dir
        self._observer: BaseObserver | None = None
        self._watches: dict[Path, tuple[ObservedWatch, int]] = {}
        self._handler = _EventHandler(self)
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the observer thread."""
        with self._lock:
            if self._observer is None:
                observer = Observer()
                observer.daemon = True
                observer.start()
                self._observer = observer

    def stop(self) -> None:
        """Stop watching everything."""
        with self._lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
        if observer is not None:
            observer.stop()
            observer.join(5)

    def ensure_watch(self, root: Path) -> bool:
        """Watch ``root`` if it exists and is not watched yet (or was recreated); True if newly scheduled."""
        with self._lock:
            if self._observer is None:
                return False
            try:
                inode = root.stat().st_ino
            except OSError:
                self._drop(root)
                return False
            current = self._watches.get(root)
            if current is not None and current[1] == inode:
                return False
            self._drop(root)
            try:
                watch = self._observer.schedule(self._handler, str(root), recursive=self._recursive)
            except OSError:
                logger.warning("root=<%s> | could not watch folder", root, exc_info=True)
                return False
            self._watches[root] = (watch, inode)
            return True

    def is_watching(self, root: Path) -> bool:
        """Whether ``root`` has a live watch."""
        with self._lock:
            return root in self._watches

    def _drop(self, root: Path) -> None:
        current = self._watches.pop(root, None)
        if current is not None and self._observer is not None:
            try:
                self._observer.unschedule(current[0])
            except (KeyError, OSError):
                pass

    def _on_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        src = _as_path(event.src_path)
        timings = self._timings
        if event.is_directory:
            if kind == "moved":
                self._on_dir(src)
                self._on_dir(_as_path(event.dest_path))
            elif kind in ("created", "deleted"):
                self._on_dir(src)
            return
        if kind == "moved":
            # A rename lands a complete file: load the destination at once.
            self._scheduler.note(src, timings.disappear_grace)
            self._scheduler.note(_as_path(event.dest_path), 0.0)
        elif kind == "closed":
            self._scheduler.note(src, timings.settle)
        elif kind == "deleted":
            self._scheduler.note(src, timings.disappear_grace)
        else:  # created, modified
            self._scheduler.note(src, timings.debounce)
