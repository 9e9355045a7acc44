"""Committing name ownership to the registry: one swap per batch, only the names that changed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..names import normalise_tool_name
from ..registry.changes import RegistryChangeSet
from ..registry.tool_registry import ToolRegistry
from ..types import AgentTool
from .file_state import FileRecord
from .ownership import NameOwnership, OwnershipChange

__all__ = ["commit_owners", "serving_tool"]


def serving_tool(key: str, ownership: NameOwnership, records: Mapping[Path, FileRecord]) -> AgentTool | None:
    """The tool the owner of ``key`` defines under that (normalised) name."""
    owner = ownership.owner(key)
    if owner is None:
        return None
    for name, tool in records[owner].discovered.items():
        if normalise_tool_name(name) == key:
            return tool
    return None


def commit_owners(
    registry: ToolRegistry,
    ownership: NameOwnership,
    records: Mapping[Path, FileRecord],
    registered: dict[str, AgentTool],
    withheld: frozenset[str] = frozenset(),
) -> tuple[OwnershipChange, RegistryChangeSet | None]:
    """Settle ownership and swap the registry once for every affected name.

    ``registered`` (normalised name → the tool this loader put in the registry)
    is brought up to date. A tool someone unregistered by hand is not
    unregistered again. A name in ``withheld`` (normalised: quarantined) is served by no tool.
    """
    decided = ownership.settle()
    serving = {
        key: None if key in withheld else serving_tool(key, ownership, records)
        for key in sorted(decided.names)
    }
    with registry.batch() as batch:
        for key, new_tool in serving.items():
            old_tool = registered.get(key)
            if old_tool is new_tool:
                continue
            if old_tool is not None and (new_tool is None or old_tool.tool_name != new_tool.tool_name):
                if batch.get(old_tool.tool_name) is old_tool:
                    batch.unregister(old_tool.tool_name)
            if new_tool is not None:
                batch.replace(new_tool, source=str(ownership.owner(key)))
    for key, tool in serving.items():
        if tool is None:
            registered.pop(key, None)
        else:
            registered[key] = tool
    return decided, batch.committed
