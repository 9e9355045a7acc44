"""Committing name ownership to the registry: one swap per batch, only the names that changed.

Tools and the prompts, resources and templates beside them go in the same swap.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..names import normalise_tool_name
from ..registry.changes import RegistryChangeSet
from ..registry.snapshot import RegistryBatch
from ..registry.tool_registry import ToolRegistry
from ..types import AgentTool, Component
from .file_state import FileRecord
from .ownership import NameOwnership, OwnershipChange, is_component_key

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
    components: dict[str, Component],
    withheld: frozenset[str] = frozenset(),
) -> tuple[OwnershipChange, RegistryChangeSet | None]:
    """Settle ownership and swap the registry once for every affected name.

    ``registered`` (normalised name → the tool this loader put in the registry)
    is brought up to date, and ``components`` (component id → the one this
    loader put there) likewise. A tool someone unregistered by hand is not
    unregistered again. A name in ``withheld`` (normalised: quarantined) is served by no tool.
    """
    decided = ownership.settle()
    keys = sorted(decided.names)
    serving = {
        key: None if key in withheld else serving_tool(key, ownership, records)
        for key in keys
        if not is_component_key(key)
    }
    owned = {key: _serving_component(key, ownership, records) for key in keys if is_component_key(key)}
    with registry.batch() as batch:
        _stage_components(batch, owned, components, ownership)
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


def _serving_component(
    key: str, ownership: NameOwnership, records: Mapping[Path, FileRecord]
) -> Component | None:
    owner = ownership.owner(key)
    return None if owner is None else records[owner].components.get(key)


def _stage_components(
    batch: RegistryBatch,
    owned: dict[str, Component | None],
    components: dict[str, Component],
    ownership: NameOwnership,
) -> None:
    """Stage each component whose owner or version changed, and bring ``components`` up to date."""
    for key, new in owned.items():
        old = components.get(key)
        if old is new:
            continue
        if new is not None:
            batch.put_component(new, source=str(ownership.owner(key)))
            components[key] = new
            continue
        if old is not None and batch.get_component(old.kind, old.key) is old:
            batch.drop_component(old.kind, old.key)
        components.pop(key, None)
