"""Where a tool file lives in the private module namespace, and whether it stays inside its folder.

Every module from a watched folder is named ``_tool_loader.<loader>.<root>.<path>``,
so a bare name (``json``, ``helpers``) never lands in ``sys.modules`` and two
loaders never share a module. ``ModuleNames`` answers the questions the loader
asks about paths before anything runs: which watched folder holds a file, what
its module is called, and whether a link leads it out of its folder. It runs no
code; ``ToolImporter`` builds the importing on top of it, and a process backend
uses it alone for names.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import pkgutil
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = ["NAMESPACE", "ModuleClash", "ModuleClashKind", "ModuleNames", "is_within", "module_clash"]

NAMESPACE = "_tool_loader"
"""Top-level package under which every module from a watched folder is imported."""

_instance_counter = itertools.count(1)
_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")
_NAME_CACHE_LIMIT = 100_000


def is_within(path: Path, root: Path) -> bool:
    """Whether ``path``, with every link resolved, lies inside ``root`` (its links resolved too).

    ``root`` may be reached through a link that a deployment flips (git-sync);
    ``path`` is resolved against the same reading of the root's target, so a
    flip between two lookups cannot make a file look outside.
    """
    try:
        real_root = Path(os.path.realpath(root))
        try:
            relative = path.relative_to(root)
        except ValueError:
            real = Path(os.path.realpath(path))
        else:
            real = Path(os.path.realpath(real_root / relative))
    except OSError:
        return False
    return real == real_root or real_root in real.parents


class ModuleClashKind(StrEnum):
    """Which real module a tool file's name is also the name of."""

    STANDARD_LIBRARY = "standard-library"
    INSTALLED = "installed"
    """A top-level module or package importable from ``sys.path`` (or already imported)."""


@dataclass(frozen=True, slots=True)
class ModuleClash:
    """A tool file's stem that is also a real top-level module: ``import <name>`` means the real one."""

    name: str
    kind: ModuleClashKind
    origin: str | None = None
    """Where the real module lives (None for the standard library)."""


def module_clash(name: str, roots: Sequence[Path] = ()) -> ModuleClash | None:
    """The real top-level module ``name`` would stand for, if any (a module inside ``roots`` is none).

    A watched folder on ``sys.path`` (the current folder under ``python -m``) makes its own
    files importable; they are not real modules, so they are not counted.
    """
    if name in sys.stdlib_module_names:
        return ModuleClash(name, ModuleClashKind.STANDARD_LIBRARY)
    if not name.isidentifier() or not (name in sys.modules or _may_be_importable(name)):
        return None
    try:
        spec = sys.modules[name].__spec__ if name in sys.modules else importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None:
        return None
    origin = spec.origin if spec.has_location else None
    if origin is None and spec.submodule_search_locations:
        origin = next(iter(spec.submodule_search_locations), None)
    if origin is not None and any(is_within(Path(origin), root) for root in roots):
        return None
    return ModuleClash(name, ModuleClashKind.INSTALLED, origin)


_path_names: tuple[tuple[str, ...], frozenset[str]] = ((), frozenset())
_OWN_FINDERS = ("PathFinder", "BuiltinImporter", "FrozenImporter", "_NamespaceFinder")


def _may_be_importable(name: str) -> bool:
    """A cheap first answer: the top-level names on ``sys.path`` (listed once per ``sys.path``), or a
    meta-path finder of an installer (an editable install's) that knows the name.

    ``find_spec`` on every tool file's name would cost a path search each, tens of microseconds.
    """
    global _path_names
    key = tuple(sys.path)
    if _path_names[0] != key:
        _path_names = (key, frozenset(module.name for module in pkgutil.iter_modules(sys.path)))
    if name in _path_names[1]:
        return True
    for finder in sys.meta_path:
        kind = finder if isinstance(finder, type) else type(finder)  # the standard finders are classes
        if kind.__name__ in _OWN_FINDERS or not hasattr(finder, "find_spec"):
            continue
        try:
            if finder.find_spec(name, None) is not None:
                return True
        except Exception:  # a third-party finder's fault is no answer
            continue
    return False


