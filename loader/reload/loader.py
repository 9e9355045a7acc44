"""The directory loader: scans tool folders, loads files in transactions and keeps the registry in step.

Every change to the registry goes through one place, ``_apply``: given some
paths, it looks at what is on disk now, imports what changed (and everything
that imported a changed helper), asks the discovery hooks for the tools, decides
who owns each name, and commits the difference to the registry as one batch.
A file that fails keeps its last good tools; a name two files define stays with
the file that had it first.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import pluggy

from ..errors import ToolDefinitionError
from ..hookspecs import ENTRY_POINT_GROUP, PROJECT_NAME, ToolLoaderHookSpecs
from ..names import is_valid_tool_name, normalise_tool_name
from ..registry import ToolRegistry
from ..status import (
    FileState,
    FileStatus,
    LoaderEvent,
    LoaderEventKind,
    LoadErrorInfo,
    ScanReport,
    error_info_from_exception,
)
from ..types import AgentTool
from .importer import ToolImporter
from .sources import is_ignored_dir
from .watcher import ChangeScheduler, FolderWatcher, WatchTimings
from .worker import ImportTimeout, ImportWorker

__all__ = ["LoaderConfig", "ToolLoader"]

logger = logging.getLogger(__name__)

_claim_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class LoaderConfig:
    """How the loader watches and loads; the defaults suit interactive editing.

    Attributes:
        recursive: Scan and watch sub-folders.
        timings: Delays between file events and loading (see ``loader.watcher``).
        empty_grace: How long a file that became empty, or lost all its tools,
            keeps serving its last tools (editors that truncate, then write).
        import_timeout: Seconds before an import that does not finish is reported as stuck.
        rescan_interval: Seconds between stat checks of every file, a safety net
            for events the OS dropped (0 disables).
        supervise_interval: Seconds between checks that each watched folder
            exists and is watched (folders created or recreated later).
        entry_point_plugins: Load third-party plugins from the ``tool_loader.plugins`` entry points.
        builtin_plugins: Register the built-in discovery plugins.
    """

    recursive: bool = True
    timings: WatchTimings = field(default_factory=WatchTimings)
    empty_grace: float = 0.5
    import_timeout: float = 10.0
    rescan_interval: float = 2.0
    supervise_interval: float = 0.25
    entry_point_plugins: bool = True
    builtin_plugins: bool = True


@dataclass(slots=True)
class _FileRecord:
    """What the loader knows of one source file (touched only on the scheduler thread)."""

    path: Path
    root: Path
    module_name: str
    state: FileState = FileState.LOADED
    content_hash: str | None = None
    attempted_hash: str | None = None
    signature: tuple[int, int, int] | None = None
    discovered: dict[str, AgentTool] = field(default_factory=dict)
    claims: dict[str, int] = field(default_factory=dict)
    loaded_at: float | None = None
    load_seconds: float | None = None
    error: LoadErrorInfo | None = None
    empty_since: float | None = None
    pending_empty_hash: str | None = None
    removed: bool = False
    ever_loaded: bool = False


@dataclass(frozen=True, slots=True)
class _Read:
    """A file's bytes as read for one batch, with their stat signature and hash."""

    data: bytes
    signature: tuple[int, int, int] | None
    digest: str


