"""The loader's record of what the import worker holds: module versions and who imported whom.

Every module the import worker executes successfully is recorded here with the
exact bytes it ran and a serial number. A tool's *recipe* is the list of module
versions it was loaded against (its helpers first), so any worker, including a
fresh one after a crash, can rebuild exactly that version of the tool, even
after the file on disk has changed or broken since.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..importing.import_graph import ImportGraph

__all__ = ["ModuleLedger", "ModuleVersion"]


@dataclass(frozen=True, slots=True)
class ModuleVersion:
    """One successful execution of a module in the import worker."""

    name: str
    serial: int
    path: Path
    source: bytes


class ModuleLedger:
    """Current module versions and the dependency graph, as the import worker reported them.

    Touched only on the loader's scheduler thread (the backend's callers), like
    the in-process importer.
    """

    def __init__(self) -> None:
        self._current: dict[str, ModuleVersion] = {}
        self._graph = ImportGraph()
        self.next_serial = 1

    def record(self, version: ModuleVersion) -> None:
        self._current[version.name] = version
        self.next_serial = max(self.next_serial, version.serial + 1)

    def current(self, name: str) -> ModuleVersion | None:
        return self._current.get(name)

    def set_dependencies(self, name: str, imported: Iterable[str]) -> None:
        """Replace what ``name`` imports (nothing: it leaves the graph)."""
        new = frozenset(imported)
        self._graph.replace(name, new or None)

    def dependencies(self, name: str) -> frozenset[str]:
        return self._graph.dependencies(name)

    def dependents(self, names: Iterable[str]) -> set[str]:
        """Every module that imports one of ``names``, directly or transitively."""
        return self._graph.dependents(names)

    def recipe(self, name: str, *, include_self: bool = True) -> tuple[ModuleVersion, ...]:
        """The current versions ``name`` needs, dependencies before dependents (``name`` last)."""
        ordered: list[ModuleVersion] = []
        seen: set[str] = set()

        def visit(module: str, depth: int) -> None:
            if module in seen or depth > 100:
                return
            seen.add(module)
            for dep in sorted(self._graph.dependencies(module)):
                visit(dep, depth + 1)
            version = self._current.get(module)
            if version is not None and (include_self or module != name):
                ordered.append(version)

        visit(name, 0)
        return tuple(ordered)

    def forget(self, names: Iterable[str]) -> None:
        for name in names:
            self._current.pop(name, None)
            self.set_dependencies(name, ())
