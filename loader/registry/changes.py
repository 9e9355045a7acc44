"""What one registry commit changed: the change set every listener is fed from.

A commit (one ``register``, or a whole ``batch``) produces one
``RegistryChangeSet``: one ``RegistryChange`` per name whose tool or source
differs, tagged with the generation the commit produced. The registry derives
it once; hooks, consoles and the MCP server all read that one object.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..types import AgentTool, Component

__all__ = ["ChangeKind", "ComponentChange", "RegistryChange", "RegistryChangeSet"]


class ChangeKind(StrEnum):
    """What happened to a name in one commit."""

    ADDED = "added"
    REMOVED = "removed"
    REPLACED = "replaced"


@dataclass(frozen=True, slots=True)
class RegistryChange:
    """One name's change in a commit."""

    kind: ChangeKind
    name: str
    tool: AgentTool | None
    previous: AgentTool | None
    source: str | None


@dataclass(frozen=True, slots=True)
class ComponentChange:
    """One prompt's, resource's or resource template's change in a commit."""

    kind: ChangeKind
    component: Component | None
    previous: Component | None
    source: str | None

    @property
    def current(self) -> Component:
        """The new component, else the old one (what the change is about)."""
        found = self.component or self.previous
        assert found is not None
        return found


@dataclass(frozen=True, slots=True)
class RegistryChangeSet:
    """Everything one commit changed, tagged with the generation it produced."""

    generation: int
    changes: tuple[RegistryChange, ...]
    components: tuple[ComponentChange, ...] = ()
