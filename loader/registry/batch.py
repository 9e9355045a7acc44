"""Staging a registry commit: the next snapshot's maps, built change by change under the write lock.

A ``RegistryBatch`` starts from the current snapshot's persistent maps and
applies each ``register``, ``replace`` or ``unregister`` to them, so every call
is checked against what the batch has staged so far. When the ``with`` block
ends, the registry asks it for the net ``RegistryChange`` s and adopts its maps
as the next ``RegistrySnapshot``.
"""

from __future__ import annotations

from ..errors import DuplicateToolError, ToolNotFoundError
from ..names import check_tool_name, normalise_tool_name
from ..types import AgentTool
from .changes import ChangeKind, RegistryChange, RegistryChangeSet
from .snapshot import RegistryEntry, RegistrySnapshot

__all__ = ["BATCH_OVER", "RegistryBatch"]

BATCH_OVER = "this registry batch is closed; open a new one with registry.batch()"
"""Why a batch refuses changes once its ``with`` block has ended."""


def _tool_name(tool: AgentTool) -> str:
    if not isinstance(tool, AgentTool):
        raise TypeError(f"the registry holds AgentTool objects, got {type(tool).__name__}")
    return check_tool_name(tool.tool_name)


def _differs(old: RegistryEntry, new: RegistryEntry) -> bool:
    return old.tool is not new.tool or old.source != new.source


class RegistryBatch:
    """Changes staged against the pending state of an open ``ToolRegistry.batch()``.

    Each call checks against what the batch has staged so far, so a duplicate
    or a missing name fails at the call that causes it.
    """

    def __init__(self, base: RegistrySnapshot) -> None:
        self._base = base
        self._entries = base._entries
        self._aliases = base._aliases
        self._holders = base._holders
        self._touched: dict[str, None] = {}
        self._refusal: str | None = None
        self._committed: RegistryChangeSet | None = None

    @property
    def committed(self) -> RegistryChangeSet | None:
        """What this batch committed, once its ``with`` block has ended (None if it changed nothing).

        Listeners of the loader's own (pluggy hooks, events) can be fed from this
        one object instead of deriving the change a second time.
        """
        return self._committed

    def _check_open(self) -> None:
        if self._refusal is not None:
            raise RuntimeError(self._refusal)

    def _find(self, name: str) -> RegistryEntry | None:
        entry = self._entries.get(name)
        if entry is None:
            exact = self._aliases.get(normalise_tool_name(name))
            entry = None if exact is None else self._entries[exact]
        return entry

    def _put(self, entry: RegistryEntry) -> None:
        self._entries = self._entries.set(entry.name, entry)
        self._aliases = self._aliases.set(normalise_tool_name(entry.name), entry.name)
        key = id(entry.tool)
        self._holders = self._holders.set(key, self._holders.get(key, 0) + 1)
        self._touched[entry.name] = None

    def _drop(self, entry: RegistryEntry) -> None:
        self._entries = self._entries.delete(entry.name)
        self._aliases = self._aliases.delete(normalise_tool_name(entry.name))
        key = id(entry.tool)
        held = self._holders[key] - 1
        self._holders = self._holders.set(key, held) if held else self._holders.delete(key)
        self._touched[entry.name] = None

    def holds(self, tool: AgentTool) -> bool:
        """Whether ``tool`` (this very object) is staged under any name."""
        return id(tool) in self._holders

    def register(self, tool: AgentTool, *, source: str | None = None) -> None:
        """Stage adding ``tool``.

        Raises:
            DuplicateToolError: The name (or its '-'/'_' variant) is taken.
            InvalidToolNameError: The tool's name is outside ``^[A-Za-z0-9_-]{1,64}$``.
        """
        self._check_open()
        name = _tool_name(tool)
        existing = self._find(name)
        if existing is not None:
            raise DuplicateToolError(name, existing_name=existing.name, existing_source=existing.source)
        self._put(RegistryEntry(name, tool, source))

    def replace(self, tool: AgentTool, *, source: str | None = None) -> AgentTool | None:
        """Stage adding or swapping ``tool``; returns the tool it displaces, if any."""
        self._check_open()
        name = _tool_name(tool)
        existing = self._find(name)
        if existing is not None:
            self._drop(existing)
        self._put(RegistryEntry(name, tool, source))
        return None if existing is None else existing.tool

    def unregister(self, name: str) -> AgentTool:
        """Stage removing the named tool and return it.

        Raises:
            ToolNotFoundError: No tool of that name is staged.
        """
        self._check_open()
        existing = self._find(name)
        if existing is None:
            raise ToolNotFoundError(name, tuple(sorted(self._entries)))
        self._drop(existing)
        return existing.tool

    def get(self, name: str) -> AgentTool | None:
        """The staged tool of that name (exact, then '-'/'_' normalised)."""
        entry = self._find(name)
        return None if entry is None else entry.tool

    def names(self) -> tuple[str, ...]:
        """The staged names, sorted."""
        return tuple(sorted(self._entries))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def _changes(self) -> tuple[RegistryChange, ...]:
        """The net effect on each touched name, in the order names were first touched."""
        base = self._base._entries
        changes: list[RegistryChange] = []
        for name in self._touched:
            old, new = base.get(name), self._entries.get(name)
            if old is None and new is not None:
                changes.append(RegistryChange(ChangeKind.ADDED, name, new.tool, None, new.source))
            elif old is not None and new is None:
                changes.append(RegistryChange(ChangeKind.REMOVED, name, None, old.tool, old.source))
            elif old is not None and new is not None and _differs(old, new):
                changes.append(RegistryChange(ChangeKind.REPLACED, name, new.tool, old.tool, new.source))
        return tuple(changes)
