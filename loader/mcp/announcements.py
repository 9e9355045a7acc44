"""What one registry commit means to clients: which lists changed, which resources were rewritten.

Derived from the commit's ``RegistryChangeSet`` (the one object every listener
reads); the server announces each kind only when it changed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..registry.changes import ChangeKind, RegistryChangeSet
from ..types import ComponentKind

__all__ = ["Announcement", "PendingAnnouncements", "announcement_of"]


@dataclass(frozen=True, slots=True)
class Announcement:
    """The notifications one or more commits call for."""

    tools: bool = False
    prompts: bool = False
    resources: bool = False
    updated: frozenset[str] = frozenset()
    """URIs of resources whose content may have changed (``notifications/resources/updated``)."""

    def __or__(self, other: Announcement) -> Announcement:
        return Announcement(
            self.tools or other.tools,
            self.prompts or other.prompts,
            self.resources or other.resources,
            self.updated | other.updated,
        )


TOOLS_ONLY = Announcement(tools=True)
"""What a generation nobody described calls for: the tools' list, as before prompts existed."""


def announcement_of(change_set: RegistryChangeSet) -> Announcement:
    """The notifications ``change_set`` calls for."""
    prompts = resources = False
    updated: set[str] = set()
    for change in change_set.components:
        component = change.current
        if component.kind is ComponentKind.PROMPT:
            prompts = True
        elif component.kind is ComponentKind.SKILL_FILE:
            resources = True  # its digest is in its skill's manifest: the skill changed (SEP-2640)
            if change.kind is ChangeKind.REPLACED:
                updated.add(component.key)
        elif component.kind is ComponentKind.RESOURCE and change.kind is ChangeKind.REPLACED:
            updated.add(component.key)
            resources = resources or _listed(change.component) != _listed(change.previous)
        else:
            resources = True
    return Announcement(bool(change_set.changes), prompts, resources, frozenset(updated))


def _listed(component: object) -> tuple[object, ...]:
    """What ``resources/list`` shows of a resource."""
    return tuple(getattr(component, field, None) for field in ("name", "title", "description", "mime_type"))


class PendingAnnouncements:
    """Commits heard from the registry's thread, taken by the server's loop when it announces a generation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, Announcement] = {}

    def add(self, change_set: RegistryChangeSet) -> None:
        with self._lock:
            self._pending[change_set.generation] = announcement_of(change_set)

    def take(self, generation: int | None) -> Announcement:
        """Everything committed up to ``generation`` (all of it for None); tools only if nothing was heard."""
        with self._lock:
            due = [g for g in self._pending if generation is None or g <= generation]
            found = [self._pending.pop(g) for g in sorted(due)]
        if not found:
            return TOOLS_ONLY
        merged = Announcement()
        for announcement in found:
            merged = merged | announcement
        return merged
