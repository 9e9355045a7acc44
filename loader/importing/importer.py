"""Importing tool files under private module names, always from their current bytes.

Why not ``importlib.import_module`` on the folder: CPython's ``.pyc`` cache
trusts a source's size and whole-second mtime, so an edit that keeps the size
within the same second would re-run the old code; and a bare module name
(``json``, ``helpers``) in ``sys.modules`` would change what every other
``import`` in the process returns.

So every module from a watched folder lives under ``_tool_loader.<loader>.<root>``,
is compiled from the bytes on disk (no bytecode is read or written), and sees a
private ``__import__`` that resolves ``import helpers`` to a sibling file of the
importing module first, as a script would, without a bare name in ``sys.modules``.
The importer also records which module imported which, so the loader can reload
every dependent of a changed helper.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import stat
import sys
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import SymlinkRefusedError
from .bytecode_cache import BytecodeCache
from .import_graph import ImportGraph
from .module_names import NAMESPACE, ModuleNames, is_within, module_clash

__all__ = ["NAMESPACE", "ToolImporter", "is_within"]

_real_import = builtins.__import__
_SIBLING_CACHE_LIMIT = 100_000
_RACY_NS = 50_000_000
"""A folder modified this recently (ns) may change again within the same mtime tick."""
_handle_fromlist: Any = importlib._bootstrap._handle_fromlist  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class _Publishing:
    """A module ``load`` is running on ``thread_id``, and the last good version others get meanwhile."""

    thread_id: int
    previous: ModuleType | None


@dataclass(slots=True)
class _Execution:
    """A module whose code is running now, and what to put back if it never finishes."""

    name: str
    module: ModuleType
    previous: ModuleType | None
    previous_deps: frozenset[str] | None


def _decode(source: bytes) -> str:
    """``importlib.util.decode_source``, without its encoding detection for plain UTF-8 sources."""
    if b"\r" not in source and b"coding" not in source[:400] and not source.startswith(b"\xef\xbb\xbf"):
        try:
            return source.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return importlib.util.decode_source(source)


def _mode(path: str) -> int:
    """``st_mode`` of ``path`` (links followed), 0 when there is nothing there."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return 0


def _new_module(spec: importlib.machinery.ModuleSpec) -> ModuleType:
    """``importlib.util.module_from_spec`` for our file specs, setting the same attributes directly.

    The generic path asks the spec for its bytecode path (we never write one) and
    checks loader capabilities we know; a reload runs this once per file.
    """
    module = ModuleType(spec.name)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__package__ = spec.parent
    module.__file__ = spec.origin
    module.__cached__ = None  # type: ignore[attr-defined]
    if spec.submodule_search_locations is not None:
        module.__path__ = spec.submodule_search_locations
    return module


