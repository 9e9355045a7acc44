"""``ProcessBackend``: the loader's ``LoadBackend`` when ``isolation="process"``.

Imports run in one import worker (a ``ToolImporter`` like the in-process one,
with the built-in and entry-point discovery plugins); calls run in other
workers, one call per worker at a time, so a stuck or crashing import never
holds up a call and a crashing call harms only itself. The loader's process
keeps the registry, the specs (in ``ProxyTool``s) and the module ledger that
lets any worker rebuild any loaded version.

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
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..importing.backend import Discover, Load
from ..importing.importer import ToolImporter
from ..importing.threads import ImportJob, ImportPool, ImportTimeout
from ..status import LoadErrorInfo, LoadErrorKind, RemoteLoadError
from ..types import AgentTool
from .calls import CallRouter
from .errors import WorkerCrashed, WorkerError, WorkerStartError, WorkerTimeout
from .ledger import ModuleLedger, ModuleVersion
from .options import WorkerOptions, worker_environment
from .pool import WorkerPool
from .process import WorkerProcess
from .protocol import decode_value, encode_value
from .proxy import ProxyTool, ToolDescription

__all__ = ["ProcessBackend"]

logger = logging.getLogger(__name__)

_backend_counter = itertools.count(1)
_QUICK_REQUEST = 30.0
"""Seconds allowed for bookkeeping requests (begin a batch, forget modules)."""
_PREPARE_PER_BATCH = 8
"""New versions built ahead of their first call per batch: a save's few files, not a whole scan."""


def working_directory(roots: Sequence[Path]) -> Path:
    """The first tool folder's parent (or its nearest existing ancestor): where workers run."""
    candidate = roots[0].parent
    while not candidate.is_dir() and candidate != candidate.parent:
        candidate = candidate.parent
    return candidate


