"""The safety net for file events the OS dropped: a periodic look at the disk, off the apply thread.

Watching misses changes when the kernel's event queue overflows (a ``git
checkout`` of thousands of files) or a watch is briefly gone. A full stat walk
every few seconds would catch them, but its cost grows with the folder,
and on the thread that applies saves it would hold every save behind it. So
``Rescanner`` runs on its own thread and does less work than a full walk:

* every pass stats each *folder*: a folder's mtime changes whenever an entry
  is added, removed or renamed in it, so only folders whose mtime moved are
  listed again, and each of their ``.py`` files is stat'ed;
* files written in place leave their folder's mtime alone, so every pass also
  stats a rotating slice of the other files (1/``slices`` of them), and every
  file is checked at least once every ``slices`` passes;
* a folder or file whose mtime is within ``RACY_NS`` of the moment it was
  looked at is looked at again next pass (timestamps are coarse, so a second
  change in the same tick would keep the mtime: git's "racily clean" rule).

It hands the paths that look changed (new, gone, or a different inode, size or
mtime than at its last look) to ``report``, which answers with those that were
news to its owner (the loader compares them with what it last read; most were
already delivered by their events). News about a file last written more than
``FRESH_NS`` ago means its event was lost (the kernel's queue overflowed, say)
or is very late, so the next pass runs at once and stats every file: a burst of
in-place writes is then recovered in one full pass instead of ``slices``
intervals. (Younger news is most likely an event still on its way.)
The first pass reports every file it finds: the owner compares each with what it
read, so a change made between the owner's scan and this first look, its event
lost, is not taken for the state the owner already knows.

Stats cannot tell everything: a file rewritten in place at the same size within
one clock tick keeps its signature. For the few files that failed or got stuck,
whose bytes on disk must run again as soon as they differ from those tried, every
pass also calls ``look_closer``, where the owner compares their content.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..health import ThreadHealth
from .sources import is_ignored_dir
from .walk import MAX_FOLDER_DEPTH, warn_too_deep

__all__ = ["FRESH_NS", "RACY_NS", "RescanStats", "Rescanner"]

logger = logging.getLogger(__name__)

RACY_NS = 50_000_000
"""An mtime this close (ns) to the moment it was read may hide a second change in the same tick."""

FRESH_NS = 1_000_000_000
"""News about a file written less than this long ago (ns) is left to its event: no full pass for it."""

_YIELD_EVERY = 256
"""Stats between explicit GIL hand-overs, so a save never waits behind a long run of Python code."""

Signature = tuple[int, int, int]


@dataclass(slots=True)
class _Folder:
    """What the last listing of one folder found."""

    mtime_ns: int
    files: dict[str, Signature | None]
    subdirs: list[str]
    racy: bool


@dataclass(slots=True)
class RescanStats:
    """What one pass did, for benchmarks and logs."""

    folders: int = 0
    listed: int = 0
    stats: int = 0
    changed: int = 0
    seconds: float = 0.0
    full: bool = False
    tracked_files: int = 0


def _file_signature(path: str) -> Signature | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Rescanner:
    """Finds files that changed without an event; ``scan_once`` is one pass, ``start`` repeats it.

    Args:
        roots: The watched folders (resolved).
        report: Called, on the rescanner's thread, with the paths that look changed (after the
            first pass: every file); returns those that were news to the owner (a full pass follows
            at once if one is not fresh).
        interval: Seconds between passes.
        slices: Every pass stats this fraction (1/slices) of the files in unchanged folders.
        recursive: Look into sub-folders.
        look_closer: Called, on the rescanner's thread, after every pass (the baseline
            excepted): the owner compares the content of the files stats cannot vouch for.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        report: Callable[[list[Path]], Collection[Path]],
        *,
        interval: float = 2.0,
        slices: int = 8,
        recursive: bool = True,
        name: str = "tool-loader-rescan",
        look_closer: Callable[[], None] | None = None,
        threads: ThreadHealth | None = None,
    ) -> None:
        self._threads = threads if threads is not None else ThreadHealth()
        self._roots = tuple(str(root) for root in roots)
        self._report = report
        self._look_closer = look_closer
        self._interval = interval
        self._slices = max(1, slices)
        self._recursive = recursive
        self._name = name
        self._folders: dict[str, _Folder] = {}
        self._racy: dict[str, set[str]] = {}
        self._pass = 0
        self.passes = 0
        """Passes completed, the baseline included."""
        self._baseline = False
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._full_requested = False
        self._thread: threading.Thread | None = None
        self.last = RescanStats()
        self.recoveries = 0
        """Full passes run because a pass found changes its owner had not heard of."""

    # ----------------------------------------------------------------- thread
    def start(self) -> None:
        """Take a baseline, then run a pass every ``interval`` seconds on a daemon thread."""
        if self._thread is not None or self._interval <= 0:
            return
        self._stopping.clear()
        go = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(go,), name=self._name, daemon=True)
        self._threads.watch(self._thread)
        self._thread.start()
        # The thread waits for this: started straight into its baseline pass, it would keep the
        # GIL from the starter, which Thread.start() has just put to sleep, for a switch interval.
        go.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the pass in progress."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def request_full(self) -> None:
        """Stat every file on the next pass, and run it now (e.g. after the event queue overflowed)."""
        self._full_requested = True
        self._wake.set()

    def step(self) -> None:
        """One pass as the thread runs it: report the changes; news makes the next step a full pass."""
        full, self._full_requested = self._full_requested, False
        baseline = not self._baseline
        changed = self.scan_once(full=full)
        if baseline:
            changed = self.files()
        news = self._report(changed) if changed else ()
        if self._look_closer is not None and not baseline:
            self._look_closer()
        if not full and any(self._stale(path) for path in news):
            self.recoveries += 1
            logger.warning(
                "rescanner=<%s>, paths=<%d> | changes without events: checking every file now",
                self._name,
                len(changed),
            )
            self._full_requested = True

    def _run(self, go: threading.Event) -> None:
        go.wait()
        while not self._stopping.is_set():
            try:
                self.step()
            except Exception:
                logger.exception("rescanner=<%s> | pass failed", self._name)
            if not self._full_requested:
                self._wake.wait(self._interval)
            self._wake.clear()

    def _stale(self, path: Path) -> bool:
        """Whether ``path`` was last changed long enough ago for its event to have arrived."""
        folder = self._folders.get(str(path.parent))
        signature = None if folder is None else folder.files.get(path.name)
        return signature is None or time.time_ns() - signature[2] >= FRESH_NS

    def files(self) -> list[Path]:
        """Every file the last pass saw."""
        return [Path(directory, name) for directory, folder in self._folders.items() for name in folder.files]

    # ------------------------------------------------------------------ a pass
    def scan_once(self, *, full: bool = False) -> list[Path]:
        """One pass; returns the paths that look changed since the last pass (none on the first)."""
        started = time.perf_counter()
        full = full or not self._baseline
        stats = RescanStats(full=full)
        slot = self._pass % self._slices
        self._pass += 1
        racy, self._racy = self._racy, {}
        changed: list[str] = []
        visited: set[str] = set()
        for directory, listed in self._walk(visited, stats, changed):
            if listed:
                continue  # every file in it was stat'ed just now
            folder = self._folders[directory]
            names = list(folder.files)
            self._check(directory, folder, names if full else names[slot :: self._slices], stats, changed)
            again = racy.get(directory)
            if again and not full:
                self._check(directory, folder, [n for n in again if n in folder.files], stats, changed)
        for directory in [d for d in self._folders if d not in visited]:
            gone = self._folders.pop(directory)
            changed.extend(os.path.join(directory, name) for name in gone.files)
        stats.tracked_files = sum(len(f.files) for f in self._folders.values())
        stats.seconds = time.perf_counter() - started
        self.passes += 1
        if not self._baseline:
            self._baseline = True
            self.last = stats
            return []
        found = [Path(p) for p in dict.fromkeys(changed)]
        stats.changed = len(found)
        self.last = stats
        return found

    def _walk(self, visited: set[str], stats: RescanStats, changed: list[str]) -> Iterator[tuple[str, bool]]:
        """Every folder below the roots, depth first, and whether it was listed (changed) in this pass."""
        stack = [(root, 0) for root in reversed(self._roots)]
        while stack:
            directory, depth = stack.pop()
            if directory in visited:
                continue
            try:
                mtime_ns = os.stat(directory).st_mtime_ns
            except OSError:
                continue  # gone: its files are reported with the other vanished folders
            visited.add(directory)
            stats.folders += 1
            folder = self._folders.get(directory)
            listed = folder is None or folder.mtime_ns != mtime_ns or folder.racy
            if listed:
                folder = self._relist(directory, mtime_ns, folder, stats, changed)
            assert folder is not None
            if stats.folders % _YIELD_EVERY == 0:
                time.sleep(0)
            yield directory, listed
            if not self._recursive or not folder.subdirs:
                continue
            if depth >= MAX_FOLDER_DEPTH:
                warn_too_deep(os.path.join(directory, folder.subdirs[0]), MAX_FOLDER_DEPTH)
                continue
            stack.extend((os.path.join(directory, d), depth + 1) for d in reversed(folder.subdirs))

    def _relist(
        self, directory: str, mtime_ns: int, old: _Folder | None, stats: RescanStats, changed: list[str]
    ) -> _Folder:
        """List a folder whose entries changed; stat its files, report new, gone and changed ones."""
        stats.listed += 1
        names: list[str] = []
        subdirs: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if not is_ignored_dir(entry.name):
                            subdirs.append(entry.name)
                    elif entry.name.endswith(".py"):
                        names.append(entry.name)
        except OSError:
            pass
        subdirs.sort()
        names.sort()
        now = time.time_ns()
        folder = _Folder(mtime_ns, {}, subdirs, racy=now - mtime_ns < RACY_NS)
        self._folders[directory] = folder
        known = {} if old is None else old.files
        self._check(directory, folder, names, stats, changed, known=known)
        changed.extend(os.path.join(directory, name) for name in known if name not in folder.files)
        return folder

    def _check(
        self,
        directory: str,
        folder: _Folder,
        names: list[str],
        stats: RescanStats,
        changed: list[str],
        *,
        known: dict[str, Signature | None] | None = None,
    ) -> None:
        """Stat ``names``; a signature unlike the one ``known`` (default: the last seen) is a change."""
        before = folder.files if known is None else known
        now = time.time_ns()
        for index, name in enumerate(names, 1):
            path = os.path.join(directory, name)
            signature = _file_signature(path)
            stats.stats += 1
            if name not in before or signature != before[name]:
                changed.append(path)
            folder.files[name] = signature
            if signature is not None and now - signature[2] < RACY_NS:
                self._racy.setdefault(directory, set()).add(name)
            if index % _YIELD_EVERY == 0:
                time.sleep(0)
