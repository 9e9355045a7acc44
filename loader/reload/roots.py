"""Tool folders reached through symbolic links that deployment tools flip.

git-sync publishes each revision by renaming a fresh link over ``<root>/<link>``;
a release layout does the same with ``current``. A folder given as such a path
must keep meaning *that path*, whatever it points at now: the loader keeps the
path as given and follows each flip. To notice a flip by its event, the watcher
also watches the folders that hold the links the path passes through (a watch
on the path itself follows the link once, to the old target).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["links_on_path", "root_as_given"]

_MAX_HOPS = 40  # as the kernel's own limit on links followed in one lookup


def root_as_given(raw: str | os.PathLike[str]) -> Path:
    """An absolute spelling of ``raw`` that keeps its links (``~`` expanded, ``.``/``..`` folded).

    Resolving links here would pin the folder to whatever the link points at
    today; the old target disappears with the next sync.
    """
    return Path(os.path.abspath(Path(raw).expanduser()))


def links_on_path(path: Path) -> tuple[Path, ...]:
    """Every symbolic link met while resolving ``path``, in order, spelled with their real parent folder.

    A change to any of them (a rename over it, most often) changes what the
    folder holds. A path without links, or one that cannot be read, gives ``()``.
    """
    links: list[Path] = []
    pending = list(path.parts)
    if not pending:
        return ()
    current = Path(pending.pop(0))
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            target = os.readlink(candidate)
        except OSError:  # not a link, or nothing there: take it literally
            current = candidate
            continue
        hops += 1
        if hops > _MAX_HOPS:
            break
        if candidate not in links:
            links.append(candidate)
        target_path = Path(target)
        if target_path.is_absolute():
            current = Path(target_path.anchor)
            pending = list(target_path.parts[1:]) + pending
        else:
            pending = list(target_path.parts) + pending
    return tuple(links)
