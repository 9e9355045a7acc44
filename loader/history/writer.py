"""Writing history off the reload path: a background thread, a bounded queue, a record that never blocks.

The loader announces a version that went live on the thread that applies
saves; a SQLite write there waits for any other process holding the
database's write lock (the busy timeout, per tool), and every save behind it
waits too. So the recorder only queues what went live; this thread writes it.
A busy database delays the record; when the queue is full, further versions
are dropped and counted, and the count is written as an event once the
database takes writes again. A database that turns out corrupt is set aside
and a fresh one started; one that cannot be opened at all turns history off
for its folder, with a warning.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ..health import ThreadHealth
from .component_store import NewComponentVersion
from .store import (
    HistoryError,
    HistoryEvent,
    HistoryEventKind,
    HistoryStore,
    NewVersion,
    is_corruption,
    open_store,
    set_aside_corrupt,
)

__all__ = ["DEFAULT_QUEUE_LIMIT", "ComponentRemoval", "HistoryWriter", "Item", "Record", "Removal"]

logger = logging.getLogger(__name__)

DEFAULT_QUEUE_LIMIT = 1000
"""Versions waiting to be written before further ones are dropped (and counted)."""

_BUSY_RETRY = 0.5


@dataclass(frozen=True, slots=True)
class Record:
    """A tool or component version that went live, to be written to the store of ``root``."""

    root: Path
    version: NewVersion | NewComponentVersion
    stale: bool


@dataclass(frozen=True, slots=True)
class Removal:
    """A tool that left the registry at ``at``."""

    root: Path
    tool: str
    at: float


@dataclass(frozen=True, slots=True)
class ComponentRemoval:
    """A component (``kind``, ``key``) that left the registry at ``at``."""

    root: Path
    kind: str
    key: str
    at: float


Item = Record | Removal | ComponentRemoval
"""What the writer's queue holds."""


@dataclass(slots=True)
class _Drops:
    count: int
    since: float


