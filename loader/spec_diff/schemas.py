"""Comparing two versions of one JSON Schema structurally, noting each difference with its kind.

The question depends on the direction. For an input schema: does the new one
still accept every call the old one did (narrowed: breaking; widened:
additive)? For an output schema it is reversed: does every new result still
fit what consumers of the old one expect? ``SchemaComparer`` walks both sides
together (types, unions, enums, bounds, objects, arrays), each resolved against
its own root by ``loader.spec_diff.shapes``, and notes reasons in ``SpecNotes``.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from .kinds import SpecChangeKind, SpecNotes
from .shapes import (
    HANDLED_KEYS,
    LOWER_BOUNDS,
    RESTRICTIONS,
    UPPER_BOUNDS,
    accepts,
    allowed_values,
    branches,
    resolve,
    shape,
    type_name,
)

__all__ = ["Direction", "SchemaComparer"]


_BOUND_SIDES: Final = (
    (LOWER_BOUNDS, operator.gt, "raised", "lowered"),
    (UPPER_BOUNDS, operator.lt, "lowered", "raised"),
)
"""Per side of a range: its keywords, when a new value is tighter than the old, and the words for each way."""


class Direction(Enum):
    """Which way a schema's values flow, and so which way a change hurts."""

    INPUT = "input"  # the new schema must accept at least what the old one did
    OUTPUT = "output"  # the new schema must produce at most what the old one did


def _label(where: str, direction: Direction) -> str:
    if direction is Direction.OUTPUT:
        return f"output '{where}'" if where else "output"
    return f"parameter '{where}'" if where else "input"


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _show(values: Any) -> str:
    return ", ".join(json.dumps(v, sort_keys=True) for v in values)


def _describe(branch: Mapping[str, Any]) -> str:
    """One alternative of a union, as a person would name it: its title, its values, else its type."""
    title = branch.get("title")
    if isinstance(title, str) and title:
        return title
    values = allowed_values(branch)
    if values is not None:
        return _show(values)
    return type_name(branch)


@dataclass(frozen=True, slots=True)
class _Properties:
    """One side's object members: each property's schema, and which of them are required."""

    schemas: Mapping[str, Any]
    required: frozenset[str]

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> _Properties:
        return cls(schema.get("properties") or {}, frozenset(schema.get("required") or ()))


