"""``ProcessBackend``: the loader's ``LoadBackend`` when ``isolation="process"``.

Imports run in import workers (each a ``ToolImporter`` like the in-process one,
with the built-in and entry-point discovery plugins), one import per worker at
a time and several workers at once, so a hanging import holds only its own
worker (``importers.py``); calls run in other workers, one call per worker at a
time, so a stuck or crashing import never holds up a call and a crashing call
harms only itself. The loader's process keeps the registry, the specs (in
``ProxyTool``s) and the module ledger that lets any worker rebuild any loaded
version.

Plugin *objects* passed to ``ToolLoader(plugins=[...])`` cannot cross a process
boundary: in process mode their discovery hooks are not used (their
notification and ``tool_loader_is_tool_source`` hooks still run, in the
loader's process). Register discovery plugins through the
``tool_loader.plugins`` entry-point group to have them run in the workers.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final, cast

from ..importing.backend import Discover, Found, ImporterNames, Load
from ..importing.importer import ToolImporter
from ..importing.threads import ImportAbandoned, ImportJob, ImportPool, ImportTimeout
from ..status import LoadErrorInfo, LoadErrorKind, RemoteLoadError
from .calls import CallRouter
from .components import proxy_component
from .description_wire import description_from_wire
from .errors import WorkerCrashed, WorkerSentTooMuch, WorkerStartError, WorkerTimeout
from .fork_server import ForkServer
from .fork_server import available as fork_server_available
from .host import harden_host
from .importers import ImportWorkers
from .ledger import SERIAL_BLOCK, ModuleLedger, ModuleVersion
from .messages import LoadReply, LoadRequest, ModuleEntry, WorkerSettings
from .options import WorkerOptions, worker_environment
from .pool import WorkerPool
from .process import WorkerProcess, describe_exit, worker_command_path
from .proxy import ProxyTool
from .sandbox.options import SandboxOptions
from .sandbox.policy import worker_policy
from .sandbox.probe import Layer, check_layers
from .tree import ProcessWatch

__all__ = ["ProcessBackend"]

logger = logging.getLogger(__name__)

_backend_counter = itertools.count(1)
_PREPARE_PER_BATCH = 8
"""New versions built ahead of their first call per batch: a save's few files, not a whole scan."""
_STRAYS_INTERVAL: Final = 0.25
"""Seconds between looks for processes a build left in an idle sandbox worker."""
MAX_IMPORT_WORKERS: Final = 4
"""Imports running at once, each in its own worker (as many as the in-process import threads)."""


def working_directory(roots: Sequence[Path]) -> Path:
    """The first tool folder's parent (or its nearest existing ancestor): where workers run."""
    candidate = roots[0].parent
    while not candidate.is_dir() and candidate != candidate.parent:
        candidate = candidate.parent
    return candidate


