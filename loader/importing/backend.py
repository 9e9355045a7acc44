"""Where tool files are imported: the seam between the loader and the code it runs.

The loader decides *what* to load and *who owns* each name; a backend does the
importing. ``InProcessBackend`` imports into this interpreter on a worker thread
with a deadline; a process backend (``isolation="process"``) runs the same steps
in supervised worker processes and hands back proxies. The loader talks to
either through ``LoadBackend`` and never to an importer or a thread directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol

from ..types import AgentTool, Component
from .bytecode_cache import BytecodeCache
from .importer import ToolImporter
from .threads import ImportJob, ImportPool

__all__ = ["Discover", "Found", "ImporterNames", "InProcessBackend", "Load", "LoadBackend"]

Found = list[AgentTool | Component]
"""What a module defines: its tools, prompts, resources and resource templates."""

Discover = Callable[[ModuleType, Path], Found]
"""Turns an imported module into what it defines (the loader's pluggy discovery)."""

Load = tuple[Path, str, bytes, str]
"""One file to import: its path, module name, source bytes and their sha256."""


class LoadBackend(Protocol):
    """What the loader needs from whatever imports tool files."""

    enforces_timeouts: bool
    """True when ``start_load`` jobs end by themselves at the import deadline (a killed worker
    process); the loader then waits for their outcome instead of abandoning them."""

    @property
    def executions(self) -> int:
        """How many times tool or helper module code has run (one per save is the target)."""
        ...

    @property
    def bytecode_cache(self) -> BytecodeCache | None:
        """Where this process keeps compiled tool files between starts (None: not kept)."""
        ...

    def root_of(self, path: Path) -> Path | None:
        """The watched folder ``path`` lies in, if any."""
        ...

    def is_within_root(self, path: Path, root: Path, *, no_link: bool = False) -> bool:
        """Whether ``path`` (links resolved) stays inside ``root``; ``no_link``: the caller knows the
        name itself is no link (only the folders above it are checked)."""
        ...

    def module_name_for(self, path: Path) -> str:
        """The private module name a file loads under (never a real module's name)."""
        ...

    def begin_batch(self) -> None:
        """A new reload batch starts: modules loaded in it count as fresh."""
        ...

    def start_load(
        self, path: Path, module_name: str, source: bytes, content_hash: str, discover: Discover
    ) -> ImportJob[Found]:
        """Start importing ``source`` as ``module_name`` and discovering its tools.

        The job's outcome is the tools, or whatever the file's code raised. The
        loader waits on it as long as it likes, and ``abandon``s it at its deadline.
        """
        ...

    def start_loads(self, loads: Sequence[Load], discover: Discover) -> list[ImportJob[Found]]:
        """``start_load`` for several files, run one after another in this order (a one-off scan).

        Returns the jobs, in the same order; a backend may start none (an empty list),
        and the loader then starts each file's import as it comes to it.
        """
        ...

    def abandon(self, job: ImportJob[Found]) -> None:
        """Give up on a job that overran its deadline (stop it if possible; never leak its worker)."""
        ...

    def dependencies(self, module_name: str) -> frozenset[str]:
        """The tool-folder modules ``module_name`` imported last time it loaded."""
        ...

    def dependents(self, module_names: Iterable[str]) -> set[str]:
        """Every loaded module that imported one of ``module_names``, transitively."""
        ...

    def forget(self, module_names: Iterable[str]) -> None:
        """Drop modules so their next import runs their code again."""
        ...

    def pause(self) -> None:
        """The loader stopped: let go of what only loading needs (tools must stay callable).

        The next load starts it again.
        """
        ...

    def close(self) -> None:
        """Release threads, processes and loaded modules."""
        ...

    def serving_problem(self) -> str | None:
        """Why tools cannot be called now (no worker process starts, say), for the probes; None: they can."""
        ...


class ImporterNames:
    """The naming part of a ``LoadBackend``: in both modes, asked of the backend's ``ToolImporter``."""

    _importer: ToolImporter

    def root_of(self, path: Path) -> Path | None:
        return self._importer.root_of(path)

    def is_within_root(self, path: Path, root: Path, *, no_link: bool = False) -> bool:
        return self._importer.is_within_root(path, root, no_link=no_link)

    def module_name_for(self, path: Path) -> str:
        return self._importer.module_name_for(path)


class InProcessBackend(ImporterNames):
    """Imports into this interpreter, on a worker thread with a deadline (the default)."""

    enforces_timeouts = False

    def __init__(self, roots: Sequence[Path], *, bytecode_cache: BytecodeCache | None = None) -> None:
        self._importer = ToolImporter(roots)
        self._importer.bytecode_cache = bytecode_cache
        self._worker = ImportPool()

    @property
    def bytecode_cache(self) -> BytecodeCache | None:
        return self._importer.bytecode_cache

    @property
    def executions(self) -> int:
        return self._importer.executions

    def begin_batch(self) -> None:
        self._importer.begin_batch()

    def start_load(
        self, path: Path, module_name: str, source: bytes, content_hash: str, discover: Discover
    ) -> ImportJob[Found]:
        return self._worker.submit(
            self._job((path, module_name, source, content_hash), discover), watch_file=path
        )

    def start_loads(self, loads: Sequence[Load], discover: Discover) -> list[ImportJob[Found]]:
        return self._worker.submit_chain([(self._job(load, discover), load[0]) for load in loads])

    def _job(self, load: Load, discover: Discover) -> Callable[[], Found]:
        importer = self._importer
        path, module_name, source, content_hash = load

        def job() -> Found:
            module = importer.fresh_module(module_name, content_hash)
            if module is None:
                module = importer.load(path, source, content_hash)
            return discover(module, path)

        return job

    def abandon(self, job: ImportJob[Found]) -> None:
        if job.thread is not None and job.thread.ident is not None and not job.done:
            # Never leave a half-executed module for the next import to find.
            self._importer.abandon(job.thread.ident)
        self._worker.abandon(job)

    def dependencies(self, module_name: str) -> frozenset[str]:
        return self._importer.dependencies(module_name)

    def dependents(self, module_names: Iterable[str]) -> set[str]:
        return self._importer.dependents(module_names)

    def forget(self, module_names: Iterable[str]) -> None:
        self._importer.forget(module_names)

    def pause(self) -> None:
        self._worker.release_idle()

    def serving_problem(self) -> None:
        """Calls run in the loader's own process: nothing here can stop them."""
        return None

    def close(self) -> None:
        self._worker.close()
        self._importer.close()
