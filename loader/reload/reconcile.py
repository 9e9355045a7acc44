"""Finding what the events missed: compare the disk with what the loader last read.

Events can be lost (a folder created and filled before its watch exists, a
kernel queue overflow, a network filesystem). Reconciling lists the sources
under a folder and schedules every file whose stat signature differs from the
one its record holds, and every known file no longer there. It runs when a
folder appears or vanishes and when ``wait_idle`` wants certainty. The
periodic safety net is the ``Rescanner``, on its own thread so it never
delays a reload; what it finds is handed to the scheduler here.

After the kernel's event queue overflowed, a stat cannot be trusted to tell:
a file rewritten in place at its old size within one clock tick (or with its
mtime put back, as ``tar`` and ``rsync -t`` do) keeps its signature. Every
watched folder is then reconciled by content: each source is read and its
hash compared with what its record settled on.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..health import ThreadHealth
from ..importing.backend import LoadBackend
from .config import LoaderConfig
from .disk import read_file
from .file_state import FileRecord, Phase, stat_signature
from .rescan import Rescanner
from .sources import SourceFinder
from .watcher import ChangeScheduler, FolderWatcher

__all__ = ["Reconciler"]


class Reconciler:
    """Schedules the paths whose disk state differs from the loader's records (scheduler thread)."""

    def __init__(
        self,
        roots: tuple[Path, ...],
        records: Mapping[Path, FileRecord],
        *,
        sources: SourceFinder,
        backend: LoadBackend,
        scheduler: ChangeScheduler,
        watcher: FolderWatcher,
        config: LoaderConfig,
        importing: Callable[[Path], bool] = lambda path: False,
        threads: ThreadHealth | None = None,
    ) -> None:
        self._roots = roots
        self._records = records
        self._sources = sources
        self._backend = backend
        self._scheduler = scheduler
        self._watcher = watcher
        self._config = config
        self._importing = importing
        self._lock = threading.Lock()
        self._content_pass_queued = False
        self._rescanner = Rescanner(
            roots,
            self._rescan_found,
            interval=config.rescan_interval,
            recursive=config.recursive,
            look_closer=self._recheck_unsettled,
            threads=threads,
        )

    def start(self) -> None:
        """Start the periodic safety-net rescan (off the scheduler thread)."""
        self._rescanner.start()

    def stop(self) -> None:
        """Stop the periodic rescan."""
        self._rescanner.stop()

    def _rescan_found(self, paths: list[Path]) -> list[Path]:
        """On the rescanner's thread: schedule what differs from the records; returns the known files."""
        missed = self._note_differences(paths)
        return [p for p in missed if (r := self._records.get(p)) is not None and not r.is_removed]

    def _recheck_unsettled(self) -> None:
        """On the rescanner's thread: schedule failed and stuck files whose bytes are not the ones tried.

        Their stat may be what was last read while their content is not (an in-place
        rewrite at the same size within one clock tick, its event lost); they are few,
        so reading them is cheap, and they would otherwise fail until the next save.
        """
        unsettled = [
            path
            for path, record in list(self._records.items())
            if record.phase in _UNSETTLED and record.attempted_hash is not None and not self._importing(path)
        ]
        self._note_content_differences(unsettled)

    def events_lost(self) -> None:
        """The kernel dropped events (any thread): reconcile every folder by content, on the scheduler.

        Overflows come in runs during a long burst; one pass still waiting covers them all.
        """
        with self._lock:
            if self._content_pass_queued:
                return
            self._content_pass_queued = True
        self._scheduler.submit(self._reconcile_all_by_content)

    def _reconcile_all_by_content(self) -> None:
        with self._lock:
            self._content_pass_queued = False
        for root in self._roots:
            self.reconcile(root, by_content=True)

    def reconcile_all(self) -> None:
        """Reconcile every watched folder."""
        for root in self._roots:
            self.reconcile(root)

    def reconcile(self, under: Path, *, by_content: bool = False) -> None:
        """Schedule every file below ``under`` whose stat (or, ``by_content``, bytes) differs from
        what was last read or loaded."""
        root = self._backend.root_of(under)
        if root is None:
            return
        on_disk = set(self._sources.list_sources(root, under)) if under.is_dir() else set()
        # A package __init__ the loader never read is not news: it loads with its package.
        listed = [p for p in on_disk if p.name != "__init__.py" or p in self._records]
        if by_content:
            self._note_content_differences(listed)
        else:
            self._note_differences(listed)
        gone = [
            p
            for p, r in self._records.items()
            if not r.is_removed and p not in on_disk and (p == under or under in p.parents)
        ]
        if gone:
            self._scheduler.note_many(gone, self._config.timings.settle)  # the batch holds the grace

    def _note_differences(self, listed: Iterable[Path]) -> list[Path]:
        """Schedule every listed path whose disk state differs from its record; returns them.

        A path listed a moment ago may be gone by its stat (a save in progress:
        vim renames the file to a backup, then writes it anew). It is scheduled
        like any other; the batch that finds it gone keeps its tools for the
        disappear grace (``FileRecord.absent_wait``).
        """
        changed = [path for path in listed if _differs(self._records.get(path), stat_signature(path))]
        if changed:
            self._scheduler.note_many(changed, self._config.timings.settle)
        return changed

    def _note_content_differences(self, listed: Iterable[Path]) -> None:
        """Schedule every listed file whose bytes are not those its record settled on."""
        changed = [path for path in listed if not _settled_on(self._records.get(path), _digest(path))]
        if changed:
            self._scheduler.note_many(changed, self._config.timings.settle)

    def supervise(self) -> None:
        """Periodic: watch folders that appeared or were recreated."""
        for root in self._roots:
            if self._watcher.ensure_watch(root) or not root.is_dir():
                self.reconcile(root)


_UNSETTLED = (Phase.FAILED, Phase.STUCK, Phase.REJECTED)
"""The phases whose bytes the safety net compares by content: they serve an older version."""


def _digest(path: Path) -> str | None:
    """The sha256 of the file's bytes; None when it cannot be read (its stat tells those apart)."""
    data = read_file(path)
    return hashlib.sha256(data).hexdigest() if isinstance(data, bytes) else None


def _settled_on(record: FileRecord | None, digest: str | None) -> bool:
    """Whether the loader already did what ``digest`` asks: serves it, or tried it and it failed."""
    if record is None or record.is_removed:
        return digest is None
    if digest is None:
        return True
    if record.phase in _UNSETTLED:
        return digest == record.attempted_hash
    return digest == record.content_hash or (record.grace is not None and digest == record.grace.content_hash)


def _differs(record: FileRecord | None, signature: tuple[int, int, int] | None) -> bool:
    """Whether a path on disk differs from what the loader last read of it (reconcile and rescan)."""
    if record is None or record.is_removed:
        return signature is not None
    return record.signature != signature
