"""The registry: named tools, immutable snapshots readers share, one change set per commit."""

from __future__ import annotations

from .changes import ChangeKind, RegistryChange, RegistryChangeSet
from .snapshot import RegistrySnapshot
from .tool_registry import ToolRegistry

__all__ = ["ChangeKind", "RegistryChange", "RegistryChangeSet", "RegistrySnapshot", "ToolRegistry"]
