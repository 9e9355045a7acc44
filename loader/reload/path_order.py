"""Sorting paths in ``Path`` order without ``Path.__lt__``.

``sorted()`` on a set of thousands of paths calls the pure-Python
``PurePath.__lt__`` some ten thousand times; a batch sorts its paths more than
once. ``path_key`` gives the same order (paths compare part by part) as one
string per path, compared in C: the separator becomes NUL, which sorts below
every character a path component can hold.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["path_key", "sorted_paths"]


def path_key(path: Path) -> str:
    """A string that sorts as ``path`` sorts among absolute paths."""
    return os.path.normcase(str(path)).replace(os.sep, "\0")


def sorted_paths(paths: Iterable[Path]) -> list[Path]:
    """``sorted(paths)``, cheaper."""
    return sorted(paths, key=path_key)
