"""Finding what the events missed: compare the disk with what the loader last read.

Events can be lost (a folder created and filled before its watch exists, a
kernel queue overflow, a network filesystem). Reconciling lists the sources
under a folder and schedules every file whose stat signature differs from the
one its record holds, and every known file no longer there. It runs when a
folder appears or vanishes and when ``wait_idle`` wants certainty. The
periodic safety net is the ``Rescanner``, on its own thread so it never
delays a reload; what it finds is handed to the scheduler here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ..health import ThreadHealth
from ..importing.backend import LoadBackend
from .config import LoaderConfig
from .file_state import FileRecord, stat_signature
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
        threads: ThreadHealth | None = None,
    ) -> None:
        self._roots = roots
        self._records = records
        self._sources = sources
        self._backend = backend
        self._scheduler = scheduler
        self._watcher = watcher
        self._config = config
        self._rescanner = Rescanner(
            roots,
            self._rescan_found,
            interval=config.rescan_interval,
            recursive=config.recursive,
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

    def reconcile_all(self) -> None:
        """Reconcile every watched folder."""
        for root in self._roots:
            self.reconcile(root)

    def reconcile(self, under: Path) -> None:
        """Schedule every file below ``under`` whose stat differs from what was last read."""
        root = self._backend.root_of(under)
        if root is None:
            return
        on_disk = set(self._sources.list_sources(root, under)) if under.is_dir() else set()
        # A package __init__ the loader never read is not news: it loads with its package.
        self._note_differences(p for p in on_disk if p.name != "__init__.py" or p in self._records)
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
        disappear grace (``FileRecord.gone_wait``).
        """
        changed = [path for path in listed if _differs(self._records.get(path), stat_signature(path))]
        if changed:
            self._scheduler.note_many(changed, self._config.timings.settle)
        return changed

    def supervise(self) -> None:
        """Periodic: watch folders that appeared or were recreated."""
        for root in self._roots:
            if self._watcher.ensure_watch(root) or not root.is_dir():
                self.reconcile(root)


def _differs(record: FileRecord | None, signature: tuple[int, int, int] | None) -> bool:
    """Whether a path on disk differs from what the loader last read of it (reconcile and rescan)."""
    if record is None or record.is_removed:
        return signature is not None
    return record.signature != signature
