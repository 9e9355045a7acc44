"""Which files in a watched folder are tool sources: ``.py`` files that no editor is in the middle of."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["is_default_source_name", "is_default_tool_source", "is_ignored_dir"]

_EDITOR_MARKERS = ("___jb_tmp___", "___jb_old___", ".~", "~")


def is_ignored_dir(name: str) -> bool:
    """Hidden folders, ``__pycache__`` and the like are never scanned."""
    return name.startswith(".") or name == "__pycache__" or name.endswith(".egg-info")


def is_default_tool_source(path: Path, root: Path) -> bool:
    """The built-in rule: a visible ``.py`` file that is not a package ``__init__`` or an editor temporary.

    Editors save through temporaries and backups (``.#x.py``, ``x.py~``,
    ``.x.py.swp``, ``x.py.tmp``, JetBrains ``x.py___jb_tmp___``, Emacs ``#x.py#``);
    only the final name is a tool source. ``__init__.py`` is importable as a
    package but not scanned for tools.
    """
    if not is_default_source_name(path.name):
        return False
    # ``path.relative_to(root)``, as strings: this runs for every file of every scan.
    text, base = str(path), str(root)
    if os.path.normcase(text) == os.path.normcase(base):
        return True
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not os.path.normcase(text).startswith(os.path.normcase(prefix)):
        return False
    folders = text[len(prefix) :].split(os.sep)[:-1]
    return not folders or not any(is_ignored_dir(part) for part in folders)


def is_default_source_name(name: str) -> bool:
    """The built-in rule's verdict on a file name alone (for a file in a folder that is not ignored)."""
    if not name.endswith(".py") or name == "__init__.py":
        return False
    return not (name.startswith((".", "#", "~")) or _has_editor_marker(name))


def _has_editor_marker(name: str) -> bool:
    for marker in _EDITOR_MARKERS:
        if marker in name:
            return True
    return False
