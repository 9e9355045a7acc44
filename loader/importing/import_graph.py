"""Which private modules import which: the graph reloads follow both ways.

A changed helper re-runs every module that imports it (``dependents``), and a
batch loads a module's imports before it (``dependencies``). Kept by the
in-process importer (edges seen by its import hook) and by the process
backend's ledger (edges the worker reports).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ImportGraph"]


class ImportGraph:
    """Import edges by module name, with the reverse index kept in step."""

    def __init__(self) -> None:
        self._imports: dict[str, set[str]] = {}
        self._users: dict[str, set[str]] = {}

    def add(self, importer: str, imported: str) -> None:
        """``importer`` imports ``imported``."""
        self._imports.setdefault(importer, set()).add(imported)
        self._users.setdefault(imported, set()).add(importer)

    def replace(self, importer: str, imported: Iterable[str] | None) -> None:
        """Replace what ``importer`` imports; None forgets the module altogether."""
        for old in self._imports.pop(importer, ()):
            users = self._users.get(old)
            if users is not None:
                users.discard(importer)
                if not users:
                    del self._users[old]
        if imported is not None:
            self._imports[importer] = set()
            for name in imported:
                self.add(importer, name)

    def imports_of(self, importer: str) -> frozenset[str] | None:
        """What ``importer`` imported on its last run; None if it is not in the graph."""
        found = self._imports.get(importer)
        return None if found is None else frozenset(found)

    def dependencies(self, importer: str) -> frozenset[str]:
        """What ``importer`` imported on its last run (empty if unknown)."""
        return frozenset(self._imports.get(importer, ()))

    def dependents(self, names: Iterable[str]) -> set[str]:
        """Every module that imports one of ``names``, directly or transitively."""
        result: set[str] = set()
        stack = list(names)
        while stack:
            for user in self._users.get(stack.pop(), ()):
                if user not in result:
                    result.add(user)
                    stack.append(user)
        return result

    def clear(self) -> None:
        self._imports.clear()
        self._users.clear()
