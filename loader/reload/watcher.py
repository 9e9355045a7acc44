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
* a delete or a move away: ``settle``. Editors save by deleting (or renaming
  to a backup) and then writing the file anew, so the batch that finds a
  known file gone keeps its tools for ``disappear_grace`` and looks again
  (``FileRecord.absent_wait``); if the file is back by then, that was an edit,
  not a removal. The grace is kept there, not in an event's delay, because a
  path can fall due for an older event in the middle of such a save;
* a link created: ``settle``, since making a link is one atomic step.

A link to a folder placed inside a watched folder (a ConfigMap's ``..data``
swap) and a flip of a link the folder's own path goes through (git-sync) change
files without an event of their own: the owner reconciles the whole folder.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from ..health import ThreadHealth
from .overflow import watch_overflows
from .roots import links_on_path
from .scheduler import ChangeScheduler
from .walk import limit_watchdog_walks

__all__ = ["ChangeScheduler", "FolderWatcher", "WatchMode", "WatchTimings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WatchTimings:
    """Delays (seconds) between an event and the moment its path is loaded."""

    settle: float = 0.0
    debounce: float = 0.05
    disappear_grace: float = 0.05
    """How long a known file may be missing before its tools go (the loader holds it, not the watcher)."""


class WatchMode(StrEnum):
    """How a folder is being watched: a typed fact for consoles and health checks."""

    EVENTS = "events"
    """The OS reports changes (inotify, FSEvents, ...): the usual latency."""
    POLLING = "polling"
    """The OS refused another watch (its watch or instance limit): the folder is scanned periodically."""
    NONE = "none"
    """Not watched: the folder does not exist (yet), or the watcher is stopped."""


class _Handler(FileSystemEventHandler):
    """Hands every event of one watch to the watcher; a failure is logged, never raised into watchdog."""

    def __init__(self, handle: Callable[[FileSystemEvent], None]) -> None:
        self._handle = handle

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self._handle(event)
        except Exception:
            logger.exception("event=<%s> | could not handle file event", event)


def _as_path(raw: str | bytes, alias: tuple[Path, Path] | None = None) -> Path:
    path = Path(raw.decode() if isinstance(raw, bytes) else raw)
    if alias is not None:
        real, given = alias
        if path == real:
            return given
        if real in path.parents:
            return given / path.relative_to(real)
    return path


@dataclass(frozen=True, slots=True)
class _Watch:
    watch: ObservedWatch
    real: Path
    inode: int
    mode: WatchMode
    handler: FileSystemEventHandler
    tried_events: float = 0.0
    """When events were last asked for (``time.monotonic()``), for a polled folder."""


_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
"""The events the loader acts on. Asked of the OS as the inotify mask: opens, reads
(``IN_OPEN``, ``IN_CLOSE_NOWRITE``, the loader's own read of every saved file among
them) and folder-modified events are never generated, so watchdog's three threads
do not wake for them and take the GIL in the middle of a reload."""

_LIMIT_ERRORS = (errno.EMFILE, errno.ENOSPC, errno.ENFILE)
"""What the OS says when it will not give out another watch (instances, watches, descriptors)."""


class FolderWatcher:
    """Watches folders with watchdog and feeds a ``ChangeScheduler``.

    ``on_dir`` is called with a folder that appeared or vanished, so the owner
    can reconcile everything under it (watchdog does not list the files of a
    folder that was moved in). A folder reached through links is re-followed
    when one of them changes; a folder the OS will not watch any more (its
    inotify limits) is polled instead. ``matters`` says whether a file's events
    can change anything (a tool source, a package ``__init__``, a file the loader
    knows); an editor's temporary then costs no batch before the rename that
    lands the real file. ``on_overflow`` is called (on watchdog's thread) when the
    kernel dropped events because its queue overflowed (``loader.reload.overflow``).
    """

    def __init__(
        self,
        scheduler: ChangeScheduler,
        timings: WatchTimings,
        *,
        recursive: bool,
        on_dir: Callable[[Path], None] = lambda path: None,
        matters: Callable[[Path], bool] = lambda path: True,
        on_overflow: Callable[[], None] = lambda: None,
        poll_interval: float = 0.5,
        events_retry: float = 30.0,
        threads: ThreadHealth | None = None,
    ) -> None:
        self._scheduler = scheduler
        self._threads = threads if threads is not None else ThreadHealth()
        self._matters = matters
        self._timings = timings
        self._recursive = recursive
        self._on_dir = on_dir
        self._poll_interval = poll_interval
        self._events_retry = events_retry
        self._observer: BaseObserver | None = None
        self._poller: BaseObserver | None = None
        self._watches: dict[Path, _Watch] = {}
        self._link_watches: dict[Path, _Watch] = {}
        # Read by handlers on the observer thread without the lock (which would
        # invert the order with watchdog's own lock): replaced, never mutated.
        self._links: dict[Path, frozenset[Path]] = {}
        self._roots: tuple[Path, ...] = ()
        self._warned: dict[Path, int | None] = {}
        self._link_handler = _Handler(self._on_link_event)
        self._on_overflow = on_overflow
        self._stop_hearing_overflows: Callable[[], None] | None = None
        self._lock = threading.Lock()

    def connect(self, *, on_dir: Callable[[Path], None], on_overflow: Callable[[], None]) -> None:
        """Set the callbacks of an owner built after the watcher; call before ``start``."""
        self._on_dir = on_dir
        self._on_overflow = on_overflow

    def start(self) -> None:
        """Start the observer thread."""
        with self._lock:
            if self._observer is None:
                self._stop_hearing_overflows = watch_overflows(self._on_overflow)
                limit_watchdog_walks()
                observer = Observer()
                observer.daemon = True
                self._threads.watch(observer)
                observer.start()
                self._observer = observer

    def stop(self) -> None:
        """Stop watching everything (event and polling observers alike)."""
        with self._lock:
            observers = [o for o in (self._observer, self._poller) if o is not None]
            self._observer = self._poller = None
            self._watches.clear()
            self._link_watches.clear()
            self._links = {}
            self._roots = ()
            stop_hearing, self._stop_hearing_overflows = self._stop_hearing_overflows, None
        if stop_hearing is not None:
            stop_hearing()
        for observer in observers:
            observer.stop()
        for observer in observers:
            observer.join(5)

    def ensure_watch(self, root: Path) -> bool:
        """Watch ``root`` if it exists and is not watched yet, or was recreated or re-pointed.

        Returns True if a watch was newly scheduled (the owner then reconciles the folder).
        """
        with self._lock:
            if self._observer is None:
                return False
            self._follow_links(root)
            try:
                real = Path(os.path.realpath(root))
                inode = real.stat().st_ino
            except OSError:
                self._drop(root)
                return False
            current = self._watches.get(root)
            if current is not None and (current.real, current.inode) == (real, inode):
                if current.mode is WatchMode.POLLING:
                    return self._retry_events(root, current)
                return False
            self._drop(root)
            # watchdog does not follow a link it is asked to watch (inotify's IN_DONT_FOLLOW):
            # watch the real folder and spell its events under the folder as given.
            alias = (real, root) if real != root else None
            handler = _Handler(functools.partial(self._on_event, alias=alias))
            scheduled = self._schedule(real, handler, recursive=self._recursive)
            if scheduled is None:
                return False
            self._watches[root] = _Watch(scheduled[0], real, inode, scheduled[1], handler, time.monotonic())
            self._roots = tuple(self._watches)
            return True

    def mode(self, root: Path) -> WatchMode:
        """How ``root`` is watched right now."""
        with self._lock:
            current = self._watches.get(root)
            return current.mode if current is not None else WatchMode.NONE

    def _schedule(
        self, path: Path, handler: FileSystemEventHandler, *, recursive: bool
    ) -> tuple[ObservedWatch, WatchMode] | None:
        """Schedule a watch with the OS's events, or with polling when the OS is out of watches."""
        try:
            watch = self._schedule_events(path, handler, recursive=recursive)
        except OSError as exc:
            if exc.errno not in _LIMIT_ERRORS:
                self._warn_once(path, exc, "could not watch folder")
                return None
            error: OSError = exc
        else:
            self._warned.pop(path, None)
            return watch, WatchMode.EVENTS
        if self._poller is None:
            poller = PollingObserver(timeout=self._poll_interval)
            poller.daemon = True
            self._threads.watch(poller)
            poller.start()
            self._poller = poller
        try:
            watch = self._poller.schedule(handler, str(path), recursive=recursive, event_filter=_EVENT_FILTER)
        except OSError as exc:
            self._warn_once(path, exc, "could not poll folder")
            return None
        self._watch_emitters(self._poller)
        self._warn_once(path, error, "the OS gives no more watches; polling the folder instead")
        return watch, WatchMode.POLLING

    def _schedule_events(
        self, path: Path, handler: FileSystemEventHandler, *, recursive: bool
    ) -> ObservedWatch:
        """Ask the OS for events; on failure, take back the handler watchdog kept for the watch."""
        assert self._observer is not None
        try:
            observer = self._observer
            watch = observer.schedule(handler, str(path), recursive=recursive, event_filter=_EVENT_FILTER)
            self._watch_emitters(observer)
            return watch
        except OSError:
            try:
                self._observer.remove_handler_for_watch(
                    handler, ObservedWatch(str(path), recursive=recursive, event_filter=_EVENT_FILTER)
                )
            except KeyError:
                pass
            raise

    def _watch_emitters(self, observer: BaseObserver) -> None:
        """The threads watchdog made for the watches are loader threads too: their death is a fault."""
        for emitter in observer.emitters:
            self._threads.watch(emitter)

    def _retry_events(self, root: Path, current: _Watch) -> bool:
        """Now and then, ask again for events for a polled folder; True once they are back."""
        now = time.monotonic()
        if now - current.tried_events < self._events_retry:
            return False
        try:
            watch = self._schedule_events(current.real, current.handler, recursive=self._recursive)
        except OSError:
            self._watches[root] = replace(current, tried_events=now)
            return False
        self._unschedule(current)
        self._watches[root] = replace(current, watch=watch, mode=WatchMode.EVENTS)
        self._warned.pop(current.real, None)
        logger.info("path=<%s> | the OS gives watches again; events replace polling", root)
        return True

    def _warn_once(self, path: Path, exc: OSError, what: str) -> None:
        """Log a watch problem once per folder and error, not on every supervision tick."""
        if self._warned.get(path, -1) == exc.errno:
            return
        self._warned[path] = exc.errno
        logger.warning("path=<%s>, errno=<%s> | %s: %s", path, exc.errno, what, exc.strerror or exc)

    def _drop(self, root: Path) -> None:
        current = self._watches.pop(root, None)
        if current is not None:
            self._unschedule(current)
            self._roots = tuple(self._watches)

    def _unschedule(self, current: _Watch) -> None:
        observer = self._poller if current.mode is WatchMode.POLLING else self._observer
        if observer is not None:
            try:
                observer.unschedule(current.watch)
            except (KeyError, OSError):
                pass

    def _follow_links(self, root: Path) -> None:
        """Watch the folders holding the links ``root`` passes through now, and no others."""
        links = {link: set(roots) - {root} for link, roots in self._links.items()}
        for link in links_on_path(root):
            links.setdefault(link, set()).add(root)
        self._links = {link: frozenset(roots) for link, roots in links.items() if roots}
        folders = {link.parent for link in self._links}
        for folder in [f for f in self._link_watches if f not in folders]:
            self._unschedule(self._link_watches.pop(folder))
        for folder in folders - set(self._link_watches):
            scheduled = self._schedule(folder, self._link_handler, recursive=False)
            if scheduled is not None:
                self._link_watches[folder] = _Watch(
                    scheduled[0], folder, 0, scheduled[1], self._link_handler, time.monotonic()
                )

    def _refollow(self, root: Path) -> None:
        """A link on the way to ``root`` changed: watch where it points now and reconcile everything."""
        self.ensure_watch(root)
        self._on_dir(root)

    def _on_link_event(self, event: FileSystemEvent) -> None:
        links = self._links
        paths = [_as_path(event.src_path)]
        if event.event_type == "moved":
            paths.append(_as_path(event.dest_path))
        for path in paths:
            for root in links.get(path, ()):
                self._scheduler.submit(functools.partial(self._refollow, root))

    def _root_holding(self, path: Path) -> Path | None:
        best: Path | None = None
        for root in self._roots:
            if (root == path or root in path.parents) and (best is None or len(root.parts) > len(best.parts)):
                best = root
        return best

    def _on_event(self, event: FileSystemEvent, alias: tuple[Path, Path] | None = None) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        src = _as_path(event.src_path, alias)
        dest = _as_path(event.dest_path, alias) if kind == "moved" else src
        timings = self._timings
        if kind in ("created", "moved"):
            landed = dest
            if not landed.name.endswith(".py") and os.path.islink(landed):
                # A link to a folder was (re)placed, e.g. a ConfigMap's ``..data`` swap:
                # the files reached through it changed without an event of their own.
                root = self._root_holding(landed)
                if root is not None:
                    self._on_dir(root)
        if event.is_directory:
            if kind == "moved":
                self._on_dir(src)
                self._on_dir(dest)
            elif kind in ("created", "deleted"):
                self._on_dir(src)
            return
        if kind == "moved":
            # A rename lands a complete file: load the destination at once.
            if self._matters(src):
                self._scheduler.note(src, timings.settle)
            if self._matters(dest):
                self._scheduler.apply_now(dest)
            return
        if not self._matters(src):
            return  # an editor's temporary, a backup, a file in an ignored folder: no batch for it
        if kind == "closed":
            self._due(src, timings.settle)
        elif kind == "deleted":
            self._scheduler.note(src, timings.settle)
        elif kind == "created" and os.path.islink(src):
            # Making a link is one atomic step: nothing more will be written.
            self._due(src, timings.settle)
        else:  # created, modified
            self._scheduler.note(src, timings.debounce)

    def _due(self, path: Path, delay: float) -> None:
        """Schedule ``path`` after ``delay``; with none, apply it right here if the scheduler is idle."""
        if delay > 0:
            self._scheduler.note(path, delay)
        else:
            self._scheduler.apply_now(path)
