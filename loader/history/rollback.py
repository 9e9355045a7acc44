"""Putting a recorded version of a tool back on disk, so the normal reload serves it.

A rollback rewrites the whole file the version came from, so every other tool
defined in that file goes back too. ``plan_rollback`` works out, from the
history, which other tools' specs would change, and refuses unless forced;
``apply_rollback`` keeps a backup of the bytes it replaces (in the state
directory, never in the tools folder) and writes atomically: a hidden temporary
file in the same folder (the loader ignores hidden files), then ``os.replace``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolLoaderError
from .store import HistoryError, HistoryStore, ToolVersion

__all__ = [
    "BackupFailed",
    "RollbackPlan",
    "RollbackRefused",
    "apply_rollback",
    "backup_dir",
    "plan_rollback",
]


class RollbackRefused(ToolLoaderError):
    """Rolling back would also change other tools (or define the tool twice); ``--force`` overrides.

    ``others`` names the tools whose definitions would change; ``moved_to`` is
    the file the tool lives in now when that differs from the version's file.
    """

    def __init__(self, tool: str, path: Path, others: tuple[str, ...], moved_to: Path | None = None) -> None:
        self.tool = tool
        self.path = path
        self.others = others
        self.moved_to = moved_to
        parts = []
        if others:
            parts.append(f"it would also change {', '.join(others)}")
        if moved_to is not None:
            parts.append(f"{tool} now lives in {moved_to}, so {path} would define it twice")
        super().__init__(f"rolling back {tool} rewrites {path}: {'; '.join(parts)}")


class BackupFailed(ToolLoaderError):
    """The bytes a rollback would replace could not be saved first, so nothing was written.

    ``folder`` is where the backup was to go (in the state folder), ``error`` what the OS said.
    """

    def __init__(self, path: Path, folder: Path, error: OSError) -> None:
        self.path = path
        self.folder = folder
        self.error = error
        super().__init__(f"could not back up {path} into {folder}: {error.strerror or error}")


@dataclass(frozen=True, slots=True)
class RollbackPlan:
    """What a rollback would write, where, and what it would change besides the tool."""

    tool: str
    target: ToolVersion
    path: Path
    content: bytes
    current: bytes | None  # the file's bytes now (None if it does not exist)
    others: tuple[str, ...]  # other tools whose spec would change
    moved_to: Path | None

    @property
    def needed(self) -> bool:
        """False when the file already holds the target version's bytes."""
        return self.current != self.content


def plan_rollback(store: HistoryStore, tool: str, to: str | None = None) -> RollbackPlan:
    """Work out a rollback of ``tool`` to the version whose hash starts with ``to``.

    By default, the version before the one serving; when none serves (its file was
    deleted, or the tool taken out of it), the one that served last, which is what
    undoing the deletion means.

    Raises:
        HistoryError: No such version, only one version, or its content was not recorded.
    """
    versions = store.versions(tool)
    if not versions:
        raise HistoryError(f"no recorded versions of tool {tool!r} for {store.folder} ({store.path})")
    if to is not None:
        target = store.find(tool, to)
    elif not versions[0].live:
        target = versions[0]
    else:
        if len(versions) < 2:
            raise HistoryError(f"tool {tool!r} has only one recorded version; nothing to roll back to")
        target = versions[1]
    if target.content is None:
        raise HistoryError(
            f"version {target.short_hash} of tool {tool!r} was recorded without its file content "
            f"({target.note})"
        )
    path = target.file_path
    try:
        current: bytes | None = path.read_bytes()
    except FileNotFoundError:
        current = None
    latest = versions[0]
    moved_to = latest.file_path if latest.live and latest.file_path != path else None
    return RollbackPlan(
        tool=tool,
        target=target,
        path=path,
        content=target.content,
        current=current,
        others=_others_changed(store, tool, path, target),
        moved_to=moved_to,
    )


def _others_changed(store: HistoryStore, tool: str, path: Path, target: ToolVersion) -> tuple[str, ...]:
    """Other tools of ``path`` whose spec differs between what serves now and the target content.

    What serves now is each tool's newest live version from that file; what the
    target content defines is each tool's version recorded from the same bytes.
    A tool present on only one side counts as changed (it would appear or vanish).
    """
    changed: list[str] = []
    for other in store.tools():
        if other == tool:
            continue
        versions = store.versions(other)
        now = versions[0] if versions and versions[0].live and versions[0].file_path == path else None
        then = next(
            (v for v in versions if v.file_path == path and v.content_hash == target.content_hash),
            None,
        )
        if now is None and then is None:
            continue
        if now is None or then is None or _spec_key(now) != _spec_key(then):
            changed.append(other)
    return tuple(sorted(changed))


def _spec_key(version: ToolVersion) -> str:
    return json.dumps(version.spec, sort_keys=True)


def backup_dir(store: HistoryStore) -> Path:
    """Where rollbacks keep the bytes they replace: beside the history database, per folder."""
    return store.path.parent.parent / "backups" / store.path.stem


def apply_rollback(plan: RollbackPlan, store: HistoryStore, *, force: bool = False) -> Path | None:
    """Write the target content back atomically; returns the backup path (None if nothing was replaced).

    Raises:
        RollbackRefused: Other tools would change (or the tool would be defined twice) and not ``force``.
        BackupFailed: The bytes to replace could not be backed up (nothing was written).
        OSError: The file could not be written.
    """
    if not force and (plan.others or plan.moved_to is not None):
        raise RollbackRefused(plan.tool, plan.path, plan.others, plan.moved_to)
    backup: Path | None = None
    if plan.current is not None and plan.needed:
        digest = hashlib.sha256(plan.current).hexdigest()[:12]
        folder = backup_dir(store)
        backup = folder / f"{plan.path.name}.bak-{digest}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(backup, plan.current, mode=None)
        except OSError as exc:
            raise BackupFailed(plan.path, folder, exc) from exc
    if plan.needed:
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        mode = plan.path.stat().st_mode & 0o7777 if plan.current is not None else None
        _write_atomic(plan.path, plan.content, mode=mode)
    return backup


def _write_atomic(path: Path, data: bytes, *, mode: int | None) -> None:
    """A hidden temporary in the same folder, flushed to disk, then renamed over ``path``.

    The temporary is created like ``open()`` would (0o666 less the umask), then
    given ``mode`` when the file it replaces had one.
    """
    temporary = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