class SchemaComparer:
    """One structural comparison of two schemas, each resolved against its own root."""

    def __init__(
        self, old_root: Mapping[str, Any], new_root: Mapping[str, Any], notes: SpecNotes, direction: Direction
    ) -> None:
        self.old_root, self.new_root = old_root, new_root
        self.notes = notes
        self.direction = direction
        self._active: set[tuple[str, str]] = set()
        self.loosened = 0
        """Differences by which the new schema accepts a value the old one did not (in either direction)."""

    # -- judging -------------------------------------------------------
    def narrowed(self, reason: str) -> None:
        """The set of valid values shrank: breaking for input, compatible for output."""
        kind = SpecChangeKind.BREAKING if self.direction is Direction.INPUT else SpecChangeKind.ADDITIVE
        self.notes.add(kind, reason)

    def widened(self, reason: str) -> None:
        """The set of valid values grew: additive for input, breaking for output."""
        kind = SpecChangeKind.ADDITIVE if self.direction is Direction.INPUT else SpecChangeKind.BREAKING
        self.loosened += 1
        self.notes.add(kind, reason)

    # -- comparing -----------------------------------------------------
    def compare(self, old: Any, new: Any, where: str) -> None:
        """Note every difference between ``old`` and ``new`` at ``where`` (a dotted path, "" at the top)."""
        old_schema, old_ref = resolve(old, self.old_root)
        new_schema, new_ref = resolve(new, self.new_root)
        key = (old_ref, new_ref)
        if old_ref and new_ref:
            if key in self._active:
                return  # a recursive model: this pair is already being compared further up
            self._active.add(key)
        try:
            self._compare_resolved(old_schema, new_schema, where)
        finally:
            self._active.discard(key)

    def _compare_resolved(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        label = _label(where, self.direction)
        for word in ("description", "title", "examples", "default"):
            if old.get(word) != new.get(word):
                what = "default" if word == "default" else word
                self.notes.add(SpecChangeKind.COSMETIC, f"{what} of {label} changed")
        old_branches = branches(old, self.old_root)
        new_branches = branches(new, self.new_root)
        if len(old_branches) == 1 and len(new_branches) == 1:
            self._compare_typed(old_branches[0], new_branches[0], where)
            return
        self._compare_unions(old_branches, new_branches, where)

    def _compare_unions(self, old: list[dict[str, Any]], new: list[dict[str, Any]], where: str) -> None:
        """Pair each old alternative with the new one that keeps it working best.

        Alternatives found unchanged on both sides pair first, so a removed one is
        reported as gone instead of as a change to a neighbour of the same type.
        """
        label = _label(where, self.direction)
        unchanged = self._unchanged_pairs(old, new, where)
        matched_new = set(unchanged.values())
        for index, old_branch in enumerate(old):
            if index in unchanged:
                continue
            old_type = type_name(old_branch)
            candidates = [i for i, b in enumerate(new) if accepts(type_name(b), old_type)]
            if not candidates:
                self.narrowed(f"type of {label} narrowed: {old_type} no longer accepted")
                continue
            free = [i for i in candidates if i not in matched_new]
            if not free:
                self.narrowed(f"{label} no longer accepts the alternative {_describe(old_branch)}")
                continue
            best = min(free, key=lambda i: self._trial(old_branch, new[i], where))
            matched_new.add(best)
            self._compare_typed(old_branch, new[best], where)
        for index, new_branch in enumerate(new):
            if index not in matched_new:
                self._note_new_alternative(old, new_branch, label, where)

    def _unchanged_pairs(
        self, old: list[dict[str, Any]], new: list[dict[str, Any]], where: str
    ) -> dict[int, int]:
        """Old alternative -> new alternative, for those that compare equal (each new one used once)."""
        pairs: dict[int, int] = {}
        for old_index, old_branch in enumerate(old):
            for new_index, new_branch in enumerate(new):
                if new_index in pairs.values() or type_name(new_branch) != type_name(old_branch):
                    continue
                if self._trial(old_branch, new_branch, where) == (0, 0):
                    pairs[old_index] = new_index
                    break
        return pairs

    def _note_new_alternative(
        self, old: list[dict[str, Any]], new_branch: dict[str, Any], label: str, where: str
    ) -> None:
        """A new alternative nothing old was paired with: widening unless an old one covered it."""
        new_type = type_name(new_branch)
        same_type = [b for b in old if accepts(type_name(b), new_type)]
        if not same_type:
            self.widened(f"type of {label} widened: {new_type} now accepted")
        elif not any(self._covers(b, new_branch, where) for b in same_type):
            # Another shape of a type already accepted (a constant, a model of a tagged union).
            self.widened(f"{label} accepts a new alternative: {_describe(new_branch)}")

    def _comparer_for_trial(self) -> SchemaComparer:
        trial = SchemaComparer(self.old_root, self.new_root, SpecNotes(), self.direction)
        trial._active = set(self._active)
        return trial

    def _trial(self, old: dict[str, Any], new: dict[str, Any], where: str) -> tuple[int, int]:
        """How badly pairing ``old`` with ``new`` would break: (breaking reasons, all reasons)."""
        trial = self._comparer_for_trial()
        trial._compare_typed(old, new, where)
        return trial.notes.breaking_count(), len(trial.notes.items)

    def _covers(self, old: dict[str, Any], new: dict[str, Any], where: str) -> bool:
        """Whether every value ``new`` accepts, ``old`` accepted already (as far as the walk tells)."""
        trial = self._comparer_for_trial()
        trial._compare_typed(old, new, where)
        return trial.loosened == 0

    def _compare_typed(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        label = _label(where, self.direction)
        old_type, new_type = type_name(old), type_name(new)
        if old_type != new_type:
            if accepts(new_type, old_type):
                self.widened(f"type of {label} widened from {old_type} to {new_type}")
            elif accepts(old_type, new_type):
                self.narrowed(f"type of {label} narrowed from {old_type} to {new_type}")
            else:
                self.notes.add(
                    SpecChangeKind.BREAKING, f"type of {label} changed from {old_type} to {new_type}"
                )
                return
        self._compare_enums(old, new, label)
        self._compare_bounds(old, new, label)
        self._compare_restrictions(old, new, label)
        if "properties" in old or "properties" in new or old_type == "object" or new_type == "object":
            self._compare_objects(old, new, where)
        if "items" in old or "items" in new:
            self._compare_items(old, new, where)
        for word in sorted((set(old) | set(new)) - HANDLED_KEYS):
            if old.get(word) != new.get(word):
                self.notes.add(SpecChangeKind.BREAKING, f"'{word}' of {label} changed")

    # -- per kind of constraint ----------------------------------------
    def _compare_enums(self, old: dict[str, Any], new: dict[str, Any], label: str) -> None:
        old_values = allowed_values(old)
        new_values = allowed_values(new)
        if old_values is None and new_values is None:
            return
        if old_values is None:
            self.narrowed(f"{label} restricted to {_show(new_values or [])}")
            return
        if new_values is None:
            self.widened(f"{label} no longer restricted to fixed values")
            return
        gone = [v for v in old_values if v not in new_values]
        extra = [v for v in new_values if v not in old_values]
        if gone:
            self.narrowed(f"enum values removed from {label}: {_show(gone)}")
        if extra:
            self.widened(f"enum values added to {label}: {_show(extra)}")

    def _compare_bounds(self, old: dict[str, Any], new: dict[str, Any], label: str) -> None:
        for words, tighter, tightened, loosened in _BOUND_SIDES:
            for word in words:
                before, after = old.get(word), new.get(word)
                if before == after:
                    continue
                if after is None:
                    self.widened(f"{word} of {label} removed (was {before})")
                elif before is None or tighter(after, before):
                    self.narrowed(
                        f"{word} of {label} {tightened} to {after}"
                        + ("" if before is None else f" from {before}")
                    )
                else:
                    self.widened(f"{word} of {label} {loosened} to {after} from {before}")

    def _compare_restrictions(self, old: dict[str, Any], new: dict[str, Any], label: str) -> None:
        for word in RESTRICTIONS:
            before, after = old.get(word), new.get(word)
            if before == after or (word == "uniqueItems" and not before and not after):
                continue
            if after is None or after is False:
                self.widened(f"{word} of {label} removed")
            elif before is None or before is False:
                self.narrowed(f"{word} added to {label}: {json.dumps(after)}")
            else:
                self.narrowed(f"{word} of {label} changed to {json.dumps(after)}")

    def _compare_items(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        old_items, new_items = old.get("items", {}), new.get("items", {})
        if isinstance(old_items, Mapping) and isinstance(new_items, Mapping):
            self.compare(old_items, new_items, f"{where}[]")

    # -- objects: which members went, came, were renamed or changed ----
    def _compare_objects(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        before, after = _Properties.of(old), _Properties.of(new)
        removed = [n for n in before.schemas if n not in after.schemas]
        added = [n for n in after.schemas if n not in before.schemas]
        renamed = self._renames(before, after, removed, added)
        self._note_renamed(renamed, where)
        gone_by_rename = {o for o, _ in renamed}
        self._note_removed([n for n in removed if n not in gone_by_rename], where)
        new_by_rename = {n for _, n in renamed}
        self._note_added([n for n in added if n not in new_by_rename], after, where)
        self._compare_kept(before, after, where)
        self._compare_additional(old, new, where, _label(where, self.direction))

    def _member_noun(self) -> str:
        return "output field" if self.direction is Direction.OUTPUT else "parameter"

    def _note_renamed(self, renamed: list[tuple[str, str]], where: str) -> None:
        noun = self._member_noun()
        self.loosened += len(renamed)  # objects without the old name are accepted now
        for old_name, new_name in renamed:
            self.notes.add(
                SpecChangeKind.BREAKING,
                f"{noun} '{_join(where, old_name)}' renamed to '{_join(where, new_name)}'",
            )

    def _note_removed(self, removed: list[str], where: str) -> None:
        noun = self._member_noun()
        self.loosened += len(removed)  # the member is no longer checked (or no longer needed)
        for name in removed:
            self.notes.add(SpecChangeKind.BREAKING, f"{noun} '{_join(where, name)}' removed")

    def _note_added(self, added: list[str], after: _Properties, where: str) -> None:
        """New members: more output is additive; a new required parameter breaks callers.

        An optional parameter is additive: calls that leave it out still work.
        """
        output = self.direction is Direction.OUTPUT
        noun = self._member_noun()
        for name in added:
            if output:
                self.notes.add(SpecChangeKind.ADDITIVE, f"{noun} '{_join(where, name)}' added")
            elif name in after.required:
                self.notes.add(SpecChangeKind.BREAKING, f"required parameter '{_join(where, name)}' added")
            else:
                self.notes.add(SpecChangeKind.ADDITIVE, f"optional parameter '{_join(where, name)}' added")

    def _compare_kept(self, before: _Properties, after: _Properties, where: str) -> None:
        """Members on both sides: whether each became required or optional, then their schemas."""
        noun = self._member_noun()
        for name in before.schemas:
            if name not in after.schemas:
                continue
            path = _join(where, name)
            if name in after.required and name not in before.required:
                # Input: callers that left it out now fail. Output: consumers may now rely on it.
                self.narrowed(f"{noun} '{path}' became required")
            elif name in before.required and name not in after.required:
                self.widened(f"{noun} '{path}' became optional")
            self.compare(before.schemas[name], after.schemas[name], path)

    def _renames(
        self, before: _Properties, after: _Properties, removed: list[str], added: list[str]
    ) -> list[tuple[str, str]]:
        """Removed and added properties with the same schema (bar words) read as one renamed."""
        pairs: list[tuple[str, str]] = []
        taken: set[str] = set()
        for old_name in removed:
            old_shape = shape(resolve(before.schemas[old_name], self.old_root)[0])
            for new_name in added:
                if new_name in taken:
                    continue
                new_shape = shape(resolve(after.schemas[new_name], self.new_root)[0])
                if old_shape == new_shape and (old_name in before.required) == (new_name in after.required):
                    pairs.append((old_name, new_name))
                    taken.add(new_name)
                    break
        return pairs

    def _compare_additional(self, old: dict[str, Any], new: dict[str, Any], where: str, label: str) -> None:
        before = old.get("additionalProperties", True)
        after = new.get("additionalProperties", True)
        if before == after:
            return
        closed_before, closed_after = before is False, after is False
        if closed_after and not closed_before:
            self.narrowed(f"additionalProperties closed on {label}")
        elif closed_before and not closed_after:
            self.widened(f"additionalProperties opened on {label}")
        elif isinstance(before, Mapping) and isinstance(after, Mapping):
            self.compare(before, after, f"{where}.*" if where else "*")
        elif isinstance(after, Mapping):
            self.narrowed(f"additionalProperties of {label} restricted")
        else:
            self.widened(f"additionalProperties of {label} relaxed")
