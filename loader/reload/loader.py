"""The directory loader: keeps a ``ToolRegistry`` equal to what some folders define.

Every change goes through ``_apply``: plan the batch (``batch.py``: what is on
disk, what moved, what imported a changed helper), run each file through its
state machine (``file_state.py``), import what must run (``backend.py``),
decide who owns each name (``ownership.py``), commit the difference to the
registry as one swap, then publish statuses, events and hooks derived from
that commit (``events.py``).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from immutables import Map

from ..fingerprint import FingerprintCache
from ..health import ThreadHealth
from ..importing.backend import InProcessBackend, LoadBackend
from ..importing.bytecode_cache import BytecodeCache
from ..importing.discovery import (
    class_tool_args,
    configure_plugins,
    discover,
    has_implementations,
    make_plugin_manager,
    notify_hook,
)
from ..listeners import Listeners
from ..names import normalise_tool_name
from ..registry.changes import RegistryChangeSet
from ..registry.snapshot import SearchHit
from ..registry.tool_registry import ToolRegistry
from ..status import (
    FileState,
    FileStatus,
    ImportInProgress,
    LoaderEvent,
    ScanReport,
    UnreadableFolder,
)
from ..types import AgentTool, Component
from .batch import load_order, plan_batch
from .commit import commit_owners
from .config import LoaderConfig
from .events import Announcer, FileOutcome, derive_events, failing_helpers, note_spec_changes
from .file_state import FileRecord
from .file_steps import FileSteps
from .imports import ImportRunner
from .ownership import NameOwnership
from .path_order import path_key, sorted_paths
from .published import Published
from .reconcile import Reconciler
from .roots import root_as_given
from .sources import SourceFinder
from .watcher import ChangeScheduler, FolderWatcher, WatchMode

__all__ = ["LoaderConfig", "ToolLoader"]

logger = logging.getLogger(__name__)


class ToolLoader:
    """Loads every tool of some folders into a ``ToolRegistry`` and keeps it current.

    ``scan()`` loads once; ``start()`` watches; ``close()`` unregisters the tools
    and releases threads and modules (``with ToolLoader([...]) as ld`` does all
    three). Batches run one at a time, on the scheduler's thread (or, for a
    save with nothing else pending, on the watcher's); readers use the
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
        isolation: Literal["thread", "process", "sandbox"] | None = None,
    ) -> None:
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        config = config or LoaderConfig()
        if recursive is not None and recursive != config.recursive:
            config = replace(config, recursive=recursive)
        if isolation is not None and isolation != config.isolation:
            config = replace(config, isolation=isolation)
        self.config = config
        # Kept as given (links unresolved): a link a deployment flips (git-sync) is followed.
        self.paths: tuple[Path, ...] = tuple(dict.fromkeys(root_as_given(raw) for raw in paths))
        if not self.paths:
            raise ValueError("ToolLoader needs at least one folder to load")
        self.registry = registry if registry is not None else ToolRegistry(limits=config.call_limits())
        self._backend: LoadBackend = make_backend(self.paths, config)
        self._records: dict[Path, FileRecord] = {}
        self._by_module: dict[str, Path] = {}
        self._ownership = NameOwnership()
        self._registered: dict[str, AgentTool] = {}
        self._quarantined: frozenset[str] = frozenset()
        self._components: dict[str, Component] = {}
        self._statuses: Map[Path, FileStatus] = Map()  # persistent: a batch costs what it changed
        self._fingerprints = FingerprintCache()
        self._published = Published(self.registry.snapshot(), Map(), self._fingerprints)
        self._publish_lock = threading.Lock()
        self._publish_listeners: Listeners[Published] = Listeners("published-record", logger)
        self._in_commit = False
        self._foreign_pending = False
        self._apply_lock = threading.RLock()
        self._watching = False
        self._closed = False
        self.threads = ThreadHealth()
        """The loader's own threads (and those serving it): which died, and of what."""
        # The parts, each built from those before it.
        self.plugin_manager = make_plugin_manager(
            plugins, builtin=config.builtin_plugins, entry_points=config.entry_point_plugins
        )
        self._announcer = Announcer(
            functools.partial(notify_hook, self.plugin_manager),
            hooked=functools.partial(has_implementations, self.plugin_manager),
        )
        self._sources = SourceFinder(self.plugin_manager, recursive=config.recursive)
        self._scheduler = ChangeScheduler(
            self._apply, tick_interval=config.supervise_interval, threads=self.threads
        )
        self._watcher = FolderWatcher(
            self._scheduler,
            config.timings,
            recursive=config.recursive,
            matters=self._matters,
            threads=self.threads,
        )
        self._imports = ImportRunner(
            self._backend,
            functools.partial(discover, self.plugin_manager, loader=self),
            self.paths,
            config=config,
            look_again=self._scheduler.look_again,
        )
        self._steps = FileSteps(
            self._records,
            self._by_module,
            self._ownership,
            backend=self._backend,
            imports=self._imports,
            status_of=self._status_of,
            look_again=self._scheduler.look_again,
            config=config,
        )
        self._reconciler = Reconciler(
            self.paths,
            self._records,
            sources=self._sources,
            backend=self._backend,
            scheduler=self._scheduler,
            watcher=self._watcher,
            config=config,
            importing=self._imports.in_flight,
            threads=self.threads,
        )
        # The one step that connects them: the watcher and the scheduler call the reconciler
        # back, the registry reports commits, and plugins meet the finished loader.
        self._scheduler.connect(tick=self._reconciler.supervise)
        self._watcher.connect(on_dir=self._reconcile_later, on_overflow=self._reconciler.events_lost)
        self._unfollow_registry = self.registry.subscribe(self._on_registry_commit)
        configure_plugins(self.plugin_manager, self)

    def _reconcile_later(self, folder: Path) -> None:
        """Queue a reconcile of ``folder`` (it appeared or vanished) on the scheduler's thread."""
        self._scheduler.submit(functools.partial(self._reconciler.reconcile, folder))

    # ------------------------------------------------------------ plugins
    def register_plugin(self, plugin: object, name: str | None = None) -> None:
        """Register another plugin; it applies to files loaded from now on."""
        self.plugin_manager.register(plugin, name=name)
        self._sources.forget_verdicts()

    def class_tool_args(self, cls: type, path: Path) -> tuple[Sequence[Any], dict[str, Any]]:
        """Constructor arguments for a ``@tool`` class, from the ``tool_loader_class_tool_args`` hook."""
        return class_tool_args(self.plugin_manager, cls, path)

    # ------------------------------------------------------------- public
    def scan(self, progress: Callable[[int, int], None] | None = None) -> ScanReport:
        """Load every tool file once; returns a report of every file's status."""
        started = time.perf_counter()
        # The pack holds what a process's first scan loads (every file): a later scan imports only
        # what changed, and writing that alone would drop the rest.
        cache = self._backend.bytecode_cache if not self._records else None
        with _collector_paused():
            paths: set[Path] = set()
            refused: list[tuple[Path, str]] = []
            for root in self.paths:
                paths.update(self._sources.list_sources(root, unreadable=refused))
            paths.update(p for p, r in self._records.items() if not r.is_removed)
            with self._apply_lock:
                if cache is not None:
                    cache.record()
                try:
                    self._apply(paths, progress=progress)
                finally:
                    if cache is not None:
                        cache.save()
        files = tuple(self._statuses[p] for p in sorted_paths(paths) if p in self._statuses)
        roots = set(self.paths)
        unreadable = tuple(
            UnreadableFolder(path, reason, path in roots)
            for path, reason in sorted(
                dict(refused).items(), key=lambda item: (item[0] not in roots, item[0])
            )
        )
        return ScanReport(files=files, seconds=time.perf_counter() - started, unreadable=unreadable)

    def start(self) -> None:
        """Watch the folders; changes load on the scheduler thread."""
        if self._watching:
            return
        self._watching = True
        self._watcher.start()
        self._scheduler.start()
        watched = [root for root in self.paths if self._watcher.ensure_watch(root)]
        # Every thread is up before any of them has work: a thread start while another is busy
        # costs the caller a GIL switch interval. The reconcile covers the scan-to-watch gap.
        self._reconciler.start()
        for root in watched:
            self._scheduler.submit(functools.partial(self._reconciler.reconcile, root))

    def stop(self) -> None:
        """Stop watching and let idle threads go, import threads included.

        Tools stay registered and their modules stay loaded: they are what the
        registered tools run, and ``start()`` resumes from them. ``close()``
        (and leaving ``with``) releases those too.
        """
        if self._watching:
            self._watching = False
            self._reconciler.stop()
            self._watcher.stop()
            self._scheduler.stop()
        with self._apply_lock:
            self._backend.pause()

    def close(self) -> None:
        """Stop watching, unregister this loader's tools and drop its modules and threads."""
        self.stop()
        if self._closed:
            return
        self._closed = True
        with self._apply_lock, self.registry.batch() as batch:
            for tool in self._registered.values():
                if self.registry.get(tool.tool_name) is tool:
                    batch.unregister(tool.tool_name)
            for component in self._components.values():
                if batch.get_component(component.kind, component.key) is component:
                    batch.drop_component(component.kind, component.key)
            self._registered.clear()
            self._components.clear()
        self._imports.abandon_all()
        self._backend.close()
        self._unfollow_registry()
        self.plugin_manager.hook.tool_loader_unconfigure(loader=self)

    def __enter__(self) -> ToolLoader:
        self.scan()
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Return once every change on disk up to now has been applied (False on timeout).

        Besides waiting for queued events, this compares every file with what
        was last read, so a write whose event has not arrived yet is not missed.
        """
        if not self._watching:
            return True
        self._scheduler.submit(self._reconciler.reconcile_all)
        return self._scheduler.wait_idle(timeout)

    def status(self, *, include_removed: bool = True) -> list[FileStatus]:
        """One record per source file seen, sorted by path."""
        shown = sorted(self._statuses.items(), key=lambda item: path_key(item[0]))
        return [s for _, s in shown if include_removed or s.state is not FileState.REMOVED]

    def fingerprint(self) -> str:
        """sha256 of the tool set as last committed: equal on replicas that loaded equal files."""
        return self._published.fingerprint

    @property
    def published(self) -> Published:
        """The last post-commit record: a registry snapshot with the file statuses and fingerprint behind it.

        Readers that need tools and file facts to agree (a fingerprint, a probe)
        take this one object instead of the registry's snapshot and ``status()``
        read at two moments.
        """
        return self._published

    def subscribe_published(self, listener: Callable[[Published], None]) -> Callable[[], None]:
        """Call ``listener`` with every post-commit record, right after it is published.

        Returns the function that unsubscribes. A listener runs on the thread
        that published (the loader's, or one that committed to the registry
        directly); it must be quick and must not raise.
        """
        return self._publish_listeners.subscribe(listener)

    def search_tools(self, query: str, limit: int = 5) -> list[SearchHit]:
        """The ``limit`` loaded tools that best match ``query`` (see ``RegistrySnapshot.search_tools``)."""
        return self.registry.search_tools(query, limit)

    def file_status(self, path: str | os.PathLike[str]) -> FileStatus | None:
        """The status record of one file."""
        given = root_as_given(path)
        return self._statuses.get(given) or self._statuses.get(given.resolve())

    def subscribe(self, listener: Callable[[LoaderEvent], None]) -> Callable[[], None]:
        """Call ``listener`` with every file event; returns a function that unsubscribes."""
        return self._announcer.subscribe(listener)

    def watch_modes(self) -> dict[Path, WatchMode]:
        """How each folder is watched now: by OS events, by polling (the OS gave no more watches), or not."""
        return {root: self._watcher.mode(root) for root in self.paths}

    def imports_in_progress(self) -> tuple[ImportInProgress, ...]:
        """Imports still running after the loader stopped waiting for them (slow or stuck files)."""
        return self._imports.in_progress()

    @property
    def module_executions(self) -> int:
        """How many times tool or helper module code has been executed (benchmarks check one per save)."""
        return self._backend.executions

    def serving_problem(self) -> str | None:
        """Why tools cannot be called now (process isolation: no worker process starts), or None."""
        return self._backend.serving_problem()

    @property
    def bytecode_cache(self) -> BytecodeCache | None:
        """Where compiled tool files are kept between starts, with its hit and miss counts (None: off)."""
        return self._backend.bytecode_cache

    @property
    def watching(self) -> bool:
        """Whether the loader is watching its folders."""
        return self._watching

    def _status_of(self, path: Path) -> FileStatus | None:
        return self._statuses.get(path)

    def _matters(self, path: Path) -> bool:
        """Whether a batch for ``path`` could change anything (asked by the watcher for each file event)."""
        if path in self._records:
            return True
        root = self._backend.root_of(path)
        return root is not None and self._sources.matters(path, root)

    @property
    def closed(self) -> bool:
        """Whether ``close`` ran."""
        return self._closed

    @property
    def quarantined(self) -> frozenset[str]:
        """The tool names (normalised) withheld from the registry: out of listings, calls refused."""
        return self._quarantined

    def quarantine(self, names: Iterable[str]) -> None:
        """Withhold exactly ``names`` from the registry, in one commit; the others come back.

        While watching, the commit runs on the loader's own thread before the next batch.
        """
        wanted = frozenset(normalise_tool_name(name) for name in names)

        def apply() -> None:
            with self._apply_lock:
                changed = wanted ^ self._quarantined
                if not changed:
                    return
                self._quarantined = wanted
                self._ownership.touch(changed)
                self._commit({})

        if self._watching:
            self._scheduler.submit(apply)
        else:
            apply()

    # ---------------------------------------------------------- applying
    def _apply(self, paths: set[Path], progress: Callable[[int, int], None] | None = None) -> None:
        """Bring the registry in line with the disk for ``paths`` (and their dependents)."""
        with self._apply_lock:
            self._backend.begin_batch()
            plan = plan_batch(
                paths,
                records=self._records,
                modules=self._by_module,
                backend=self._backend,
                sources=self._sources,
                roots=self.paths,
                look_for_moves=self._watching,
                disappear_grace=self.config.timings.disappear_grace if self._watching else None,
                empty_grace=self.config.empty_grace if self._watching else None,
                now=time.monotonic(),
            )
            outcomes: dict[Path, FileOutcome] = {}
            steps = self._steps
            steps.hold_the_absent(plan)
            self._backend.forget(plan.stale_modules)
            steps.settle_problems(plan, outcomes)
            for old, new in plan.moves:
                self._ownership.transfer(old, new)
                outcomes[new] = FileOutcome(self._statuses.get(new), moved_from=old)
                steps.carry_over(old, new, outcomes)
            for path in plan.missing:
                steps.remove(path, outcomes)
            order = load_order(plan.present, self._backend)
            if not self._watching:
                steps.start_imports_ahead(order, plan, outcomes)
            try:
                for index, path in enumerate(order, 1):
                    steps.load(
                        path, plan.present[path], path in plan.forced, outcomes, watching=self._watching
                    )
                    if progress is not None:
                        progress(index, len(order))
            finally:
                self._imports.drop_ahead()
            self._commit(outcomes)
        if self._foreign_pending:  # a direct registry commit landed while this batch held the lock
            self._foreign_pending = False
            with self._apply_lock:
                self._publish()

    # ----------------------------------------------------------- commit
    def _commit(self, outcomes: dict[Path, FileOutcome]) -> None:
        """Swap the registry once for every name whose owner or tool changed, then announce."""
        self._in_commit = True
        try:
            decided, committed = commit_owners(
                self.registry,
                self._ownership,
                self._records,
                self._registered,
                self._components,
                self._quarantined,
            )
        finally:
            self._in_commit = False
        # A file whose names changed hands because of another file's change gets a new status too;
        # when every known file is in the batch already (a scan), there is nothing to add.
        everyone_in = len(outcomes) >= len(self._records) and self._records.keys() <= outcomes.keys()
        for key in () if everyone_in else decided.names:
            involved = {decided.before.get(key), self._ownership.owner(key), *self._ownership.claiming(key)}
            for path in involved:
                if path is not None and path not in outcomes:
                    outcomes[path] = FileOutcome(self._statuses.get(path))
        known = {str(path): path for path in outcomes}

        def path_of(source: str) -> Path:
            return known.get(source) or Path(source)

        note_spec_changes(self._records, committed, path_of)
        failing = functools.partial(failing_helpers, self._backend, self._by_module, self._records)
        changed, events = derive_events(
            outcomes,
            self._records,
            self._ownership.owner,
            failing,
            with_events=self._announcer.wants_events(),
        )
        self._statuses = self._statuses.update(changed)
        self._publish()  # one record: tools and hashes agree
        self._announcer.announce(committed, events, outcomes, path_of)

    # -------------------------------------------------------- publishing
    def _publish(self) -> None:
        """Publish the registry's current snapshot with the current statuses, then tell the listeners."""
        with self._publish_lock:
            snapshot = self.registry.snapshot()
            if snapshot.generation < self._published.generation:
                return  # a later record is out already (another thread published after a newer commit)
            record = Published(snapshot, self._statuses, self._fingerprints)
            self._published = record
        self._publish_listeners.tell(record)

    def _on_registry_commit(self, change_set: RegistryChangeSet) -> None:
        """A commit to the registry: publish it if it was not the loader's own (a tool registered directly).

        The loader's own commits are published by ``_commit`` once their file
        statuses are known; a commit landing while the loader applies a batch is
        published by that batch, or right after it (``_foreign_pending``).
        """
        if not self._apply_lock.acquire(blocking=False):
            self._foreign_pending = True
            return
        try:
            if not self._in_commit:  # not this thread's own commit, delivered inside _commit
                self._publish()
        finally:
            self._apply_lock.release()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector out of a scan, and what the scan made out of its young generations.

    Loading thousands of files makes millions of long-lived objects and hardly any
    garbage: the collector's passes over them are a large share of a big scan.
    Re-enabled as is, its next young collection would still walk every object the
    scan made; moving them to the oldest generation
    (``gc.freeze()`` then ``gc.unfreeze()``, no walk) leaves them to the full
    collections that would visit them anyway. Skipped when something else keeps
    objects frozen: unfreezing would hand those back to the collector too.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def make_backend(paths: tuple[Path, ...], config: LoaderConfig) -> LoadBackend:
    """The backend ``config.isolation`` asks for (process mode is imported only when used).

    The loader is the composition root: the one place that knows every backend.
    """
    if config.isolation in ("process", "sandbox"):
        from ..isolation import ProcessBackend

        return ProcessBackend(
            paths,
            config.worker_options(),
            builtin_plugins=config.builtin_plugins,
            entry_point_plugins=config.entry_point_plugins,
            import_timeout=config.import_timeout,
            sandbox=config.sandbox_options(),
        )
    if config.isolation != "thread":
        raise ValueError(f"isolation must be 'thread', 'process' or 'sandbox', not {config.isolation!r}")
    return InProcessBackend(
        paths, bytecode_cache=BytecodeCache.for_roots(paths) if config.bytecode_cache else None
    )