class ProcessBackend:
    """Imports and calls in supervised worker processes; hands the loader ``ProxyTool``s."""

    def __init__(
        self,
        roots: Sequence[Path],
        options: WorkerOptions | None = None,
        *,
        builtin_plugins: bool = True,
        entry_point_plugins: bool = True,
        import_timeout: float = 10.0,
    ) -> None:
        if os.name != "posix":
            raise WorkerStartError("isolation='process' needs a POSIX system (Linux or macOS)")
        self.options = options or WorkerOptions()
        tag = f"p{next(_backend_counter)}"
        # Names only: this importer never executes tool code in the loader's process.
        self._names = ToolImporter(roots, tag=tag)
        settings: dict[str, Any] = {
            "tag": tag,
            "roots": [str(r) for r in roots],
            "builtin_plugins": builtin_plugins,
            "entry_point_plugins": entry_point_plugins,
            "max_memory_mb": self.options.max_memory_mb,
        }
        env = worker_environment(self.options.worker_env)
        cwd = working_directory(roots)
        self.pool = WorkerPool(
            lambda: WorkerProcess(settings, env, cwd, self.options.command_prefix),
            max_in_use=self.options.call_workers,
            spares=self.options.spare_workers,
            start_timeout=self.options.start_timeout,
        )
        self.router = CallRouter(self.pool, self.options.call_timeout)
        self._ledger = ModuleLedger()
        self._importer: WorkerProcess | None = None
        self._executions = 0
        self._prepared_in_batch = 0
        self._lock = threading.Lock()
        self._import_timeout = import_timeout
        # One import worker serves imports one at a time; a job thread waits on it for the loader.
        self._jobs = ImportPool("tool-loader-process-import", max_threads=1)
        self.pool.warm()

    # ------------------------------------------------------------ names (local)
    @property
    def executions(self) -> int:
        """Module executions in the import worker (replays that rebuild a version elsewhere do not count)."""
        return self._executions

    @property
    def bytecode_cache(self) -> None:
        """Not kept: the worker processes compile what they import."""
        return None

    def root_of(self, path: Path) -> Path | None:
        return self._names.root_of(path)

    def is_within_root(self, path: Path, root: Path, *, no_link: bool = False) -> bool:
        return self._names.is_within_root(path, root, no_link=no_link)

    def module_name_for(self, path: Path) -> str:
        return self._names.module_name_for(path)

    # ------------------------------------------------------------ import worker
    def _import_worker(self) -> WorkerProcess:
        worker = self._importer
        if worker is not None and worker.alive():
            return worker
        if worker is not None:
            self._drop_import_worker()
        worker = self.pool.acquire(None, role_limit=False)
        self._importer = worker
        return worker

    def _drop_import_worker(self) -> None:
        worker, self._importer = self._importer, None
        if worker is not None:
            worker.kill()
            self.pool.warm()

    def _quick(self, message: dict[str, Any]) -> None:
        """A bookkeeping request to the import worker; a worker that fails it is replaced."""
        worker = self._importer
        if worker is None:
            return  # a fresh import worker starts with nothing to begin or forget
        try:
            worker.request(message, _QUICK_REQUEST)
        except WorkerError:
            logger.warning(
                "pid=<%s> | import worker failed a %s request; replacing it", worker.pid, message["op"]
            )
            self._drop_import_worker()

    def begin_batch(self) -> None:
        with self._lock:
            self._prepared_in_batch = 0
            self._quick({"op": "begin"})

    enforces_timeouts = True
    """A stuck import's worker is killed at the deadline, so a job always ends by itself."""

    def start_load(
        self, path: Path, module_name: str, source: bytes, content_hash: str, discover: Discover
    ) -> ImportJob[list[AgentTool]]:
        """Run ``load_tools`` for the loader on a job thread (the import worker is one at a time)."""
        timeout = self._import_timeout
        return self._jobs.submit(
            lambda: self.load_tools(path, module_name, source, content_hash, discover, timeout),
            watch_file=path,
        )

    def start_loads(self, loads: Sequence[Load], discover: Discover) -> list[ImportJob[list[AgentTool]]]:
        """None ahead of time: the import worker takes one request at a time, each started by the loader."""
        return []

    def pause(self) -> None:
        """Nothing to release: the workers must keep answering calls while the loader is stopped."""

    def abandon(self, job: ImportJob[list[AgentTool]]) -> None:
        """Nothing to do: ``load_tools`` kills a stuck import worker at the deadline itself."""

    def load_tools(
        self,
        path: Path,
        module_name: str,
        source: bytes,
        content_hash: str,
        discover: Discover,
        timeout: float,
    ) -> list[AgentTool]:
        """Import in the import worker; ``discover`` (the loader's own plugins) cannot cross and is unused."""
        with self._lock:
            worker = self._import_worker()
            known = worker.known
            preload = [
                [v.name, v.serial, str(v.path), encode_value(v.source)]
                for v in self._ledger.recipe(module_name, include_self=False)
                if known.get(v.name) != v.serial
            ]
            message = {
                "op": "load",
                "path": str(path),
                "module": module_name,
                "source": encode_value(source),
                "hash": content_hash,
                "preload": preload,
                "serial_base": self._ledger.next_serial,
            }
            try:
                reply = worker.request(message, timeout)
            except WorkerTimeout:
                line, stack = worker.stack_in(path)
                self._drop_import_worker()
                raise ImportTimeout(timeout, line, stack) from None
            except WorkerCrashed as exc:
                self._drop_import_worker()
                raise RemoteLoadError(
                    LoadErrorInfo(
                        "WorkerCrashed",
                        f"the import worker process {exc.exit} while importing this file; "
                        "a fresh worker replaces it and the last good version keeps serving",
                        str(path),
                        None,
                    )
                ) from None
            for item in preload:
                known[item[0]] = item[1]
            self._absorb(worker, reply)
            error = reply.get("error")
            if not reply.get("ok"):
                raise RemoteLoadError(_error_info(error, path))
            recipe = self._ledger.recipe(module_name)
            if not recipe or recipe[-1].name != module_name:
                raise RemoteLoadError(
                    LoadErrorInfo(
                        "WorkerError",
                        f"the import worker did not report running {module_name}",
                        str(path),
                        None,
                    )
                )
            tools: list[AgentTool] = [
                ProxyTool(ToolDescription.from_message(d), recipe, self.router)
                for d in reply.get("tools", [])
            ]
            if tools and self._prepared_in_batch < _PREPARE_PER_BATCH:
                self._prepared_in_batch += 1
                self.router.prepare(recipe)
            return tools

    def _absorb(self, worker: WorkerProcess, reply: dict[str, Any]) -> None:
        """Record what the import worker ran and who imports whom now."""
        for name, serial, path_text, source in reply.get("executed", []):
            self._ledger.record(ModuleVersion(str(name), int(serial), Path(path_text), decode_value(source)))
            worker.known[str(name)] = int(serial)
        for name, deps in (reply.get("deps") or {}).items():
            self._ledger.set_dependencies(str(name), (str(d) for d in deps))
        self._executions += int(reply.get("executions", 0))

    # ------------------------------------------------------------ dependency graph
    def dependencies(self, module_name: str) -> frozenset[str]:
        return self._ledger.dependencies(module_name)

    def dependents(self, module_names: Iterable[str]) -> set[str]:
        return self._ledger.dependents(module_names)

    def forget(self, module_names: Iterable[str]) -> None:
        names = list(module_names)
        if not names:
            return
        with self._lock:
            self._ledger.forget(names)
            if self._importer is not None:
                for name in names:
                    self._importer.known.pop(name, None)
            self._quick({"op": "forget", "names": names})

    def close(self) -> None:
        """Stop every worker; proxies still held answer with an error result from then on."""
        with self._lock:
            worker, self._importer = self._importer, None
            if worker is not None:
                worker.close()
            self.pool.close()
            self._names.close()
        self._jobs.close()


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
    )
