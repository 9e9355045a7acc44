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
        self._deps: dict[str, frozenset[str]] = {}
        self._rdeps: dict[str, set[str]] = {}
        self.next_serial = 1

    def record(self, version: ModuleVersion) -> None:
        self._current[version.name] = version
        self.next_serial = max(self.next_serial, version.serial + 1)

    def current(self, name: str) -> ModuleVersion | None:
        return self._current.get(name)

    def set_dependencies(self, name: str, imported: Iterable[str]) -> None:
        """Replace what ``name`` imports, keeping the reverse index in step."""
        for old in self._deps.pop(name, ()):
            users = self._rdeps.get(old)
            if users is not None:
                users.discard(name)
                if not users:
                    del self._rdeps[old]
        new = frozenset(imported)
        if new:
            self._deps[name] = new
            for target in new:
                self._rdeps.setdefault(target, set()).add(name)

    def dependencies(self, name: str) -> frozenset[str]:
        return self._deps.get(name, frozenset())

    def dependents(self, names: Iterable[str]) -> set[str]:
        """Every module that imports one of ``names``, directly or transitively."""
        result: set[str] = set()
        stack = list(names)
        while stack:
            for user in self._rdeps.get(stack.pop(), ()):
                if user not in result:
                    result.add(user)
                    stack.append(user)
        return result

    def recipe(self, name: str, *, include_self: bool = True) -> tuple[ModuleVersion, ...]:
        """The current versions ``name`` needs, dependencies before dependents (``name`` last)."""
        ordered: list[ModuleVersion] = []
        seen: set[str] = set()

        def visit(module: str, depth: int) -> None:
            if module in seen or depth > 100:
                return
            seen.add(module)
            for dep in sorted(self._deps.get(module, ())):
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