class HistoryWriter:
    """Writes ``Record`` s and ``Removal`` s in order, on its own thread; ``submit`` never waits."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str] | None,
        *,
        keep: int,
        limit: int,
        threads: ThreadHealth | None = None,
    ) -> None:
        if limit < 1:
            raise ValueError(f"the history queue limit must be at least 1, got {limit}")
        self.state_dir = state_dir
        self.keep = keep
        self.limit = limit
        self.dropped = 0
        """Versions and removals dropped because the queue was full (or history was off)."""
        self._queue: deque[Item] = deque()
        self._busy = 0  # items taken off the queue and not yet written
        self._cond = threading.Condition()
        self._stores: dict[Path, HistoryStore] = {}
        self._off: set[Path] = set()
        self._drops: dict[Path, _Drops] = {}
        self._stores_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closing = False
        self.threads = threads if threads is not None else ThreadHealth()
        """Whose health this writer's thread counts in (the loader's, once the recorder knows it)."""

    # ------------------------------------------------------------ callers
    def submit(self, item: Item) -> bool:
        """Queue ``item``; False (and counted) when the queue is full."""
        with self._cond:
            if self._closing:
                return False
            if len(self._queue) >= self.limit:
                self._drop(item.root)
                return False
            self._queue.append(item)
            self._start()
            self._cond.notify_all()
        return True

    def store(self, root: Path) -> HistoryStore | None:
        """The store of ``root``, opened on first use (None while history is off for it).

        Raises:
            HistoryError: It cannot be opened (history is then off for ``root``).
        """
        with self._stores_lock:
            store = self._stores.get(root)
            if store is not None or root in self._off:
                return store
            try:
                store = open_store(root, self.state_dir, keep=self.keep)
            except HistoryError:
                self._off.add(root)
                raise
            self._stores[root] = store
            return store

    def flush(self, timeout: float) -> bool:
        """Wait until everything queued so far is written (or dropped); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (within ``timeout``), note unnoted drops, close the stores."""
        self.flush(timeout)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():  # stuck on a busy database: its store is in use, leave it
                logger.warning("tool history: %d queued versions not written at exit", len(self._queue))
                return
        with self._stores_lock:
            for root, store in self._stores.items():
                self._note_drops(root, store)
                store.close()
            self._stores.clear()

    # ------------------------------------------------------------ the thread
    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="tool-loader-history", daemon=True)
            self.threads.watch(self._thread)
            self._thread.start()

    def _drop(self, root: Path, why: str = "tool history is behind (database busy?)") -> None:
        """Count a dropped item (under ``_cond``); warn once per run of drops."""
        self.dropped += 1
        drops = self._drops.get(root)
        if drops is None:
            self._drops[root] = _Drops(1, time.time())
            logger.warning("folder=<%s>, queued=<%d> | %s; dropping versions", root, len(self._queue), why)
        else:
            drops.count += 1

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                item = self._queue.popleft()
                self._busy += 1
            try:
                self._write(item)
            except Exception:
                logger.exception("folder=<%s> | could not record tool history", item.root)
            finally:
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()

    def _write(self, item: Item) -> None:
        """Write one item; a busy database is waited for, a corrupt one reset, an unusable one turned off."""
        resets = 0
        while True:
            try:
                store = self.store(item.root)
            except HistoryError as exc:
                logger.warning("folder=<%s> | tool history off: %s", item.root, exc)
                store = None
            if store is None:  # off for this folder, said once when it went off
                with self._cond:
                    self.dropped += 1
                return
            try:
                _apply(store, item)
            except sqlite3.Error as exc:
                if is_corruption(exc) and resets == 0:
                    resets += 1
                    self._reset(item.root, store, exc)
                    continue
                if _is_unwritable(exc):
                    # A full disk or a failing device: the versions until it takes writes again
                    # are dropped, counted and noted then, as when the queue overflows.
                    with self._cond:
                        self._drop(item.root, f"tool history cannot be written ({exc})")
                    return
                if not _is_busy(exc):
                    raise
                if self._closing:  # no more waiting: the process is on its way out
                    with self._cond:
                        self._drop(item.root)
                    return
                time.sleep(_BUSY_RETRY)
                continue
            self._note_drops(item.root, store)
            return

    def _reset(self, root: Path, store: HistoryStore, exc: sqlite3.Error) -> None:
        """The database went bad while open: set it aside and start a fresh one."""
        with self._stores_lock:
            self._stores.pop(root, None)
            store.close()
            set_aside = set_aside_corrupt(store.path)
        logger.warning(
            "path=<%s>, set_aside=<%s> | the tool history database is corrupt (%s); started a fresh one",
            store.path,
            set_aside,
            exc,
        )
        fresh = self.store(root)
        if fresh is not None:
            fresh.note_event(
                HistoryEvent(time.time(), HistoryEventKind.RESET, set_aside=set_aside, reason=str(exc))
            )

    def _note_drops(self, root: Path, store: HistoryStore) -> None:
        with self._cond:
            drops = self._drops.pop(root, None)
        if drops is None:
            return
        try:
            store.note_event(
                HistoryEvent(time.time(), HistoryEventKind.DROPPED, count=drops.count, since=drops.since)
            )
        except sqlite3.Error:
            with self._cond:  # said next time the database takes writes
                again = self._drops.setdefault(root, _Drops(0, drops.since))
                again.count += drops.count


def _apply(store: HistoryStore, item: Item) -> None:
    if isinstance(item, Removal):
        store.mark_removed(item.tool, at=item.at)
    elif isinstance(item, ComponentRemoval):
        store.mark_component_removed(item.kind, item.key, at=item.at)
    elif isinstance(item.version, NewVersion):
        recorded = store.record(item.version, stale=item.stale)
        if recorded is not None:
            logger.debug(
                "tool_name=<%s>, hash=<%s> | recorded tool version", recorded.tool, recorded.short_hash
            )
    else:
        component = store.record_component(item.version, stale=item.stale)
        if component is not None:
            logger.debug(
                "component=<%s:%s>, digest=<%s> | recorded component version",
                component.kind,
                component.key,
                component.digest,
            )


def _is_unwritable(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says the database cannot take writes now (full disk, I/O error, read-only)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY)
    text = str(exc).lower()
    return "disk is full" in text or "disk i/o error" in text or "readonly database" in text


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)
