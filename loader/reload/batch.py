"""Planning one reload batch: what is on disk now, what moved, and what must run again.

Given the paths whose events settled, a plan reads each file once, pairs the
two halves of a move, and adds every file that imported a changed module (it
must run against the new helper). Nothing here changes the registry or a
record: the loader carries the plan out.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..importing.backend import LoadBackend
from ..status import LoadErrorInfo, LoadErrorKind
from .disk import IS_A_LINK, names_a_file, read_file_stat, read_unlinked_file
from .file_state import FileRecord, SourceRead, source_read
from .path_order import sorted_paths
from .sources import SourceFinder

__all__ = ["BatchPlan", "load_order", "plan_batch"]


@dataclass(slots=True)
class BatchPlan:
    """What one batch will do."""

    present: dict[Path, SourceRead] = field(default_factory=dict)
    """Files on disk, read once for this batch."""
    missing: list[Path] = field(default_factory=list)
    """Known files gone from disk."""
    forced: set[Path] = field(default_factory=set)
    """Files that must run again because a module they imported changed."""
    refused: list[tuple[Path, LoadErrorInfo]] = field(default_factory=list)
    """Links leading out of their watched folder, and why they are refused."""
    unreadable: list[tuple[Path, LoadErrorInfo]] = field(default_factory=list)
    """Files on disk that could not be read, and the error."""
    waiting: dict[Path, float] = field(default_factory=dict)
    """Known files found missing within their disappear grace, and the seconds left: tools kept."""
    emptied: dict[Path, float] = field(default_factory=dict)
    """Helpers other files import, found empty within their empty grace, and the seconds left: neither
    they nor their dependents run (an editor truncates, then writes)."""
    moves: list[tuple[Path, Path]] = field(default_factory=list)
    """``(old, new)`` pairs: a known file that vanished and a new one that appeared with it."""
    stale_modules: list[str] = field(default_factory=list)
    """Modules to drop so their next import runs them again (packages, vanished helpers)."""


def plan_batch(
    paths: Iterable[Path],
    *,
    records: Mapping[Path, FileRecord],
    modules: Mapping[str, Path],
    backend: LoadBackend,
    sources: SourceFinder,
    roots: Iterable[Path],
    look_for_moves: bool,
    disappear_grace: float | None = None,
    empty_grace: float | None = None,
    now: float = 0.0,
) -> BatchPlan:
    """Plan the batch for ``paths`` (``modules`` maps loaded module names to their files).

    With ``disappear_grace`` (while watching), a known file found missing keeps
    its tools until it has been missing that long (``plan.waiting``); without
    it (a one-off scan) it is removed at once. With ``empty_grace``, a helper
    other files import that is found empty is held as long (``plan.emptied``);
    a tool file's own empty grace is its record's (``FileRecord.start_grace``).
    """
    plan = BatchPlan()
    changed_modules: list[str] = []
    gone = functools.partial(_gone, plan, changed_modules, grace=disappear_grace, now=now)
    for path in sorted_paths(paths):
        _look_at(plan, path, records.get(path), backend, sources, changed_modules, gone)
    emptied_for_good = _hold_emptied_helpers(plan, records, backend, empty_grace, now)
    _pair_moves(plan, records, sources, backend, roots, changed_modules, look_for_moves)
    for path, read in plan.present.items():
        if _content_changed(records.get(path), read.digest):
            changed_modules.append(backend.module_name_for(path))
    _add_dependents(plan, changed_modules, modules, records, backend, gone)
    plan.stale_modules.extend(emptied_for_good)
    return plan


def _look_at(
    plan: BatchPlan,
    path: Path,
    record: FileRecord | None,
    backend: LoadBackend,
    sources: SourceFinder,
    changed_modules: list[str],
    gone: Callable[[Path, FileRecord], None],
) -> None:
    """Sort one settled path into the plan: refused, a package, present, or gone."""
    root = backend.root_of(path)
    if root is None:
        return
    is_init = path.name == "__init__.py"
    # The folders above it are checked first: a file is never opened through a link out of the root.
    if not is_init and sources.is_source(path, root) and backend.is_within_root(path, root, no_link=True):
        read = read_unlinked_file(path)
        if read != IS_A_LINK:
            if isinstance(read, (tuple, OSError)):
                _take_read(plan, path, read)
            elif record is not None and not record.is_removed:
                gone(path, record)
            return
    # A link, or a file under a folder that is one: where it leads is checked here.
    exists = names_a_file(path) and sources.matters(path, root)
    if exists and not backend.is_within_root(path, root):
        message = f"link leads outside the watched folder {root} (to {os.path.realpath(path)}); not loaded"
        error = LoadErrorInfo("SymlinkRefused", message, str(path), None, kind=LoadErrorKind.LINK_REFUSED)
        plan.refused.append((path, error))
    elif is_init:
        changed_modules.append(backend.module_name_for(path))
    elif exists and _read_into(plan, path):
        return
    elif record is not None and not record.is_removed:
        gone(path, record)


def _gone(
    plan: BatchPlan,
    changed_modules: list[str],
    path: Path,
    record: FileRecord,
    *,
    grace: float | None,
    now: float,
) -> None:
    """A known file is not on disk: wait out its disappear grace, or let it go."""
    wait = record.absent_wait(now, grace) if grace is not None else None
    if wait is not None:
        plan.waiting[path] = wait
        return
    plan.missing.append(path)
    changed_modules.append(record.module_name)


def _hold_emptied_helpers(
    plan: BatchPlan, records: Mapping[Path, FileRecord], backend: LoadBackend, grace: float | None, now: float
) -> list[str]:
    """Move helpers found empty within their grace from ``plan.present`` to ``plan.emptied``; returns the
    modules of those empty for good (past the grace, or no grace: a one-off scan).

    A save that truncates and then writes can be read in between. For a tool
    file that empty moment is its record's grace; a helper serves nothing of its
    own, so without this hold every file that imports it would run against the
    empty module (and fail, or answer wrongly) and then run again once the bytes
    are there. A helper empty for good is dropped: empty content is not imported
    (``FileSteps``), so its dependents' next imports run the empty file, not its
    last version.
    """
    emptied_for_good: list[str] = []
    for path, read in list(plan.present.items()):
        record = records.get(path)
        if (
            record is None
            or record.is_removed
            or record.serves_anything
            or read.digest == record.content_hash
            or not read.blank
            or not backend.dependents([record.module_name])
        ):
            continue
        wait = record.absent_wait(now, grace) if grace is not None else None
        if wait is None:
            emptied_for_good.append(record.module_name)
        else:
            del plan.present[path]
            plan.emptied[path] = wait
    return emptied_for_good


def _content_changed(record: FileRecord | None, digest: str) -> bool:
    """Whether ``digest`` is neither what the file serves nor the empty content of its grace."""
    if record is None:
        return True
    return digest != record.content_hash and (record.grace is None or digest != record.grace.content_hash)


def _add_dependents(
    plan: BatchPlan,
    changed_modules: list[str],
    modules: Mapping[str, Path],
    records: Mapping[Path, FileRecord],
    backend: LoadBackend,
    gone: Callable[[Path, FileRecord], None],
) -> None:
    """Everything that imported a changed module runs again, dependencies first.

    Package ``__init__`` modules (not tool sources) and vanished helpers are
    dropped so their next import runs them again.
    """
    plan.stale_modules = [m for m in changed_modules if m not in modules]
    if not changed_modules:
        return
    for module_name in backend.dependents(changed_modules):
        dependent = modules.get(module_name)
        if dependent is None:
            plan.stale_modules.append(module_name)
            continue
        plan.forced.add(dependent)
        if not any(dependent in held for held in (plan.present, plan.missing, plan.waiting, plan.emptied)):
            if not _read_into(plan, dependent):
                gone(dependent, records[dependent])


def _read_into(plan: BatchPlan, path: Path) -> bool:
    """Read ``path`` into the plan; False if it vanished (an unreadable file counts as there)."""
    read = read_file_stat(path)
    if read is None:
        return False
    _take_read(plan, path, read)
    return True


def _take_read(plan: BatchPlan, path: Path, read: tuple[bytes, os.stat_result] | OSError) -> None:
    """Put what reading ``path`` gave into the plan: its content, or why it cannot be read."""
    if isinstance(read, OSError):
        error = LoadErrorInfo(type(read).__name__, str(read), str(path), None, kind=LoadErrorKind.UNREADABLE)
        plan.unreadable.append((path, error))
    else:
        plan.present[path] = source_read(*read)


def _pair_moves(
    plan: BatchPlan,
    records: Mapping[Path, FileRecord],
    sources: SourceFinder,
    backend: LoadBackend,
    roots: Iterable[Path],
    changed_modules: list[str],
    look_for_moves: bool,
) -> None:
    """Treat a file that appeared and one that vanished in the same moment as a move.

    A rename's two halves arrive as separate events (and the second is lost
    when the destination folder is brand new), so when a batch holds a new
    file, known files already gone from disk leave in the same batch; when it
    holds a vanished file, new files not seen yet join it. The tools then move
    without a moment of absence or a spurious conflict, and keep their names.
    """
    new_files = [p for p in plan.present if (r := records.get(p)) is None or r.is_removed]
    if new_files:
        # Only a vanished file whose bytes just appeared elsewhere moved; any other waits out its grace.
        arrived = {plan.present[p].digest for p in new_files}
        for path, record in records.items():
            if not record.is_removed and path not in plan.present and path not in plan.missing:
                if record.content_hash in arrived and not path.exists():
                    _let_go(plan, changed_modules, path, record)
    if (plan.missing or plan.waiting) and look_for_moves:
        new_files.extend(_unseen_sources(plan, records, sources, backend, roots))
    plan.moves = _match_moves(plan, records, new_files)
    for old, _new in plan.moves:
        if old in plan.waiting:  # it moved: no grace to wait out
            _let_go(plan, changed_modules, old, records[old])


def _let_go(plan: BatchPlan, changed_modules: list[str], path: Path, record: FileRecord) -> None:
    """The file is gone for good in this batch (it moved): its tools leave or move now."""
    plan.waiting.pop(path, None)
    if path not in plan.missing:
        plan.missing.append(path)
        changed_modules.append(record.module_name)


def _unseen_sources(
    plan: BatchPlan,
    records: Mapping[Path, FileRecord],
    sources: SourceFinder,
    backend: LoadBackend,
    roots: Iterable[Path],
) -> list[Path]:
    """Read into the plan every source on disk the loader has not seen yet (the other half of a move)."""
    found: list[Path] = []
    for root in roots:
        for path in sources.list_sources(root):
            known = records.get(path)
            if (
                path.name == "__init__.py"
                or path in plan.present
                or (known is not None and not known.is_removed)
            ):
                continue
            if backend.is_within_root(path, root) and _read_into(plan, path):
                found.append(path)
    return found


def _match_moves(
    plan: BatchPlan, records: Mapping[Path, FileRecord], new_files: list[Path]
) -> list[tuple[Path, Path]]:
    """Pair vanished and new files with the same content (a rename, not a delete and a create)."""
    gone = [p for p in (*plan.missing, *plan.waiting) if p in records and records[p].content_hash is not None]
    arrived = [p for p in dict.fromkeys(new_files) if p in plan.present]
    moves: list[tuple[Path, Path]] = []
    for old in list(gone):
        digest = records[old].content_hash
        match = next((new for new in arrived if plan.present[new].digest == digest), None)
        if match is not None:
            moves.append((old, match))
            arrived.remove(match)
    return moves


def load_order(paths: Iterable[Path], backend: LoadBackend) -> list[Path]:
    """Dependencies first (by what each module imported last time), then by path.

    A depth-first walk kept on a list, not the call stack: an import chain of
    any length is ordered whole.
    """
    module_of = {p: backend.module_name_for(p) for p in paths}
    names = {name: p for p, name in module_of.items()}

    def imported(path: Path) -> Iterator[Path]:
        dependencies = backend.dependencies(module_of[path])
        return iter([names[dep] for dep in sorted(dependencies) if dep in names] if dependencies else ())

    ordered: list[Path] = []
    seen: set[Path] = set()
    for start in sorted_paths(names.values()):
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, imported(start))]
        while stack:
            path, pending = stack[-1]
            following = next((dep for dep in pending if dep not in seen), None)
            if following is None:
                stack.pop()
                ordered.append(path)
            else:
                seen.add(following)
                stack.append((following, imported(following)))
    return ordered
