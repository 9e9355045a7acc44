"""Classifying what a new version of a tool's spec means for the callers of the old one.

A model or an MCP client that learned the old spec keeps sending calls shaped
by it, so for the input schema the question is "does the new schema still
accept every call the old one did?" (no: breaking; it accepts more: additive).
For the output schema the question is reversed: "does every new result still
fit what consumers of the old one expect?". Words only (descriptions, titles,
examples, defaults) are cosmetic.

This module is the entry point: one tool (``compare_specs``), a set of tools
(``compare_tool_sets``) and one line for either (``describe_change``). The
kinds and one tool's verdict are in ``loader.spec_diff.kinds``; the structural
walk of two schemas is ``loader.spec_diff.schemas``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..types import ToolSpec
from .kinds import SEVERITY, SpecChange, SpecChangeKind, SpecNotes
from .schemas import Direction, SchemaComparer

__all__ = [
    "ToolSetChange",
    "compare_specs",
    "compare_tool_sets",
    "describe_change",
]


@dataclass(frozen=True, slots=True)
class ToolSetChange:
    """The classification of a change to a whole set of tools (a folder, a server).

    ``changed`` holds only tools present on both sides whose spec differs.
    """

    kind: SpecChangeKind
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: Mapping[str, SpecChange] = field(default_factory=lambda: MappingProxyType({}), hash=False)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Every difference as one line naming its tool, most severe first."""
        lines: list[tuple[int, str]] = [(3, f"tool '{n}' removed") for n in self.removed]
        lines += [(2, f"tool '{n}' added") for n in self.added]
        for name, change in self.changed.items():
            for reason, kind in zip(change.reasons, change.reason_kinds, strict=False):
                lines.append((SEVERITY[kind], f"{name}: {reason}"))
        return tuple(text for _, text in sorted(lines, key=lambda item: -item[0]))


def compare_specs(old: ToolSpec | Mapping[str, Any], new: ToolSpec | Mapping[str, Any]) -> SpecChange:
    """Classify the change from ``old`` to ``new`` (two versions of one tool)."""
    notes = SpecNotes()
    if old.get("description") != new.get("description"):
        notes.add(SpecChangeKind.COSMETIC, "description changed")
    old_in, new_in = _schema_of(old, "inputSchema"), _schema_of(new, "inputSchema")
    SchemaComparer(old_in or {}, new_in or {}, notes, Direction.INPUT).compare(old_in or {}, new_in or {}, "")
    old_out, new_out = _schema_of(old, "outputSchema"), _schema_of(new, "outputSchema")
    if old_out is not None and new_out is None:
        notes.add(SpecChangeKind.BREAKING, "output schema removed")
    elif old_out is None and new_out is not None:
        notes.add(SpecChangeKind.ADDITIVE, "output schema added")
    elif old_out is not None and new_out is not None:
        SchemaComparer(old_out, new_out, notes, Direction.OUTPUT).compare(old_out, new_out, "")
    return notes.change()


def compare_tool_sets(old: Mapping[str, ToolSpec], new: Mapping[str, ToolSpec]) -> ToolSetChange:
    """Classify a change to a set of tools: removed tools break, added ones are additive."""
    removed = tuple(sorted(set(old) - set(new)))
    added = tuple(sorted(set(new) - set(old)))
    changed = {}
    for name in sorted(set(old) & set(new)):
        change = compare_specs(old[name], new[name])
        if change.kind is not SpecChangeKind.NONE:
            changed[name] = change
    kind = SpecChangeKind.NONE
    if changed:
        kind = max((c.kind for c in changed.values()), key=SEVERITY.__getitem__)
    if added and SEVERITY[kind] < SEVERITY[SpecChangeKind.ADDITIVE]:
        kind = SpecChangeKind.ADDITIVE
    if removed:
        kind = SpecChangeKind.BREAKING
    return ToolSetChange(kind, added, removed, MappingProxyType(changed))


def describe_change(change: SpecChange | ToolSetChange, *, limit: int = 3) -> str:
    """One line for a console or a log: the kind, then the most severe reasons.

    ``BREAKING: parameter 'a' removed; required parameter 'c' added`` or
    ``additive: optional parameter 'd' added``; ``unchanged`` when nothing differs.
    """
    if change.kind is SpecChangeKind.NONE:
        return "unchanged"
    reasons = change.reasons
    shown = "; ".join(reasons[:limit])
    if len(reasons) > limit:
        shown += f" (+{len(reasons) - limit} more)"
    label = change.kind.value.upper() if change.kind is SpecChangeKind.BREAKING else change.kind.value
    return f"{label}: {shown}" if shown else label


def _schema_of(spec: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The JSON Schema under ``spec[key]``, unwrapping Bedrock's ``{"json": ...}``."""
    value = spec.get(key)
    if not isinstance(value, Mapping):
        return None
    inner = value.get("json", value)
    return dict(inner) if isinstance(inner, Mapping) else None