def _name_part(stem: str) -> str:
    """A module-name component for a file stem; non-identifiers get a stable, unique spelling."""
    if stem.isidentifier():
        return stem
    digest = hashlib.sha1(stem.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    return f"{_IDENTIFIER.sub('_', stem)}_{digest}"


class ModuleNames:
    """Private module names for the files of some watched folders, and the folders' bounds."""

    def __init__(self, roots: Sequence[Path], *, tag: str | None = None) -> None:
        # A worker process names its modules exactly as the loader that started it (``tag``).
        self.tag = tag or f"l{next(_instance_counter)}"
        self.prefix = f"{NAMESPACE}.{self.tag}"
        self._roots: dict[str, Path] = {}
        for index, root in enumerate(roots):
            self._roots[f"r{index}_{_IDENTIFIER.sub('_', root.name) or 'root'}"] = root
        self._root_prefix = {root: f"{self.prefix}.{key}" for key, root in self._roots.items()}
        self._root_texts = [(root, str(root)) for root in self._roots.values()]
        self._names: dict[Path, str] = {}
        self._plain_dirs: dict[str, bool] = {}
        self._spellings: dict[str, str] = {}
        """A module-name part given to a folder or file whose name is no identifier -> that name."""

    @property
    def roots(self) -> tuple[Path, ...]:
        """The watched folders, in order."""
        return tuple(self._roots.values())

    def begin_batch(self) -> None:
        """Forget which folders were found free of links (one batch's answers)."""
        self._plain_dirs.clear()

    def root_of(self, path: Path) -> Path | None:
        """The watched folder ``path`` belongs to."""
        text = str(path)
        for root, prefix in self._root_texts:
            if text == prefix or text.startswith(prefix + os.sep):
                return root
        return None

    def module_name_for(self, path: Path) -> str:
        """The private module name of a file (or package folder) inside a watched folder."""
        known = self._names.get(path)
        if known is not None:
            return known
        text = str(path)
        root = self.root_of(path)
        if root is None:
            raise ValueError(f"{path} is not inside a watched folder")
        relative = text[len(str(root)) :].lstrip(os.sep)  # root_of matched ``text`` as root + sep + rest
        parts = relative.split(os.sep) if relative else []
        if parts and parts[-1].endswith(".py"):
            parts[-1] = parts[-1][:-3]
        if parts and parts[-1] == "__init__":
            parts.pop()
        named = [_name_part(p) for p in parts]
        for part, spelled in zip(parts, named, strict=True):
            if part != spelled:
                self._spellings[spelled] = part
        name = ".".join([self._root_prefix[root], *named])
        if len(self._names) < _NAME_CACHE_LIMIT:
            self._names[path] = name
        return name

    def path_parts(self, parts: Sequence[str]) -> list[str]:
        """The folder and file names a module name's parts (below its root) stand for."""
        return [self._spellings.get(part, part) for part in parts]

    def is_within_root(self, path: Path, root: Path, *, no_link: bool = False) -> bool:
        """``is_within``, resolving links only where there are any.

        A path that is no link, under folders (between ``root`` and it) that are
        no links, is inside ``root`` whatever ``root`` itself resolves to: then a
        few ``lstat`` calls answer (the folders' answers kept for the batch),
        where resolving every component of the path would cost dozens. The
        folders are checked in a loop from the path up: a chain of folders
        thousands deep costs one ``lstat`` per folder, never a frame.
        """
        if not no_link and os.path.islink(path):
            return is_within(path, root)
        return self._plain_folder(os.path.dirname(path), os.fspath(root)) or is_within(path, root)

    def _plain_folder(self, folder: str, root: str) -> bool:
        """Whether ``folder`` is ``root`` or below it through folders none of which is a link."""
        unknown: list[str] = []  # the key is the folder's text: a fresh ``Path`` costs more to hash
        inside = root if root.endswith(os.sep) else root + os.sep
        plain = self._plain_dirs.get(folder)
        while plain is None:
            if folder == root:
                plain = True
            elif not folder.startswith(inside) or os.path.islink(folder):
                plain = False
            else:
                unknown.append(folder)
                folder = os.path.dirname(folder)
                plain = self._plain_dirs.get(folder)
                continue
            unknown.append(folder)
        for seen in unknown:
            self._plain_dirs[seen] = plain
        return plain

    def owns(self, module_name: str) -> bool:
        """Whether a module name belongs to this namespace."""
        return module_name == self.prefix or module_name.startswith(self.prefix + ".")
