"""Folders that change under the loader the way deployment tools change them.

Two layouts replace a whole tree at once through one atomic rename of a link,
and both are reproduced here step by step, in the order the real tools take:

* ``GitSyncLayout``, git-sync v4: every sync checks the new revision out into
  ``<root>/.worktrees/<rev>``, points a temporary link ``<root>/tmp-link`` at it
  (relative target), renames that link over ``<root>/<link>`` and then deletes
  the old worktree. Users point the loader at ``<root>/<link>`` (or a folder
  inside it).
* ``ConfigMapLayout``, the kubelet's ``AtomicWriter`` for ConfigMap and Secret
  volumes: the payload is written to a fresh ``..<timestamp>`` folder, a link
  ``..data_tmp`` is pointed at it and renamed over ``..data``, then the
  user-visible names (``<key>`` → ``..data/<key>``) are created for new keys and
  removed for dropped ones, and the old timestamped folder is deleted. The
  loader watches the volume folder itself.

Both write files the ordinary way (open, write, close), as git and the kubelet do.
"""

from __future__ import annotations

import itertools
import os
import shutil
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ConfigMapLayout", "GitSyncLayout", "deep_chain", "make_deep_chain", "remove_deep_chain"]

_revisions = itertools.count(1)


def _write_tree(folder: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())


class GitSyncLayout:
    """A git-sync root: ``<root>/<link>`` → ``.worktrees/<rev>``, flipped atomically on every sync."""

    def __init__(self, root: Path, link: str = "current") -> None:
        self.root = root
        self.link = root / link
        self.worktrees = root / ".worktrees"
        self.worktrees.mkdir(parents=True, exist_ok=True)
        self.current: Path | None = None

    def sync(self, files: dict[str, str], *, keep_old: bool = False) -> Path:
        """Publish a new revision holding exactly ``files``; returns its worktree.

        ``keep_old`` leaves the previous worktree on disk (git-sync deletes it
        straight after the flip; keeping it shows the loader follows the link,
        not the disappearance).
        """
        worktree = self.worktrees / f"{next(_revisions):040x}"
        worktree.mkdir()
        _write_tree(worktree, files)
        tmp_link = self.root / "tmp-link"
        os.symlink(os.path.relpath(worktree, self.link.parent), tmp_link)
        os.rename(tmp_link, self.link)
        old, self.current = self.current, worktree
        if old is not None and not keep_old:
            shutil.rmtree(old)
        return worktree


class ConfigMapLayout:
    """A ConfigMap volume: ``<dir>/<key>`` → ``..data/<key>``, ``..data`` → ``..<timestamp>``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.data = folder / "..data"
        self.current: Path | None = None
        self.keys: set[str] = set()

    def update(self, files: dict[str, str]) -> Path:
        """Publish ``files`` (flat keys, as a ConfigMap holds) the way the kubelet does; returns the data folder."""
        stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{next(_revisions):09d}"
        payload = self.folder / stamp
        payload.mkdir()
        _write_tree(payload, files)
        tmp_link = self.folder / "..data_tmp"
        os.symlink(stamp, tmp_link)
        os.rename(tmp_link, self.data)
        for key in sorted(set(files) - self.keys):
            os.symlink(f"..data/{key}", self.folder / key)
        for key in sorted(self.keys - set(files)):
            (self.folder / key).unlink()
        old, self.current = self.current, payload
        self.keys = set(files)
        if old is not None:
            shutil.rmtree(old)
        return payload


def make_deep_chain(top: Path, depth: int) -> Path:
    """``top/d/d/.../d``, ``depth`` folders in all, made one by one (``os.makedirs`` recurses per level)."""
    current = top
    current.mkdir()
    for _ in range(depth - 1):
        current = current / "d"
        current.mkdir()
    return current


def remove_deep_chain(top: Path) -> None:
    """Remove a chain made by ``make_deep_chain`` (and any files in it) without recursion.

    ``shutil.rmtree`` recurses once per level on Python 3.11, so pytest could not clean it up either.
    """
    chain = [top]
    while (chain[-1] / "d").is_dir():
        chain.append(chain[-1] / "d")
    for folder in reversed(chain):
        for entry in os.scandir(folder):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        folder.rmdir()


@contextmanager
def deep_chain(top: Path, depth: int) -> Iterator[Path]:
    """A chain of ``depth`` nested folders at ``top`` for the test's duration; yields the deepest folder."""
    deepest = make_deep_chain(top, depth)
    try:
        yield deepest
    finally:
        if top.exists():
            remove_deep_chain(top)
