"""The loader's record of what the import workers ran: module versions and who imported whom.

Every module an import worker executes successfully is recorded here with the
exact bytes it ran and a serial number. A tool's *recipe* is the list of module
versions it was loaded against (its helpers first), so any worker, including a
fresh one after a crash, can rebuild exactly that version of the tool, even
after the file on disk has changed or broken since. A recipe is walked on the
import graph the file's own last import reported (``record_imports``): what
another file's import says about who imports whom never adds a module to it.

Several import workers may run at once (a hanging import holds only its own),
so each import draws a block of serials of its own (``reserve_serials``) and
the ledger takes a lock: imports record from their job threads, calls read
from the callers' threads.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..importing.import_graph import ImportGraph

__all__ = ["ModuleLedger", "ModuleVersion"]

SERIAL_BLOCK: Final = 1 << 20
"""Serials one import may number its executions with: far more modules than one import runs."""
_CHANGES_KEPT: Final = 4096
"""Recent changes of the current versions kept, so a call learns what changed since its worker's last."""


@dataclass(frozen=True, slots=True)
class ModuleVersion:
    """One successful execution of a module in an import worker."""

    name: str
    serial: int
    path: Path
    source: bytes


class ModuleLedger:
    """Current module versions and the dependency graph, as the import workers reported them."""

    def __init__(self) -> None:
        self._current: dict[str, ModuleVersion] = {}
        self._graph = ImportGraph()
        """Who imports whom, as the last import that ran each module reported (dependents, ordering)."""
        self._imports_of: dict[str, dict[str, frozenset[str]]] = {}
        """Per file module, the import graph its own last import reported (its recipe)."""
        self._lock = threading.RLock()
        self._next_serial = 1
        self._changes: deque[tuple[int, str]] = deque(maxlen=_CHANGES_KEPT)
        self.epoch = 0
        """Bumped whenever a current version changes (a call compares it with its worker's)."""

    def reserve_serials(self) -> int:
        """The first of ``SERIAL_BLOCK`` serials for one import's executions, unique across imports."""
        with self._lock:
            base = self._next_serial
            self._next_serial += SERIAL_BLOCK
            return base

    def record(self, version: ModuleVersion) -> None:
        with self._lock:
            self._current[version.name] = version
            self._note(version.name)

    def _note(self, name: str) -> None:
        self.epoch += 1
        self._changes.append((self.epoch, name))

    def current(self, name: str) -> ModuleVersion | None:
        with self._lock:
            return self._current.get(name)

    def record_imports(self, owner: str, imports: Mapping[str, Iterable[str]]) -> None:
        """What each module imported in one import of the file module ``owner`` (nothing: a module
        leaves the graph); ``owner``'s recipe is walked on this alone until its next import."""
        graph = {name: frozenset(imported) for name, imported in imports.items()}
        with self._lock:
            for name, imported in graph.items():
                self._graph.replace(name, imported or None)
            self._imports_of[owner] = graph

    def dependencies(self, name: str) -> frozenset[str]:
        with self._lock:
            return self._graph.dependencies(name)

    def dependents(self, names: Iterable[str]) -> set[str]:
        """Every module that imports one of ``names``, directly or transitively."""
        with self._lock:
            return self._graph.dependents(names)

    def recipe(self, name: str, *, include_self: bool = True) -> tuple[ModuleVersion, ...]:
        """The current versions the file module ``name`` needs, as its own last import reported them,
        dependencies before dependents (``name`` last)."""
        with self._lock:
            graph = self._imports_of.get(name, {})
            return self._ordered([name], set() if include_self else {name}, lambda m: graph.get(m, ()))

    def _ordered(
        self, names: Iterable[str], skip: set[str], imports: Callable[[str], Iterable[str]]
    ) -> tuple[ModuleVersion, ...]:
        """The current versions of ``names`` and what they import, dependencies first (lock held)."""
        ordered: list[ModuleVersion] = []
        seen: set[str] = set()

        def visit(module: str, depth: int) -> None:
            if module in seen or depth > 100:
                return
            seen.add(module)
            for dep in sorted(imports(module)):
                visit(dep, depth + 1)
            version = self._current.get(module)
            if version is not None and module not in skip:
                ordered.append(version)

        for name in names:
            visit(name, 0)
        return tuple(ordered)

    def updates(
        self, held: Mapping[str, int], since: int
    ) -> tuple[tuple[ModuleVersion, ...], tuple[str, ...]]:
        """What a worker holding ``held`` (name → serial) must change to match the current versions
        after epoch ``since``: the versions to run, dependencies first, and the modules to drop.

        A worker that holds an older version of a module the loader has since
        reloaded (or forgotten) would hand it to a tool importing it at call
        time; a call brings it up to date first, as in-process ``sys.modules`` is.
        """
        with self._lock:
            if since >= self.epoch:
                return (), ()
            if self._changes and self._changes[0][0] <= since + 1:
                names = {name for epoch, name in self._changes if epoch > since and name in held}
            else:  # older than the changes kept: compare everything held
                names = set(held)
            stale = {n for n in names if (v := self._current.get(n)) is not None and v.serial != held[n]}
            dropped = tuple(sorted(n for n in names if n not in self._current))
            ordered = self._ordered(sorted(stale), set(), self._graph.dependencies)
            run = tuple(v for v in ordered if v.name in stale)
            return run, dropped

    def is_current(self, versions: Iterable[ModuleVersion]) -> bool:
        """Whether every one of ``versions`` is still the current version of its module."""
        with self._lock:
            return all(self._current.get(v.name) is v for v in versions)

    def forget(self, names: Iterable[str]) -> None:
        with self._lock:
            for name in names:
                if self._current.pop(name, None) is not None:
                    self._note(name)
                self._graph.replace(name, None)
                self._imports_of.pop(name, None)
