"""How editors and tools save a file: every pattern the reload tests replay (imported as ``editors``).

Each function writes ``text`` to ``path`` the way one editor or tool does;
``rng`` picks temporary names and pauses, so a seeded run repeats itself.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["SAVE_PATTERNS", "SavePattern"]

SavePattern = Callable[[Path, str, random.Random], None]


def _in_place(path: Path, text: str, rng: random.Random) -> None:
    path.write_text(text)


def _temp_then_rename(path: Path, text: str, rng: random.Random) -> None:
    temp = path.with_name(f".{path.name}.{rng.randrange(10**6)}.tmp")
    temp.write_text(text)
    os.replace(temp, path)


def _vim_backup_rename(path: Path, text: str, rng: random.Random) -> None:
    backup = path.with_name(path.name + "~")
    os.replace(path, backup)
    path.write_text(text)
    backup.unlink()


def _jetbrains_safe_write(path: Path, text: str, rng: random.Random) -> None:
    temp = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    temp.write_text(text)
    os.replace(path, old)
    os.replace(temp, path)
    old.unlink()


def _delete_then_create(path: Path, text: str, rng: random.Random) -> None:
    path.unlink()
    path.write_text(text)


def _truncate_pause_write(path: Path, text: str, rng: random.Random) -> None:
    with open(path, "w") as handle:
        handle.flush()
        threading.Event().wait(rng.choice([0.0, 0.005, 0.02]))  # the editor's gap, part of the workload
        handle.write(text)


def _sed_in_place(path: Path, text: str, rng: random.Random) -> None:
    temp = path.with_name(f"sed{rng.randrange(10**6):06d}")
    temp.write_text(text)
    os.rename(temp, path)


SAVE_PATTERNS: list[SavePattern] = [
    _in_place,
    _temp_then_rename,
    _vim_backup_rename,
    _jetbrains_safe_write,
    _delete_then_create,
    _truncate_pause_write,
    _sed_in_place,
]
"""In place, temp-and-rename, vim's backup-rename, JetBrains' safe write, delete-and-create,
truncate-pause-write, ``sed -i``."""