class _SyntheticPackageLoader(importlib.abc.Loader):
    """Loader for the namespace's intermediate packages (nothing to execute)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        return None


_SYNTHETIC = _SyntheticPackageLoader()


class _SourceBytesLoader(importlib.abc.InspectLoader):
    """Executes one file of a watched folder from the bytes read now."""

    def __init__(self, importer: ToolImporter, path: Path) -> None:
        self._importer = importer
        self.path = path
        self.source: bytes | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def get_source(self, fullname: str) -> str | None:
        if self.source is None:
            return None
        return importlib.util.decode_source(self.source)

    def exec_module(self, module: ModuleType) -> None:
        if self.source is None:
            self.source = self.path.read_bytes()
        self._importer._execute(module, self.path, self.source)


class _NamespaceFinder(importlib.abc.MetaPathFinder):
    """The one meta-path finder serving every ``ToolImporter`` in the process."""

    def __init__(self) -> None:
        self.importers: weakref.WeakValueDictionary[str, ToolImporter] = weakref.WeakValueDictionary()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == NAMESPACE:
            return importlib.machinery.ModuleSpec(fullname, _SYNTHETIC, is_package=True)
        if not fullname.startswith(NAMESPACE + "."):
            return None
        parts = fullname.split(".")
        importer = self.importers.get(parts[1])
        if importer is None:
            return None
        return importer._find_spec(fullname, parts[2:])


_FINDER = _NamespaceFinder()
_finder_lock = threading.Lock()


def _install_finder() -> None:
    with _finder_lock:
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


class ToolImporter(ModuleNames):
    """Imports the files of some watched folders under one private namespace.

    Not thread-safe on its own: the loader serialises loads. Tool code that
    imports at call time (inside a function) goes through the same hook and
    reads only ``sys.modules`` once the module is loaded.
    """

    def __init__(self, roots: Sequence[Path], *, tag: str | None = None) -> None:
        super().__init__(roots, tag=tag)
        self._graph = ImportGraph()
        self._sibling_cache: dict[tuple[Path, str], tuple[tuple[int, int], str | None]] = {}
        self._folder_stamps: dict[Path, tuple[int, int] | None] = {}
        self._folders: dict[str, Path] = {}
        self._fresh: dict[str, str] = {}
        self._replacing: dict[str, ModuleType] = {}
        self._running: dict[int, list[_Execution]] = {}
        self._publishing: dict[str, _Publishing] = {}
        self.executions = 0
        self.bytecode_cache: BytecodeCache | None = None
        # One builtins namespace for every module this importer runs: its ``__import__`` tells the
        # importing module from the globals the import statement passes (a copy per module costs
        # a dict of every builtin per file, which adds up to real memory over thousands of files).
        self._builtins = dict(builtins.__dict__)
        self._builtins["__import__"] = self._tool_import
        _FINDER.importers[self.tag] = self
        _install_finder()

    # ---------------------------------------------------------------- finder
    def _find_spec(self, fullname: str, parts: list[str]) -> importlib.machinery.ModuleSpec | None:
        if not parts:
            return importlib.machinery.ModuleSpec(fullname, _SYNTHETIC, is_package=True)
        root = self._roots.get(parts[0])
        if root is None:
            return None
        base = root.joinpath(*self.path_parts(parts[1:]))
        if len(parts) == 1:
            spec = importlib.machinery.ModuleSpec(fullname, _SYNTHETIC, is_package=True)
            spec.submodule_search_locations = [str(root)]
            return spec
        file = base.with_name(base.name + ".py")
        if file.is_file():
            if not is_within(file, root):
                # Declining is not enough: Python's path finder would run the outside file.
                raise SymlinkRefusedError(fullname, file, root)
            return self._file_spec(fullname, file)
        if base.is_dir():
            if not is_within(base, root):
                raise SymlinkRefusedError(fullname, base, root)
            init = base / "__init__.py"
            if init.is_file() and is_within(init, root):
                spec = self._file_spec(fullname, init, package_dir=base)
            else:
                spec = importlib.machinery.ModuleSpec(fullname, _SYNTHETIC, is_package=True)
                spec.submodule_search_locations = [str(base)]
            return spec
        return None

    def _file_spec(
        self, fullname: str, file: Path, package_dir: Path | None = None
    ) -> importlib.machinery.ModuleSpec:
        """The spec of a file module, built directly (``spec_from_file_location`` normalises paths
        that are already absolute and resolved, and works out a bytecode path we never use)."""
        loader = _SourceBytesLoader(self, file)
        loader.source = self.source_for(fullname)
        spec = importlib.machinery.ModuleSpec(
            fullname, loader, origin=str(file), is_package=bool(package_dir)
        )
        if package_dir:
            spec.submodule_search_locations = [str(package_dir)]
        spec.has_location = True
        return spec

    # ------------------------------------------------------------ hooks for subclasses
    def source_for(self, fullname: str) -> bytes | None:
        """The bytes to run when ``fullname`` is next imported from its file; None reads the file.

        A hook for subclasses (a worker process runs a module's live version from
        bytes it was sent); the base class always reads the file.
        """
        return None

    def module_ran(self, module: ModuleType, path: Path, source: bytes) -> None:
        """Called after ``module`` (from ``path``) ran ``source`` without raising; does nothing here.

        A hook for subclasses that record what ran (a worker reports it to the loader).
        """

    # ------------------------------------------------------------ execution
    def _execute(self, module: ModuleType, path: Path, source: bytes, digest: str | None = None) -> None:
        """Compile and run ``source`` (sha256 ``digest``, if known) as ``module``, with the sibling-aware
        import hook."""
        cache = self.bytecode_cache
        if cache is not None and digest is not None:
            code = cache.code(str(path), digest, source)
        else:
            code = compile(source, str(path), "exec", dont_inherit=True)
        name = module.__name__
        previous_deps = self._graph.imports_of(name)
        execution = _Execution(name, module, self._replacing.pop(name, None), previous_deps or frozenset())
        self._graph.replace(name, ())
        parent = name.rpartition(".")[0]
        if parent in sys.modules and getattr(sys.modules[parent], "__file__", None):
            self._graph.add(name, parent)
        module.__dict__["__builtins__"] = self._builtins
        module.__dict__["__cached__"] = None
        text = _decode(source)
        linecache.cache[str(path)] = (len(text), None, text.splitlines(True), str(path))
        self.executions += 1
        self._fresh[name] = digest or hashlib.sha256(source).hexdigest()
        thread_id = threading.get_ident()
        running = self._running.setdefault(thread_id, [])
        running.append(execution)
        try:
            exec(code, module.__dict__)
        finally:
            running.remove(execution)
            if not running and self._running.get(thread_id) is running:
                del self._running[thread_id]
        self.module_ran(module, path, source)

    def _folder_of(self, path: str | Path) -> Path:
        """The folder holding ``path``, as one object per folder: the import hook's caches are keyed
        by it, and a fresh ``Path`` is built, hashed and compared part by part on every lookup."""
        text = os.path.dirname(path)
        folder = self._folders.get(text)
        if folder is None:
            if len(self._folders) >= _SIBLING_CACHE_LIMIT:
                self._folders.clear()
            folder = self._folders[text] = Path(text)
        return folder

    def _importer_of(self, globals: dict[str, Any] | None) -> tuple[str, Path] | None:
        """The module of this importer an import comes from, and its folder (None: not one of ours).

        An import statement passes its module's globals; a bare ``__import__("x")`` call
        passes none, and then the calling frame's are used.
        """
        if globals is None:
            globals = sys._getframe(2).f_globals
        if not isinstance(globals, dict):
            return None
        name, file = globals.get("__name__"), globals.get("__file__")
        if not isinstance(name, str) or not isinstance(file, str) or not self.owns(name):
            return None
        return name, self._folder_of(file)

    def _tool_import(
        self,
        name: str,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        """``__import__`` for the modules of this importer: a bare name finds a sibling file first."""
        importer = self._importer_of(globals)
        if importer is None:
            return _real_import(name, globals, locals, fromlist, level)
        importer_name, directory = importer
        if level == 0:
            top, _, rest = name.partition(".")
            own_name = importer_name.rpartition(".")[2]
            target = self._sibling(directory, top) if top != own_name else None
            if target is None:
                try:
                    return _real_import(name, globals, locals, fromlist, level)
                except ModuleNotFoundError as exc:
                    if exc.name == top and top != own_name:
                        self._expect_sibling(importer_name, directory, top)
                    raise
            full = f"{target}.{rest}" if rest else target
            self._graph.add(importer_name, full)
            module = self._settled(full, name) or importlib.import_module(full)
            if fromlist:
                return _handle_fromlist(module, fromlist, importlib.import_module)  # type: ignore[no-any-return]
            return module if not rest else self._settled(target, top) or sys.modules[target]
        package = (globals or {}).get("__package__") or ""
        resolved = importlib.util.resolve_name("." * level + name, package) if package else ""
        result = self._relative_import(name, resolved, globals, locals, fromlist, level)
        if resolved.startswith(self.prefix):
            self._graph.add(importer_name, resolved)
            for item in fromlist or ():
                sub = f"{resolved}.{item}"
                if sub in sys.modules:
                    self._graph.add(importer_name, sub)
        return result

    def _relative_import(
        self,
        name: str,
        resolved: str,
        globals: dict[str, Any] | None,
        locals: dict[str, Any] | None,
        fromlist: Sequence[str] | None,
        level: int,
    ) -> ModuleType:
        """``from .x import y`` and ``from . import x``, modules loading elsewhere ``_settled``."""
        if resolved.startswith(self.prefix):
            settled = self._settled(resolved, name)
            if settled is not None:
                return _handle_fromlist(settled, fromlist, importlib.import_module)  # type: ignore[no-any-return]
            for item in fromlist or ():
                # A module imported as a package's attribute is set there only once it has finished.
                self._settled(f"{resolved}.{item}", item)
        return _real_import(name, globals, locals, fromlist, level)

    def _settled(self, module_name: str, shown: str) -> ModuleType | None:
        """The last good version of ``module_name`` while ``load`` runs its new one on another thread.

        None when no load of it is running elsewhere (the caller imports as usual). The new
        version sits in ``sys.modules`` while it runs, as any module does during its import, so
        its own code and the imports it makes see it; every other thread goes on with the last
        good version until the new one has finished, and never finds it half-executed (a
        helper stuck in its import would serve its first half to every tool importing it).
        A module with no finished version yet cannot be imported elsewhere until it has one.
        """
        publishing = self._publishing.get(module_name)
        if publishing is None or publishing.thread_id == threading.get_ident():
            return None
        if publishing.previous is None:
            raise ImportError(
                f"module {shown!r} is still importing and has no finished version yet", name=shown
            )
        return publishing.previous

    def _expect_sibling(self, importer_name: str, directory: Path, name: str) -> None:
        """Record that ``importer_name`` needs a sibling ``name`` that does not exist yet.

        The edge points at the module name the file would get, so creating
        ``name.py`` later reloads the importer like any changed helper would.
        """
        if name.isidentifier() and self.root_of(directory) is not None:
            self._graph.add(importer_name, self.module_name_for(directory / f"{name}.py"))

    def _sibling(self, directory: Path, name: str) -> str | None:
        """The private module name of ``directory/name.py`` or ``directory/name/``, if it exists.

        A file named like a real top-level module (``math.py``, ``json.py``, ``loader.py``) is
        never one: the bare name goes on meaning the real module for every file.

        Looked up per name (two stats at most), so an import costs the same in a
        folder of ten files or of thousands; the answer is kept while the folder's
        entries stay as they were (its inode and mtime, stat'ed once per batch). A
        link out of the folder counts as a sibling too: importing it is then
        refused (``SymlinkRefusedError``) rather than quietly resolved elsewhere.
        """
        key = (directory, name)
        stamp = self._folder_stamp(directory)
        cached = self._sibling_cache.get(key)
        if cached is not None and stamp is not None and cached[0] == stamp:
            return cached[1]
        found: str | None = None
        if name.isidentifier() and name != "__init__" and self.root_of(directory) is not None:
            base = os.path.join(directory, name)
            if stat.S_ISREG(_mode(base + ".py")):
                found = self.module_name_for(directory / f"{name}.py")
            elif stat.S_ISDIR(_mode(base)):
                found = self.module_name_for(directory / name)
            if found is not None and module_clash(name, self.roots) is not None:
                found = None  # ``import math`` is the real module, whatever the folder holds
        if stamp is not None:
            if len(self._sibling_cache) >= _SIBLING_CACHE_LIMIT:
                self._sibling_cache.clear()
            self._sibling_cache[key] = (stamp, found)
        return found

    def _folder_stamp(self, directory: Path) -> tuple[int, int] | None:
        """``(inode, mtime_ns)`` of a folder, once per batch; None when it cannot vouch for its entries.

        An entry added, removed or renamed changes the folder's mtime; one changed
        within ``_RACY_NS`` of now may hide a second change in the same clock tick.
        """
        try:
            return self._folder_stamps[directory]
        except KeyError:
            pass
        try:
            st = os.stat(directory)
        except (OSError, ValueError):
            stamp = None
        else:
            fresh = time.time_ns() - st.st_mtime_ns < _RACY_NS
            stamp = None if fresh else (st.st_ino, st.st_mtime_ns)
        self._folder_stamps[directory] = stamp
        return stamp

    # ------------------------------------------------------------- public API
    def begin_batch(self) -> None:
        """Forget per-batch caches: sibling listings and which modules ran in this batch."""
        super().begin_batch()
        self._folder_stamps.clear()
        self._fresh.clear()

    def fresh_module(self, module_name: str, content_hash: str) -> ModuleType | None:
        """The module if it already ran in this batch from exactly these bytes (a helper import)."""
        if self._fresh.get(module_name) == content_hash:
            return sys.modules.get(module_name)
        return None

    def load(self, path: Path, source: bytes, digest: str | None = None) -> ModuleType:
        """Execute ``source`` (sha256 ``digest``, if known) as the module of ``path`` and make it current.

        Until it has finished, imports on other threads get the previous version
        (``_settled``); on failure ``sys.modules`` keeps the previous version, so
        tools and helpers that import it go on seeing the last good module.
        """
        name = self.module_name_for(path)
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name) or importlib.import_module(parent_name)
        spec = self._file_spec(name, path)
        assert isinstance(spec.loader, _SourceBytesLoader)
        spec.loader.source = source
        module = _new_module(spec)
        previous = sys.modules.get(name)
        previous_deps = self._graph.imports_of(name)
        if previous is not None:
            self._replacing[name] = previous
        publishing = _Publishing(threading.get_ident(), previous)
        self._publishing[name] = publishing
        sys.modules[name] = module
        try:
            self._execute(module, path, source, digest)
        except BaseException:
            self._replacing.pop(name, None)
            # Unless abandon() has already put the last good module back (and a newer load may
            # have run since), this execution restores it itself.
            if sys.modules.get(name) is module:
                if previous is not None:
                    sys.modules[name] = previous
                else:
                    sys.modules.pop(name, None)
                if previous_deps is not None:
                    # The last good module still uses its old imports; what the failed run imported
                    # (or looked for) is kept too, so a fix in any of them retries this file.
                    self._graph.replace(name, previous_deps | self._graph.dependencies(name))
            raise
        finally:
            if self._publishing.get(name) is publishing:
                del self._publishing[name]
        setattr(parent, child, module)
        return module

    def run_package(self, name: str, path: Path, source: bytes) -> ModuleType:
        """Run ``source`` as the package ``name`` (its ``__init__.py`` is ``path``) and make it current.

        For a worker process rebuilding a package version it was sent; on failure
        ``sys.modules`` keeps the previous module.
        """
        spec = self._file_spec(name, path, package_dir=path.parent)
        loader = _SourceBytesLoader(self, path)
        loader.source = source
        spec.loader = loader
        module = importlib.util.module_from_spec(spec)
        previous = sys.modules.get(name)
        sys.modules[name] = module
        try:
            loader.exec_module(module)
        except BaseException:
            if previous is not None:
                sys.modules[name] = previous
            else:
                sys.modules.pop(name, None)
            raise
        return module

    def abandon(self, thread_id: int) -> None:
        """The imports running on thread ``thread_id`` will not finish: undo them now.

        Each module still executing there (the file being loaded, and any
        helper it was importing) leaves ``sys.modules`` at once: its last good
        version goes back, or nothing when it had none, so the next import
        never finds a half-executed module. The stuck thread cannot be relied
        on to do this itself: it may stay blocked in C code for a long time.
        """
        for execution in reversed(self._running.pop(thread_id, [])):
            name = execution.name
            publishing = self._publishing.get(name)
            if publishing is not None and publishing.thread_id == thread_id:
                del self._publishing[name]
            if sys.modules.get(name) is not execution.module:
                continue
            if execution.previous is not None:
                sys.modules[name] = execution.previous
                self._graph.replace(name, execution.previous_deps)
            else:
                sys.modules.pop(name, None)
                self._graph.replace(name, None)

    def forget(self, module_names: Iterable[str]) -> None:
        """Drop modules from ``sys.modules`` (deleted files, or helpers to re-run on next import)."""
        for name in module_names:
            module = sys.modules.pop(name, None)
            self._graph.replace(name, None)
            parent_name, _, child = name.rpartition(".")
            parent = sys.modules.get(parent_name)
            if module is not None and parent is not None and getattr(parent, child, None) is module:
                delattr(parent, child)

    def dependents(self, module_names: Iterable[str]) -> set[str]:
        """Every module that imports one of ``module_names``, directly or transitively."""
        return self._graph.dependents(module_names)

    def dependencies(self, module_name: str) -> frozenset[str]:
        """The private modules ``module_name`` imported on its last load."""
        return self._graph.dependencies(module_name)

    def close(self) -> None:
        """Remove every module of this importer from ``sys.modules``."""
        for name in [n for n in sys.modules if self.owns(n)]:
            sys.modules.pop(name, None)
        self._graph.clear()
        self._fresh.clear()
        _FINDER.importers.pop(self.tag, None)
