"""Walking a folder tree without recursion and to a bounded depth, for the loader and for watchdog.

``os.walk`` on Python 3.11 recurses once per level (3.12 made it iterative),
so a chain of a thousand-odd nested folders in a tools folder raised
``RecursionError`` in whatever thread walked it: the first scan, a reconcile,
or a watchdog emitter adding watches for a folder that appeared. Here every
walk is a loop over a stack, and folders deeper than ``MAX_FOLDER_DEPTH``
below where the walk started are skipped with one warning naming them.

watchdog walks with ``os.walk`` (inotify: adding watches for a tree and for a
folder created in it; its events module: the events of a folder moved in) and
with a recursive generator (polling snapshots); ``limit_watchdog_walks``
points them at the walk here, since none of them can be given a walk of our own.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any, AnyStr

__all__ = ["MAX_FOLDER_DEPTH", "folder_depth", "limit_watchdog_walks", "walk_folders", "warn_too_deep"]

logger = logging.getLogger(__name__)

MAX_FOLDER_DEPTH = 100
"""Levels of folders below a watched folder that are scanned and watched; deeper ones are skipped."""

_warned: set[Any] = set()
_warned_lock = threading.Lock()
_WARNED_LIMIT = 10_000


def warn_too_deep(path: Any, max_depth: int) -> None:
    """Say once per folder that it was skipped (walks repeat: rescans, reconciles)."""
    with _warned_lock:
        if path in _warned:
            return
        if len(_warned) < _WARNED_LIMIT:
            _warned.add(path)
    shown = os.fsdecode(path)
    logger.warning(
        "path=<%s>, max_depth=<%d> | folder tree deeper than %d levels: not scanned or watched below this",
        shown,
        max_depth,
        max_depth,
    )


def folder_depth(path: str, root: str) -> int:
    """How many levels of folders below ``root`` the folder ``path`` lies (``root`` itself: 0)."""
    relative = path[len(root) :].strip(os.sep)
    return relative.count(os.sep) + 1 if relative else 0


def walk_folders(
    top: AnyStr,
    *,
    max_depth: int = MAX_FOLDER_DEPTH,
    top_depth: int = 0,
    on_error: Callable[[OSError], None] | None = None,
) -> Iterator[tuple[AnyStr, list[AnyStr], list[AnyStr]]]:
    """``os.walk(top, followlinks=False)`` top-down, as a loop, to ``max_depth`` levels below the root.

    ``top`` lies ``top_depth`` levels below the root (a walk of one folder of a
    watched tree stops where a walk of the whole tree would). Callers may prune
    ``dirnames`` in place, as with ``os.walk``.
    """
    stack: list[tuple[AnyStr, int]] = [(top, top_depth)]
    while stack:
        directory, depth = stack.pop()
        dirnames: list[AnyStr] = []
        filenames: list[AnyStr] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
        except OSError as exc:
            if on_error is not None:
                on_error(exc)
            continue
        yield directory, dirnames, filenames
        if dirnames and depth >= max_depth:
            warn_too_deep(os.path.join(directory, dirnames[0]), max_depth)
            continue
        stack.extend((os.path.join(directory, name), depth + 1) for name in reversed(dirnames))


def _os_walk_for_watchdog(
    top: Any, topdown: bool = True, onerror: Any = None, followlinks: bool = False
) -> Iterator[tuple[Any, list[Any], list[Any]]]:
    return walk_folders(top, on_error=onerror)


class _OsWithBoundedWalk(types.ModuleType):
    """``os`` as watchdog's inotify module sees it: everything as is, but ``walk`` bounded and flat."""

    walk = staticmethod(_os_walk_for_watchdog)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def _snapshot_walk(self: Any, root: Any) -> Iterator[tuple[Any, os.stat_result]]:
    """``DirectorySnapshot.walk`` as a loop (watchdog's recurses once per level), bounded in depth."""
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            paths = [os.path.join(directory, entry.name) for entry in self.listdir(directory)]
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EINVAL, errno.EACCES, errno.EPERM):
                continue
            raise
        folders = []
        for path in paths:
            with contextlib.suppress(OSError):
                st = self.stat(path)
                yield path, st
                if stat.S_ISDIR(st.st_mode):
                    folders.append(path)
        if not self.recursive or not folders:
            continue
        if depth >= MAX_FOLDER_DEPTH:
            warn_too_deep(folders[0], MAX_FOLDER_DEPTH)
            continue
        stack.extend((folder, depth + 1) for folder in reversed(folders))


_patched = False


def limit_watchdog_walks() -> None:
    """Make watchdog's folder walks (inotify and polling) loops with the depth limit; idempotent."""
    global _patched
    if _patched:
        return
    _patched = True
    import watchdog.events

    bounded = _OsWithBoundedWalk("os")
    watchdog.events.os = bounded  # type: ignore[attr-defined]
    try:
        from watchdog.observers import inotify_c
    except ImportError:  # not Linux: no inotify module
        pass
    else:
        inotify_c.os = bounded  # type: ignore[attr-defined]
    from watchdog.utils.dirsnapshot import DirectorySnapshot

    DirectorySnapshot.walk = _snapshot_walk  # type: ignore[method-assign]