class ProcessBackend(ImporterNames):
    """Imports and calls in supervised worker processes; hands the loader ``ProxyTool``s."""

    def __init__(
        self,
        roots: Sequence[Path],
        options: WorkerOptions | None = None,
        *,
        builtin_plugins: bool = True,
        entry_point_plugins: bool = True,
        import_timeout: float = 10.0,
        sandbox: SandboxOptions | None = None,
    ) -> None:
        if os.name != "posix":
            raise WorkerStartError("isolation='process' needs a POSIX system (Linux or macOS)")
        self.sandbox_layers: tuple[Layer, ...] = () if sandbox is None else check_layers(sandbox)
        """Sandbox mode: each layer as this machine enforces it (empty in process mode)."""
        harden_host()  # workers cannot read this process's environment or memory (host.py)
        self.options = options or WorkerOptions()
        tag = f"p{next(_backend_counter)}"
        # Names only: this importer never executes tool code in the loader's process.
        self._importer = ToolImporter(roots, tag=tag)
        settings = WorkerSettings(
            tag=tag,
            roots=[str(r) for r in roots],
            builtin_plugins=builtin_plugins,
            entry_point_plugins=entry_point_plugins,
            max_memory_mb=self.options.max_memory_mb,
            subreaper=self.options.max_processes is not None or sandbox is not None,
            max_result_bytes=self.options.max_result_bytes,
        )
        env = worker_environment(self.options.worker_env)
        cwd = working_directory(roots)
        self._scratch: Path | None = None
        if sandbox is not None:
            self._scratch = Path(tempfile.mkdtemp(prefix="tool-loader-sandbox-"))
            settings["sandbox"] = worker_policy(roots, sandbox, self._scratch)
        self._forks = (
            ForkServer(worker_command_path(settings["roots"]), env, cwd, self.options.start_timeout)
            if fork_server_available() and not self.options.command_prefix
            else None
        )
        """The template new workers are forked from (None: each starts as its own interpreter)."""
        self.pool = WorkerPool(
            lambda: self._start_worker(settings, env, cwd),
            max_in_use=self.options.call_workers,
            spares=self.options.spare_workers,
            start_timeout=self.options.start_timeout,
        )
        self._ledger = ModuleLedger()
        self.router = CallRouter(
            self.pool,
            self.options.call_timeout,
            self._ledger,
            self.options.max_result_bytes,
            self.options.max_processes,
            self.options.max_concurrent_per_tool,
        )
        self._importers = ImportWorkers(self.pool, MAX_IMPORT_WORKERS)
        self._watch = (
            None
            if self.options.max_processes is None
            else ProcessWatch(
                lambda: [*self.pool.workers(), *self._importers.workers()], self.options.max_processes
            )
        )
        if self._watch is not None:
            self._watch.start()
        self._closing = threading.Event()
        if sandbox is not None:
            threading.Thread(target=self._stop_idle_strays, name="tool-loader-strays", daemon=True).start()
        self._importing: dict[object, WorkerProcess] = {}
        """The import worker of each import running, by the import's own token (so ``abandon`` can stop
        it). Not by thread: a thread left after an abandoned import ends, and the next import thread
        often gets the same ident, so a late ``abandon`` of the old import would stop the new one's."""
        self._tokens: weakref.WeakKeyDictionary[ImportJob[Found], object] = weakref.WeakKeyDictionary()
        self._executions = 0
        self._prepared_in_batch = 0
        self._lock = threading.Lock()
        self._import_timeout = import_timeout
        self._jobs = ImportPool("tool-loader-process-import", max_threads=MAX_IMPORT_WORKERS)
        self.pool.warm()

    def _start_worker(self, settings: WorkerSettings, env: dict[str, str], cwd: Path) -> WorkerProcess:
        """A new worker; in sandbox mode with a scratch folder of its own (its ``TMPDIR`` and ``HOME``)."""
        prefix = self.options.command_prefix
        policy = settings.get("sandbox")
        if policy is None or self._scratch is None:
            return WorkerProcess(settings, env, cwd, prefix, forks=self._forks)
        scratch = Path(tempfile.mkdtemp(dir=self._scratch))
        policy = {**policy, "write": [str(scratch), *policy["write"][1:]]}
        own_env = {**env, "TMPDIR": str(scratch), "HOME": str(scratch)}
        return WorkerProcess(
            {**settings, "sandbox": policy}, own_env, cwd, prefix, scratch=scratch, forks=self._forks
        )

    def serving_problem(self) -> str | None:
        """Why calls cannot be served now (the health probes report it), or None."""
        return self.pool.problem()

    # ------------------------------------------------------------ names (local)
    @property
    def executions(self) -> int:
        """Module executions in the import workers (replays that rebuild a version elsewhere do not count)."""
        return self._executions

    @property
    def bytecode_cache(self) -> None:
        """Not kept: the worker processes compile what they import."""
        return None

    # ------------------------------------------------------------ imports
    def begin_batch(self) -> None:
        """A new batch: up to ``_PREPARE_PER_BATCH`` versions built ahead of their first call again."""
        with self._lock:
            self._prepared_in_batch = 0

    enforces_timeouts = True
    """A stuck import's worker is killed at the deadline, so a job always ends by itself."""

    def start_load(
        self, path: Path, module_name: str, source: bytes, content_hash: str, discover: Discover
    ) -> ImportJob[Found]:
        """Run ``load_tools`` for the loader on a job thread, in an import worker of its own."""
        timeout = self._import_timeout
        token = object()
        job = self._jobs.submit(
            lambda: self.load_tools(path, module_name, source, content_hash, discover, timeout, token=token),
            watch_file=path,
        )
        with self._lock:
            self._tokens[job] = token
        return job

    def start_loads(self, loads: Sequence[Load], discover: Discover) -> list[ImportJob[Found]]:
        """None ahead of time: the loader starts each import as it comes to it."""
        return []

    def pause(self) -> None:
        """Nothing to release: the workers must keep answering calls while the loader is stopped."""

    def abandon(self, job: ImportJob[Found]) -> None:
        """Drop a job not started yet; stop the worker of one that runs (superseded, or past its deadline)."""
        self._jobs.abandon(job, interrupt=False)
        with self._lock:
            token = self._tokens.get(job)
            worker = None if token is None or job.done else self._importing.pop(token, None)
            if worker is not None:
                worker.abandoned = True
        if worker is not None:
            worker.stop()

    def load_tools(
        self,
        path: Path,
        module_name: str,
        source: bytes,
        content_hash: str,
        discover: Discover,
        timeout: float,
        *,
        token: object | None = None,
    ) -> Found:
        """Import in an import worker; ``discover`` (the loader's own plugins) cannot cross and is unused.
        ``token`` names the import for ``abandon`` (``start_load`` gives one)."""
        worker = self._importers.acquire()
        key = object() if token is None else token
        with self._lock:
            self._importing[key] = worker
        recipe, reply = self._import_in(worker, key, path, module_name, source, content_hash, timeout)
        if not reply.get("ok"):
            raise RemoteLoadError(_error_info(reply.get("error"), path))
        if not recipe or recipe[-1].name != module_name:
            raise RemoteLoadError(
                LoadErrorInfo(
                    "WorkerError", f"the import worker did not report running {module_name}", str(path), None
                )
            )
        tools: Found = [
            ProxyTool(description_from_wire(d), recipe, self.router) for d in reply.get("tools", [])
        ]
        for message in reply.get("components", []):
            component = proxy_component(message, recipe, self.router)
            if component is not None:
                tools.append(component)
        with self._lock:
            prepare = bool(tools) and self._prepared_in_batch < _PREPARE_PER_BATCH
            self._prepared_in_batch += prepare
        if prepare:
            self.router.prepare(recipe)
        return tools

    def _import_in(
        self,
        worker: WorkerProcess,
        key: object,
        path: Path,
        module_name: str,
        source: bytes,
        content_hash: str,
        timeout: float,
    ) -> tuple[tuple[ModuleVersion, ...], LoadReply]:
        """One import request to ``worker`` (``key`` in ``_importing``), handed back whatever happens."""
        base = self._ledger.reserve_serials()
        preload: list[ModuleEntry] = [
            [v.name, v.serial, str(v.path), v.source]
            for v in self._ledger.recipe(module_name, include_self=False)
        ]
        message = LoadRequest(
            op="load",
            path=str(path),
            module=module_name,
            source=source,
            hash=content_hash,
            preload=preload,
            serial_base=base,
        )
        try:
            reply = _relayed(cast(LoadReply, worker.request(message, timeout)))
        except WorkerTimeout:
            line, stack = worker.stack_in(path)
            self._hand_back(worker, key, healthy=False)
            raise ImportTimeout(timeout, line, stack) from None
        except WorkerCrashed as exc:
            self._hand_back(worker, key, healthy=False)
            if worker.abandoned:
                raise ImportAbandoned from None  # superseded: nobody reads this outcome
            how = (
                f"was stopped: the import started more than {self.options.max_processes} processes "
                "(max_processes)"
                if worker.over_limit is not None
                else exc.exit
            )
            raise RemoteLoadError(
                LoadErrorInfo(
                    "WorkerCrashed",
                    f"the import worker process {how} while importing this file; "
                    "a fresh worker replaces it and the last good version keeps serving",
                    str(path),
                    None,
                )
            ) from None
        except WorkerSentTooMuch as exc:
            self._hand_back(worker, key, healthy=False)
            raise RemoteLoadError(
                LoadErrorInfo(
                    "WorkerSentTooMuch",
                    f"the import worker's reply is more than {exc.limit:,} bytes, over what the loader reads "
                    "from a worker (twice max_result_bytes and 1 MiB); the worker was stopped and the last "
                    "good version keeps serving",
                    str(path),
                    None,
                )
            ) from None
        except BaseException:
            self._hand_back(worker, key, healthy=False)
            raise
        self._hand_back(worker, key, healthy=True)
        with self._lock:
            self._absorb(module_name, source, base, reply)
            recipe = self._ledger.recipe(module_name)
        return recipe, reply

    def _hand_back(self, worker: WorkerProcess, key: object, *, healthy: bool) -> None:
        """Return an import's worker to the pool, unless ``abandon`` took it first: it is being stopped,
        and must not serve the next import (which its stop would then end as abandoned)."""
        with self._lock:
            mine = self._importing.pop(key, None) is not None
        self._importers.release(worker, healthy=healthy and mine)

    def _absorb(self, module_name: str, source: bytes, base: int, reply: LoadReply) -> None:
        """Record what the import ran and what it imported (lock held).

        The answer comes from the tool file's own code, so only what the loader
        can check is believed: a version of the file holds the bytes it was sent,
        a version of another module the bytes its file holds on disk, numbered
        from this import's serials (any other is left out); and what it says
        about who imports whom shapes this file's recipe only.
        """
        for entry in reply.get("executed", []):
            version = self._checked(entry, module_name, source, base)
            if version is not None:
                self._ledger.record(version)
        deps = reply.get("deps")
        if isinstance(deps, dict):
            imports = {str(n): [str(d) for d in to] for n, to in deps.items() if isinstance(to, list)}
            self._ledger.record_imports(module_name, imports)
        executions = reply.get("executions")
        self._executions += executions if isinstance(executions, int) and executions > 0 else 0

    def _checked(self, entry: Any, module_name: str, source: bytes, base: int) -> ModuleVersion | None:
        """``entry`` (``[name, serial, path, bytes]``) as a version, if it is what it says it is."""
        if not isinstance(entry, list) or len(entry) != 4:
            return None
        name, serial, path_text, ran = entry
        if not (isinstance(serial, int) and base <= serial < base + SERIAL_BLOCK and isinstance(ran, bytes)):
            return None
        if not isinstance(path_text, str) or os.path.normpath(path_text) != path_text:
            return None
        path = Path(path_text)
        root = self._importer.root_of(path)
        if root is None or not self._importer.is_within_root(path, root):
            return None
        if self._importer.module_name_for(path) != name:
            return None
        held = source if name == module_name else _file_bytes(path, len(ran))
        return ModuleVersion(name, serial, path, ran) if held == ran else None

    # ------------------------------------------------------------ dependency graph
    def dependencies(self, module_name: str) -> frozenset[str]:
        return self._ledger.dependencies(module_name)

    def dependents(self, module_names: Iterable[str]) -> set[str]:
        return self._ledger.dependents(module_names)

    def forget(self, module_names: Iterable[str]) -> None:
        """Drop modules from the ledger (the next imports no longer run them first)."""
        names = list(module_names)
        if names:
            with self._lock:
                self._ledger.forget(names)

    def _stop_idle_strays(self) -> None:
        """Sandbox mode: a file built ahead of its first call leaves no process running meanwhile."""
        while not self._closing.wait(_STRAYS_INTERVAL):
            try:
                self.pool.stop_idle_strays()
            except Exception:  # never let the sweep die
                logger.exception("could not look for processes left in idle workers")

    def close(self) -> None:
        """Stop every worker; proxies still held answer with an error result from then on."""
        self._closing.set()
        if self._watch is not None:
            self._watch.stop()
        self._importers.close()
        self.pool.close()
        if self._forks is not None:
            self._forks.close()
        self._importer.close()
        self._jobs.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