def _read(path: Path) -> _Read | None:
    """Read ``path`` once for the batch; None if it vanished meanwhile."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return _Read(data, _signature(path), hashlib.sha256(data).hexdigest())


@dataclass(slots=True)
class _Outcome:
    """What happened to one file in a batch, for events."""

    before: FileStatus | None
    duration: float = 0.0
    touched: bool = False


class ToolLoader:
    """Loads every tool of some folders into a ``ToolRegistry`` and keeps it current.

    ``scan()`` loads once; ``start()`` watches (``with ToolLoader([...]) as ld``
    does both). All loading happens on one scheduler thread; readers use the
    registry, whose snapshots are never half-updated.
    """

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
        registry: ToolRegistry | None = None,
        *,
        plugins: Sequence[object] = (),
        recursive: bool | None = None,
        config: LoaderConfig | None = None,
    ) -> None:
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        config = config or LoaderConfig()
        if recursive is not None and recursive != config.recursive:
            config = replace(config, recursive=recursive)
        self.config = config
        resolved: list[Path] = []
        for raw in paths:
            path = Path(raw).expanduser().resolve()
            if path not in resolved:
                resolved.append(path)
        if not resolved:
            raise ValueError("ToolLoader needs at least one folder to load")
        self.paths: tuple[Path, ...] = tuple(resolved)
        self.registry = registry if registry is not None else ToolRegistry()
        self._importer = ToolImporter(self.paths)
        self._worker = ImportWorker()
        self._records: dict[Path, _FileRecord] = {}
        self._by_module: dict[str, Path] = {}
        self._source_verdicts: dict[Path, bool] = {}
        self._owners: dict[str, Path] = {}
        self._registered: dict[str, AgentTool] = {}
        self._claimants: dict[str, dict[Path, int]] = {}
        self._dirty_names: set[str] = set()
        self._statuses: dict[Path, FileStatus] = {}
        self._listeners: list[Callable[[LoaderEvent], None]] = []
        self._listeners_lock = threading.Lock()
        self._apply_lock = threading.RLock()
        self._scheduler = ChangeScheduler(
            self._apply, tick=self._supervise, tick_interval=config.supervise_interval
        )
        self._watcher = FolderWatcher(
            self._scheduler, config.timings, recursive=config.recursive, on_dir=self._on_dir_event
        )
        self._watching = False
        self._last_rescan = time.monotonic()
        self._closed = False
        self.plugin_manager = self._make_plugin_manager(plugins)

    # ------------------------------------------------------------ plugins
    def _make_plugin_manager(self, plugins: Sequence[object]) -> pluggy.PluginManager:
        manager = pluggy.PluginManager(PROJECT_NAME)
        manager.add_hookspecs(ToolLoaderHookSpecs)
        if self.config.builtin_plugins:
            # loader.plugins is the repository's plugins/ folder, mapped in by the wheel build.
            builtin: tuple[str, ...] = importlib.import_module("loader.plugins").BUILTIN_PLUGINS
            for module_name in builtin:
                manager.register(importlib.import_module(module_name), name=module_name)
        if self.config.entry_point_plugins:
            try:
                manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
            except Exception:
                logger.exception("group=<%s> | could not load plugin entry points", ENTRY_POINT_GROUP)
        for plugin in plugins:
            manager.register(plugin)
        manager.hook.tool_loader_configure.call_historic(kwargs={"loader": self})
        return manager

    def register_plugin(self, plugin: object, name: str | None = None) -> None:
        """Register another plugin; it applies to files loaded from now on."""
        self.plugin_manager.register(plugin, name=name)
        self._source_verdicts.clear()

    def class_tool_args(self, cls: type, path: Path) -> tuple[Sequence[Any], dict[str, Any]]:
        """Constructor arguments for a ``@tool`` class, from the ``tool_loader_class_tool_args`` hook."""
        answer = self.plugin_manager.hook.tool_loader_class_tool_args(cls=cls, path=path)
        if answer is None:
            return (), {}
        args, kwargs = answer
        return tuple(args), dict(kwargs)

    def _notify(self, hook_name: str, **kwargs: Any) -> None:
        """Call a notification hook; a plugin's failure is logged, never raised into the loader."""
        hook = getattr(self.plugin_manager.hook, hook_name)
        try:
            hook(**kwargs)
        except Exception:
            logger.exception("hook=<%s> | plugin raised", hook_name)

    # ------------------------------------------------------------- public
    def scan(self, progress: Callable[[int, int], None] | None = None) -> ScanReport:
        """Load every tool file once; returns a report of every file's status."""
        started = time.perf_counter()
        paths: set[Path] = set()
        for root in self.paths:
            paths.update(self._list_sources(root))
        paths.update(p for p, r in self._records.items() if not r.removed)
        with self._apply_lock:
            self._apply(paths, progress=progress)
        files = tuple(self._statuses[p] for p in sorted(paths) if p in self._statuses)
        return ScanReport(files=files, seconds=time.perf_counter() - started)

    def start(self) -> None:
        """Watch the folders; changes load on the scheduler thread."""
        if self._watching:
            return
        self._watching = True
        self._watcher.start()
        self._scheduler.start()
        for root in self.paths:
            if self._watcher.ensure_watch(root):
                self._scheduler.submit(functools.partial(self._reconcile, root))

    def stop(self) -> None:
        """Stop watching (tools stay registered)."""
        if not self._watching:
            return
        self._watching = False
        self._watcher.stop()
        self._scheduler.stop()

    def close(self) -> None:
        """Stop watching, unregister this loader's tools and drop its modules."""
        self.stop()
        if self._closed:
            return
        self._closed = True
        with self._apply_lock, self.registry.batch() as batch:
            for tool in self._registered.values():
                if self.registry.get(tool.tool_name) is tool:
                    batch.unregister(tool.tool_name)
            self._registered.clear()
            self._owners.clear()
        self._worker.close()
        self._importer.close()

    def __enter__(self) -> ToolLoader:
        self.scan()
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Return once every change on disk up to now has been applied (False on timeout).

        Besides waiting for queued events, this compares every file with what
        was last read, so a write whose event has not arrived yet is not missed.
        """
        if not self._watching:
            return True
        self._scheduler.submit(self._reconcile_all)
        return self._scheduler.wait_idle(timeout)

    def status(self, *, include_removed: bool = True) -> list[FileStatus]:
        """One record per source file seen, sorted by path."""
        statuses = self._statuses
        return [
            statuses[p]
            for p in sorted(statuses)
            if include_removed or statuses[p].state is not FileState.REMOVED
        ]

    def file_status(self, path: str | os.PathLike[str]) -> FileStatus | None:
        """The status record of one file."""
        return self._statuses.get(Path(path).resolve())

    def subscribe(self, listener: Callable[[LoaderEvent], None]) -> Callable[[], None]:
        """Call ``listener`` with every file event; returns a function that unsubscribes."""
        with self._listeners_lock:
            self._listeners = [*self._listeners, listener]

        def unsubscribe() -> None:
            with self._listeners_lock:
                self._listeners = [x for x in self._listeners if x is not listener]

        return unsubscribe

    @property
    def module_executions(self) -> int:
        """How many times tool or helper module code has been executed (benchmarks check one per save)."""
        return self._importer.executions

    @property
    def watching(self) -> bool:
        """Whether the loader is watching its folders."""
        return self._watching

    @property
    def importing(self) -> tuple[Path, float] | None:
        """The file importing right now and since when (``time.monotonic()``), for progress displays."""
        return self._worker.current

    # -------------------------------------------------------- discovery
    def _root_of(self, path: Path) -> Path | None:
        return self._importer.root_of(path)

    def _is_source(self, path: Path, root: Path) -> bool:
        """The plugins' verdict on ``path``, remembered: rescans ask about every file every time."""
        try:
            return self._source_verdicts[path]
        except KeyError:
            pass
        verdict = bool(self.plugin_manager.hook.tool_loader_is_tool_source(path=path, root=root))
        if len(self._source_verdicts) < 200_000:
            self._source_verdicts[path] = verdict
        return verdict

    def _list_sources(self, root: Path, under: Path | None = None) -> list[Path]:
        """Every tool source and package ``__init__`` below ``under`` (default ``root``)."""
        found: list[Path] = []
        start = under or root
        if not start.is_dir():
            return found
        for directory, dirnames, filenames in os.walk(start, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not is_ignored_dir(d))
            if not self.config.recursive:
                dirnames[:] = []
            here = Path(directory)
            for name in filenames:
                if name.endswith(".py"):
                    path = here / name
                    if name == "__init__.py" or self._is_source(path, root):
                        found.append(path)
        return found

    def _on_dir_event(self, path: Path) -> None:
        """A folder appeared or vanished: reconcile everything under it."""
        self._scheduler.submit(lambda: self._reconcile(path))

    def _reconcile_all(self) -> None:
        for root in self.paths:
            self._reconcile(root)

    def _reconcile(self, under: Path) -> None:
        """Schedule every file below ``under`` whose stat differs from what was last read."""
        root = self._root_of(under)
        if root is None:
            return
        timings = self.config.timings
        on_disk = set(self._list_sources(root, under)) if under.is_dir() else set()
        changed = []
        for path in on_disk:
            record = self._records.get(path)
            if record is None:
                if path.name != "__init__.py":
                    changed.append(path)
            elif record.removed or record.signature != _signature(path):
                changed.append(path)
        if changed:
            self._scheduler.note_many(changed, timings.settle)
        gone = [
            p
            for p, r in self._records.items()
            if not r.removed and p not in on_disk and (p == under or under in p.parents)
        ]
        if gone:
            self._scheduler.note_many(gone, timings.disappear_grace)

    def _supervise(self) -> None:
        """Periodic: watch folders that appeared or were recreated; rescan as a safety net."""
        for root in self.paths:
            if self._watcher.ensure_watch(root):
                self._reconcile(root)
            elif not root.is_dir():
                self._reconcile(root)
        interval = self.config.rescan_interval
        if interval and time.monotonic() - self._last_rescan >= interval:
            self._last_rescan = time.monotonic()
            self._reconcile_all()

    # ---------------------------------------------------------- applying
    def _apply(self, paths: set[Path], progress: Callable[[int, int], None] | None = None) -> None:
        """Bring the registry in line with the disk for ``paths`` (and their dependents)."""
        with self._apply_lock:
            self._importer.begin_batch()
            outcomes: dict[Path, _Outcome] = {}
            present: dict[Path, _Read] = {}
            missing: list[Path] = []
            changed_modules: list[str] = []
            for path in sorted(paths):
                root = self._root_of(path)
                if root is None:
                    continue
                record = self._records.get(path)
                is_init = path.name == "__init__.py"
                exists = path.is_file() and (is_init or self._is_source(path, root))
                if exists and not self._importer.is_within_root(path, root):
                    self._refuse_link(path, root, outcomes)
                    continue
                if is_init:
                    changed_modules.append(self._importer.module_name_for(path))
                    continue
                read = _read(path) if exists else None
                if read is not None:
                    present[path] = read
                    continue
                if record is not None and not record.removed:
                    missing.append(path)
                    changed_modules.append(record.module_name)

            self._pair_moves(present, missing, changed_modules)

            for path, read in present.items():
                record = self._records.get(path)
                if record is None or read.digest not in (record.content_hash, record.pending_empty_hash):
                    changed_modules.append(self._importer.module_name_for(path))

            # Everything that imported a changed module runs again, dependencies first.
            # Package __init__ modules (not tool sources) are dropped so their next import re-runs them.
            forced: set[Path] = set()
            stale: list[str] = [m for m in changed_modules if m not in self._module_paths()]
            if changed_modules:
                by_module = self._module_paths()
                for module_name in self._importer.dependents(changed_modules):
                    dependent = by_module.get(module_name)
                    if dependent is None:
                        stale.append(module_name)
                        continue
                    forced.add(dependent)
                    if dependent not in present and dependent not in missing:
                        read = _read(dependent)
                        if read is None:
                            missing.append(dependent)
                        else:
                            present[dependent] = read
            self._importer.forget(stale)

            for path in missing:
                self._remove_file(path, outcomes)

            order = self._load_order(list(present))
            total = len(order)
            for index, path in enumerate(order, 1):
                self._load_file(path, present[path], path in forced, outcomes)
                if progress is not None:
                    progress(index, total)

            self._commit(outcomes)

    def _pair_moves(
        self,
        present: dict[Path, _Read],
        missing: list[Path],
        changed_modules: list[str],
    ) -> None:
        """Treat a file that appeared and one that vanished in the same moment as a move.

        A rename's two halves arrive as separate events (and the second is lost
        when the destination folder is brand new), so when a batch holds a new
        file, known files already gone from disk leave in the same batch; when
        it holds a vanished file, new files not seen yet join it. The tools then
        move without a moment of absence or a spurious conflict.
        """
        new_files = [p for p in present if (r := self._records.get(p)) is None or r.removed]
        if new_files:
            for path, record in self._records.items():
                if not record.removed and path not in present and path not in missing and not path.exists():
                    missing.append(path)
                    changed_modules.append(record.module_name)
        if missing and self._watching:
            for root in self.paths:
                for path in self._list_sources(root):
                    known = self._records.get(path)
                    if (
                        path.name == "__init__.py"
                        or path in present
                        or (known is not None and not known.removed)
                    ):
                        continue
                    if not self._importer.is_within_root(path, root):
                        continue
                    read = _read(path)
                    if read is not None:
                        present[path] = read

    def _module_paths(self) -> dict[str, Path]:
        return self._by_module

    def _set_claims(self, record: _FileRecord, claims: dict[str, int]) -> None:
        """Change the names a file claims, keeping the name → claimants index in step."""
        self._dirty_names.update(record.claims)
        self._dirty_names.update(claims)
        for key in record.claims:
            waiting = self._claimants.get(key)
            if waiting is not None:
                waiting.pop(record.path, None)
                if not waiting:
                    del self._claimants[key]
        record.claims = claims
        for key, order in claims.items():
            self._claimants.setdefault(key, {})[record.path] = order

    def _load_order(self, paths: list[Path]) -> list[Path]:
        """Dependencies first (by what each module imported last time), then by path."""
        names = {self._importer.module_name_for(p): p for p in paths}
        ordered: list[Path] = []
        seen: set[Path] = set()

        def visit(path: Path, depth: int) -> None:
            if path in seen or depth > 50:
                return
            seen.add(path)
            for dep in sorted(self._importer.dependencies(self._importer.module_name_for(path))):
                if dep in names:
                    visit(names[dep], depth + 1)
            ordered.append(path)

        for path in sorted(paths):
            visit(path, 0)
        return ordered

    def _record_for(self, path: Path) -> _FileRecord:
        record = self._records.get(path)
        if record is None or record.removed:
            root = self._root_of(path)
            assert root is not None
            record = _FileRecord(path=path, root=root, module_name=self._importer.module_name_for(path))
            self._records[path] = record
            self._by_module[record.module_name] = path
        return record

    def _refuse_link(self, path: Path, root: Path, outcomes: dict[Path, _Outcome]) -> None:
        record = self._record_for(path)
        outcomes.setdefault(path, _Outcome(self._statuses.get(path), touched=True))
        target = os.path.realpath(path)
        record.state = FileState.FAILED
        record.error = LoadErrorInfo(
            "SymlinkRefused",
            f"link leads outside the watched folder {root} (to {target}); not loaded",
            str(path),
            None,
        )
        record.discovered = {}
        self._set_claims(record, {})

    def _remove_file(self, path: Path, outcomes: dict[Path, _Outcome]) -> None:
        record = self._records[path]
        outcomes.setdefault(path, _Outcome(self._statuses.get(path), touched=True))
        record.removed = True
        self._by_module.pop(record.module_name, None)
        record.state = FileState.REMOVED
        record.discovered = {}
        self._set_claims(record, {})
        record.error = None
        record.empty_since = None
        record.pending_empty_hash = None
        self._importer.forget([record.module_name])

    def _load_file(
        self,
        path: Path,
        read: _Read,
        forced: bool,
        outcomes: dict[Path, _Outcome],
    ) -> None:
        record = self._record_for(path)
        data, content_hash = read.data, read.digest
        record.signature = read.signature
        unchanged = content_hash == record.content_hash and record.state in (
            FileState.LOADED,
            FileState.CONFLICT,
        )
        retried = content_hash == record.attempted_hash and record.state in (
            FileState.FAILED,
            FileState.STUCK,
        )
        if not forced and (unchanged or retried) and record.empty_since is None:
            return
        outcome = outcomes.setdefault(path, _Outcome(self._statuses.get(path), touched=True))

        if record.empty_since is not None and content_hash == record.content_hash:
            # Back to the content that is already serving (truncate, then the same text again).
            record.empty_since = None
            record.pending_empty_hash = None
            outcome.touched = False
            return
        if record.empty_since is not None and content_hash == record.pending_empty_hash:
            # A file that lost all its tools: give up on them once the grace window has passed.
            waited = time.monotonic() - record.empty_since
            if waited < self.config.empty_grace:
                self._scheduler.note(path, self.config.empty_grace - waited)
                outcome.touched = False
                return
            self._accept_tools(record, {}, content_hash)
            return

        started = time.perf_counter()
        if not data.strip():
            tools: dict[str, AgentTool] = {}
            error = None
        else:
            tools, error = self._import_and_discover(record, data, content_hash)
        record.load_seconds = time.perf_counter() - started
        outcome.duration = record.load_seconds
        record.attempted_hash = content_hash

        if error is not None:
            record.state = FileState.STUCK if error.exc_type == "ImportTimeout" else FileState.FAILED
            record.error = error
            logger.warning("path=<%s> | load failed: %s", path, error.one_line())
            return
        if not tools and record.discovered and not forced:
            if record.empty_since is None or record.pending_empty_hash != content_hash:
                record.empty_since = time.monotonic()
                record.pending_empty_hash = content_hash
            self._scheduler.note(path, self.config.empty_grace)
            outcome.touched = False
            return
        self._accept_tools(record, tools, content_hash)

    def _accept_tools(self, record: _FileRecord, tools: dict[str, AgentTool], content_hash: str) -> None:
        record.discovered = tools
        self._set_claims(
            record,
            {
                name: record.claims.get(name, next(_claim_counter))
                for name in (normalise_tool_name(n) for n in tools)
            },
        )
        record.content_hash = content_hash
        record.loaded_at = time.time()
        record.error = None
        record.state = FileState.LOADED
        record.empty_since = None
        record.pending_empty_hash = None
        record.ever_loaded = True

    def _import_and_discover(
        self, record: _FileRecord, data: bytes, content_hash: str
    ) -> tuple[dict[str, AgentTool], LoadErrorInfo | None]:
        path = record.path

        def job() -> list[AgentTool]:
            module = self._importer.fresh_module(record.module_name, content_hash)
            if module is None:
                module = self._importer.load(path, data)
            return self._discover(module, path)

        try:
            found = self._worker.run(job, self.config.import_timeout, watch_file=path)
        except ImportTimeout as exc:
            info = LoadErrorInfo("ImportTimeout", str(exc), str(path), exc.line, exc.stack)
            return {}, info
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and not _from_tool(exc, path):
                raise
            return {}, error_info_from_exception(exc, path, self.paths)
        tools: dict[str, AgentTool] = {}
        for tool in found:
            tool.mark_dynamic()
            tools[tool.tool_name] = tool
        return tools, None

    def _discover(self, module: ModuleType, path: Path) -> list[AgentTool]:
        """Merge every plugin's tools; reject bad names and names defined twice in the file."""
        results = self.plugin_manager.hook.tool_loader_discover_tools(module=module, path=path, loader=self)
        seen_ids: set[int] = set()
        by_name: dict[str, AgentTool] = {}
        for result in results:
            for tool in result or ():
                if id(tool) in seen_ids:
                    continue
                seen_ids.add(id(tool))
                if not isinstance(tool, AgentTool):
                    raise ToolDefinitionError(
                        f"{path}: a discovery plugin returned {tool!r}, which is not an AgentTool"
                    )
                name = tool.tool_name
                if not is_valid_tool_name(name):
                    raise ToolDefinitionError(f"{path}: invalid tool name {name!r}")
                key = normalise_tool_name(name)
                if key in by_name:
                    raise ToolDefinitionError(
                        f"{path}: tool name {name!r} is defined twice in this file"
                        + _lines(by_name[key], tool)
                    )
                by_name[key] = tool
        return list(by_name.values())

    # ----------------------------------------------------------- commit
    def _commit(self, outcomes: dict[Path, _Outcome]) -> None:
        """Decide every affected name's owner, swap the registry once, then announce."""
        affected, self._dirty_names = self._dirty_names, set()

        claimants = {
            key: sorted((order, path) for path, order in self._claimants.get(key, {}).items())
            for key in affected
        }

        old_owners = dict(self._owners)
        for key in affected:
            current = self._owners.get(key)
            candidates = claimants[key]
            if current is not None and current in self._claimants.get(key, {}):
                continue
            if candidates:
                self._owners[key] = candidates[0][1]
            else:
                self._owners.pop(key, None)

        # Files that gained or lost ownership without a save change status too.
        for key in affected:
            for path in (old_owners.get(key), self._owners.get(key)):
                if path is not None and path not in outcomes:
                    outcomes[path] = _Outcome(self._statuses.get(path), touched=True)
        for key in affected:
            for _, path in claimants[key]:
                if path not in outcomes:
                    outcomes[path] = _Outcome(self._statuses.get(path), touched=True)

        changes: list[tuple[str, AgentTool | None, AgentTool | None, Path | None]] = []
        with self.registry.batch() as batch:
            removals: list[tuple[str, AgentTool]] = []
            upserts: list[tuple[AgentTool, Path]] = []
            for key in sorted(affected):
                old_path = old_owners.get(key)
                new_path = self._owners.get(key)
                old_tool = self._registered.get(key)
                new_tool = (
                    self._records[new_path].discovered.get(self._exact(new_path, key)) if new_path else None
                )
                if old_tool is new_tool:
                    continue
                if old_tool is not None and (new_tool is None or old_tool.tool_name != new_tool.tool_name):
                    removals.append((old_tool.tool_name, old_tool))
                    changes.append(("removed", None, old_tool, old_path))
                    old_tool = None
                if new_tool is not None and new_path is not None:
                    upserts.append((new_tool, new_path))
                    changes.append(("replaced" if old_tool else "added", new_tool, old_tool, new_path))
            for name, removed in removals:
                if batch.get(name) is removed:  # someone may have unregistered it by hand
                    batch.unregister(name)
            for upserted, source in upserts:
                batch.replace(upserted, source=str(source))
        for key in affected:
            owner = self._owners.get(key)
            serving = self._records[owner].discovered.get(self._exact(owner, key)) if owner else None
            if serving is None:
                self._registered.pop(key, None)
            else:
                self._registered[key] = serving

        self._publish(outcomes, changes)

    def _exact(self, path: Path, key: str) -> str:
        for name in self._records[path].discovered:
            if normalise_tool_name(name) == key:
                return name
        return key

    def _publish(
        self,
        outcomes: dict[Path, _Outcome],
        changes: list[tuple[str, AgentTool | None, AgentTool | None, Path | None]],
    ) -> None:
        statuses = dict(self._statuses)
        events: list[LoaderEvent] = []
        for path, outcome in sorted(outcomes.items()):
            record = self._records[path]
            status = self._status_of(record)
            before = outcome.before
            if before is not None and status == before and outcome.touched is False:
                continue
            statuses[path] = status
            if status != before:
                events.append(self._event_for(record, status, before, outcome))
        self._statuses = statuses

        for kind, tool, previous, source in changes:
            where = source if source is not None else Path("?")
            if kind == "added" and tool is not None:
                self._notify("tool_loader_tool_added", tool=tool, path=where)
            elif kind == "replaced" and tool is not None and previous is not None:
                self._notify("tool_loader_tool_replaced", tool=tool, previous=previous, path=where)
            elif kind == "removed" and previous is not None:
                self._notify("tool_loader_tool_removed", name=previous.tool_name, tool=previous, path=where)
        for event in events:
            if event.error is not None and event.kind in (LoaderEventKind.FAILED, LoaderEventKind.STUCK):
                self._notify("tool_loader_load_failed", path=event.path, error=event.error)
            self._notify(
                "tool_loader_file_status_changed", status=event.status, previous=outcomes[event.path].before
            )
            for listener in self._listeners:
                try:
                    listener(event)
                except Exception:
                    logger.exception("listener=<%r> | loader listener raised", listener)

    def _status_of(self, record: _FileRecord) -> FileStatus:
        owned = tuple(
            sorted(
                name
                for name in record.discovered
                if self._owners.get(normalise_tool_name(name)) == record.path
            )
        )
        conflicts = tuple(
            sorted(
                (name, self._owners[normalise_tool_name(name)])
                for name in record.discovered
                if self._owners.get(normalise_tool_name(name)) not in (None, record.path)
            )
        )
        state = record.state
        if state is FileState.LOADED and conflicts:
            state = FileState.CONFLICT
        if state is FileState.CONFLICT and not conflicts:
            state = FileState.LOADED
        record.state = state
        return FileStatus(
            path=record.path,
            module_name=record.module_name,
            state=state,
            tools=owned,
            content_hash=record.content_hash[:12] if record.content_hash else None,
            loaded_at=record.loaded_at,
            load_seconds=record.load_seconds,
            error=record.error,
            conflicts=conflicts,
        )

    def _event_for(
        self, record: _FileRecord, status: FileStatus, before: FileStatus | None, outcome: _Outcome
    ) -> LoaderEvent:
        old_tools = set(before.tools) if before and before.state is not FileState.REMOVED else set()
        new_tools = set(status.tools)
        kind: LoaderEventKind
        if status.state is FileState.REMOVED:
            kind = LoaderEventKind.REMOVED
        elif status.state is FileState.FAILED:
            kind = LoaderEventKind.FAILED
        elif status.state is FileState.STUCK:
            kind = LoaderEventKind.STUCK
        elif status.state is FileState.CONFLICT:
            kind = LoaderEventKind.CONFLICT
        elif before is None or before.state is FileState.REMOVED:
            kind = LoaderEventKind.ADDED
        elif before.state in (FileState.FAILED, FileState.STUCK, FileState.CONFLICT):
            kind = LoaderEventKind.RECOVERED
        else:
            kind = LoaderEventKind.UPDATED
        return LoaderEvent(
            kind=kind,
            path=record.path,
            tools=status.tools,
            duration_ms=outcome.duration * 1000,
            time=time.time(),
            status=status,
            error=status.error,
            added=tuple(sorted(new_tools - old_tools)),
            removed=tuple(sorted(old_tools - new_tools)),
        )


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _lines(first: AgentTool, second: AgentTool) -> str:
    lines = [getattr(t, "source_line", None) for t in (first, second)]
    if all(isinstance(x, int) for x in lines):
        return f" (lines {lines[0]} and {lines[1]})"
    return ""


def _from_tool(exc: BaseException, path: Path) -> bool:
    """Whether an exception was raised by the tool file's own code (e.g. ``sys.exit()`` at import)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            return True
        tb = tb.tb_next
    return False
