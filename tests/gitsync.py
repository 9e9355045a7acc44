"""A local stand-in for the git-sync sidecar, following its documented v4 layout on disk.

``ROOT/.git`` holds the fetched repository, each published revision is a
detached worktree ``ROOT/.worktrees/<sha>``, and ``ROOT/<link>`` is a relative
symlink to the current one. A sync adds the new worktree, points a temporary
symlink at it and renames that over ``<link>`` (one atomic flip, as git-sync
does), then removes the old worktree, so a reader holding the old resolved
path sees it vanish.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Protocol

__all__ = ["ConfigMapSync", "CopySync", "GitSync", "Publisher", "git"]


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity; returns stdout (raises on failure)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "fleet",
        "GIT_AUTHOR_EMAIL": "fleet@example.invalid",
        "GIT_COMMITTER_NAME": "fleet",
        "GIT_COMMITTER_EMAIL": "fleet@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd} failed: {done.stderr.strip()}")
    return done.stdout.strip()


class Publisher(Protocol):
    """Publishes a repository's ``ref`` under ``link`` in one way, one ``sync()`` at a time."""

    link: Path

    def sync(self) -> str: ...


class GitSync:
    """Publishes ``ref`` of ``repo`` under ``root/link`` the way git-sync does, one ``sync()`` at a time."""

    def __init__(self, repo: Path, root: Path, *, link: str = "tools", ref: str = "main") -> None:
        self.repo = repo
        self.root = root
        self.link = root / link
        self.ref = ref
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "--quiet")

    @property
    def current(self) -> str | None:
        """The sha published now, if any."""
        if not self.link.is_symlink():
            return None
        return Path(os.readlink(self.link)).name

    def sync(self) -> str:
        """Fetch ``ref``; if it moved, publish it with one atomic symlink flip and drop the old worktree."""
        git(self.root, "fetch", "--quiet", str(self.repo), self.ref)
        sha = git(self.root, "rev-parse", "FETCH_HEAD")
        previous = self.current
        if sha == previous:
            return sha
        worktree = self.root / ".worktrees" / sha
        git(self.root, "worktree", "add", "--quiet", "--detach", str(worktree), sha)
        temporary = self.root / f".{self.link.name}.tmp"
        if temporary.is_symlink():
            temporary.unlink()
        os.symlink(os.path.relpath(worktree, self.root), temporary)
        os.rename(temporary, self.link)
        if previous is not None:
            git(self.root, "worktree", "remove", "--force", str(self.root / ".worktrees" / previous))
            git(self.root, "worktree", "prune")
        return sha


class CopySync:
    """The plain alternative: ``root/tools`` is a real folder; each file of ``ref`` is renamed into place.

    The way ``rsync --delay-updates`` or a deploy script publishes: no symlink,
    every file replaced atomically (written beside, then renamed over).
    """

    def __init__(self, repo: Path, root: Path, *, link: str = "tools", ref: str = "main") -> None:
        self.repo = repo
        self.link = root / link
        self.ref = ref
        self.link.mkdir(parents=True, exist_ok=True)

    def sync(self) -> str:
        sha = git(self.repo, "rev-parse", self.ref)
        for name in git(self.repo, "ls-tree", "--name-only", sha).splitlines():
            content = subprocess.run(
                ["git", "show", f"{sha}:{name}"], cwd=self.repo, capture_output=True, check=True
            ).stdout
            temporary = self.link / f".{name}.sync"
            temporary.write_bytes(content)
            os.replace(temporary, self.link / name)
        return sha


class ConfigMapSync:
    """The kubelet's layout for a ConfigMap volume, updated the way its atomic writer does it.

    ``root/tools/<file>`` are symlinks to ``..data/<file>``; ``..data`` is a
    symlink to a timestamped directory holding the files. An update writes a
    new timestamped directory, renames a fresh ``..data_tmp`` link over
    ``..data`` and removes the old directory.
    """

    def __init__(self, repo: Path, root: Path, *, link: str = "tools", ref: str = "main") -> None:
        self.repo = repo
        self.link = root / link
        self.ref = ref
        self.link.mkdir(parents=True, exist_ok=True)
        self._generation = 0

    def sync(self) -> str:
        sha = git(self.repo, "rev-parse", self.ref)
        self._generation += 1
        payload = self.link / f"..{self._generation:04d}_{sha[:8]}"
        payload.mkdir()
        names = git(self.repo, "ls-tree", "--name-only", sha).splitlines()
        for name in names:
            content = subprocess.run(
                ["git", "show", f"{sha}:{name}"], cwd=self.repo, capture_output=True, check=True
            ).stdout
            (payload / name).write_bytes(content)
        data = self.link / "..data"
        previous = Path(os.readlink(data)) if data.is_symlink() else None
        temporary = self.link / "..data_tmp"
        os.symlink(payload.name, temporary)
        os.rename(temporary, data)
        for name in names:
            if not (self.link / name).is_symlink():
                os.symlink(f"..data/{name}", self.link / name)
        if previous is not None:
            shutil.rmtree(self.link / previous)
        return sha