def _file_bytes(path: Path, size: int) -> bytes | None:
    """What the regular file ``path`` holds, if it is ``size`` bytes long (else None, as for no file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == size else None


def _relayed(reply: LoadReply) -> LoadReply:
    """``reply``, unless it says the import's process never answered: then what the worker itself would
    have raised (``WorkerCrashed``, ``WorkerSentTooMuch``), so each ends the same way whichever died."""
    crashed = reply.get("crashed")
    if isinstance(crashed, int):
        how = describe_exit(crashed)
        raise WorkerCrashed(f"the import's process {how}", exit=how)
    too_large = reply.get("too_large")
    if isinstance(too_large, int):
        raise WorkerSentTooMuch(too_large)
    if reply.get("malformed"):
        how = "sent a malformed answer and was stopped"
        raise WorkerCrashed(f"the import's process {how}", exit=how)
    return reply


def _error_info(error: Any, path: Path) -> LoadErrorInfo:
    if not isinstance(error, dict):
        return LoadErrorInfo(
            "WorkerError", "the import worker reported a failure without details", str(path), None
        )
    line = error.get("line")
    try:
        kind = LoadErrorKind(str(error.get("kind")))
    except ValueError:  # a worker of another version, or none said
        kind = LoadErrorKind.EXCEPTION
    return LoadErrorInfo(
        str(error.get("exc_type") or "Error"),
        str(error.get("message") or ""),
        error.get("file") if isinstance(error.get("file"), str) else str(path),
        line if isinstance(line, int) else None,
        str(error.get("traceback") or ""),
        kind,
        str(error.get("source") or ""),
    )
