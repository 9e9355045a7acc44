"""Classifying what a new version of a tool's spec means for the callers of the old one.

A model or an MCP client that learned the old spec keeps sending calls shaped
by it, so for the input schema the question is "does the new schema still
accept every call the old one did?" (no: breaking; it accepts more: additive).
For the output schema the question is reversed: "does every new result still
fit what consumers of the old one expect?". Words only (descriptions, titles,
examples, defaults) are cosmetic.

Schemas are compared structurally, as pydantic v2 emits them: ``$ref`` into each
side's own ``$defs``, ``anyOf``/``oneOf`` unions (``X | None`` included),
nested objects and arrays.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from types import MappingProxyType
from typing import Any

from .types import ToolSpec

__all__ = [
    "SpecChange",
    "SpecChangeKind",
    "ToolSetChange",
    "compare_specs",
    "compare_tool_sets",
    "describe_change",
]


class SpecChangeKind(StrEnum):
    """How much a spec change matters to existing callers, most severe first in ``SEVERITY``."""

    BREAKING = "breaking"
    ADDITIVE = "additive"
    COSMETIC = "cosmetic"
    NONE = "none"


_RANK = {
    SpecChangeKind.NONE: 0,
    SpecChangeKind.COSMETIC: 1,
    SpecChangeKind.ADDITIVE: 2,
    SpecChangeKind.BREAKING: 3,
}


@dataclass(frozen=True, slots=True)
class SpecChange:
    """The classification of one tool's spec change.

    ``reasons`` holds one short line per difference, most severe first;
    ``reason_kinds`` gives the kind of each line (same length and order).
    """

    kind: SpecChangeKind = SpecChangeKind.NONE
    reasons: tuple[str, ...] = ()
    reason_kinds: tuple[SpecChangeKind, ...] = ()

    def reasons_of(self, kind: SpecChangeKind) -> tuple[str, ...]:
        """The reasons of one kind, e.g. only what breaks callers."""
        return tuple(r for r, k in zip(self.reasons, self.reason_kinds, strict=False) if k is kind)

    @property
    def breaking(self) -> bool:
        """Whether callers of the old version may fail against the new one."""
        return self.kind is SpecChangeKind.BREAKING

    def to_json(self) -> dict[str, Any]:
        """A plain dict for storage and status JSON."""
        return {
            "kind": self.kind.value,
            "reasons": [
                {"kind": k.value, "reason": r} for r, k in zip(self.reasons, self.reason_kinds, strict=False)
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SpecChange:
        """The inverse of ``to_json``."""
        items = [(SpecChangeKind(i["kind"]), str(i["reason"])) for i in data.get("reasons", ())]
        return cls(
            SpecChangeKind(data.get("kind", "none")),
            tuple(r for _, r in items),
            tuple(k for k, _ in items),
        )


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
                lines.append((_RANK[kind], f"{name}: {reason}"))
        return tuple(text for _, text in sorted(lines, key=lambda item: -item[0]))


def compare_specs(old: ToolSpec | Mapping[str, Any], new: ToolSpec | Mapping[str, Any]) -> SpecChange:
    """Classify the change from ``old`` to ``new`` (two versions of one tool)."""
    notes = _Notes()
    if old.get("description") != new.get("description"):
        notes.add(SpecChangeKind.COSMETIC, "description changed")
    old_in, new_in = _schema_of(old, "inputSchema"), _schema_of(new, "inputSchema")
    _Comparer(old_in or {}, new_in or {}, notes, _Direction.INPUT).compare(old_in or {}, new_in or {}, "")
    old_out, new_out = _schema_of(old, "outputSchema"), _schema_of(new, "outputSchema")
    if old_out is not None and new_out is None:
        notes.add(SpecChangeKind.BREAKING, "output schema removed")
    elif old_out is None and new_out is not None:
        notes.add(SpecChangeKind.ADDITIVE, "output schema added")
    elif old_out is not None and new_out is not None:
        _Comparer(old_out, new_out, notes, _Direction.OUTPUT).compare(old_out, new_out, "")
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
        kind = max((c.kind for c in changed.values()), key=_RANK.__getitem__)
    if added and _RANK[kind] < _RANK[SpecChangeKind.ADDITIVE]:
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


# ------------------------------------------------------------------ internals
_COSMETIC_KEYS = frozenset(
    {
        "description",
        "title",
        "examples",
        "example",
        "default",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_STRUCTURAL_KEYS = frozenset(
    {"type", "anyOf", "oneOf", "$ref", "$defs", "definitions", "properties", "required", "items"}
    | {"additionalProperties", "enum", "const", "discriminator", "prefixItems"}
)
_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_RESTRICTIONS = ("pattern", "format", "multipleOf", "uniqueItems", "contentEncoding")
_HANDLED = _COSMETIC_KEYS | _STRUCTURAL_KEYS | set(_LOWER_BOUNDS) | set(_UPPER_BOUNDS) | set(_RESTRICTIONS)


class _Direction(Enum):
    INPUT = "input"  # the new schema must accept at least what the old one did
    OUTPUT = "output"  # the new schema must produce at most what the old one did


class _Notes:
    """Reasons collected during one comparison, deduplicated."""

    def __init__(self) -> None:
        self.items: list[tuple[SpecChangeKind, str]] = []

    def add(self, kind: SpecChangeKind, reason: str) -> None:
        if (kind, reason) not in self.items:
            self.items.append((kind, reason))

    def breaking_count(self) -> int:
        return sum(1 for kind, _ in self.items if kind is SpecChangeKind.BREAKING)

    def change(self) -> SpecChange:
        if not self.items:
            return SpecChange()
        ordered = sorted(self.items, key=lambda item: -_RANK[item[0]])
        return SpecChange(ordered[0][0], tuple(r for _, r in ordered), tuple(k for k, _ in ordered))


def _schema_of(spec: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The JSON Schema under ``spec[key]``, unwrapping Bedrock's ``{"json": ...}``."""
    value = spec.get(key)
    if not isinstance(value, Mapping):
        return None
    inner = value.get("json", value)
    return dict(inner) if isinstance(inner, Mapping) else None


def _type_name(schema: Mapping[str, Any]) -> str:
    """The one JSON type a (single-typed) branch accepts, ``any`` when unconstrained."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    values = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
    if values:
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1:
            return kinds.pop()
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "any"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _accepts(new_type: str, old_type: str) -> bool:
    """Whether values of ``old_type`` are all valid for ``new_type``."""
    return new_type == old_type or new_type == "any" or (new_type == "number" and old_type == "integer")


def _label(where: str, direction: _Direction) -> str:
    if direction is _Direction.OUTPUT:
        return f"output '{where}'" if where else "output"
    return f"parameter '{where}'" if where else "input"


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _show(values: Any) -> str:
    return ", ".join(json.dumps(v, sort_keys=True) for v in values)


class _Comparer:
    """One structural comparison of two schemas, each resolved against its own root."""

    def __init__(
        self, old_root: Mapping[str, Any], new_root: Mapping[str, Any], notes: _Notes, direction: _Direction
    ) -> None:
        self.old_root, self.new_root = old_root, new_root
        self.notes = notes
        self.direction = direction
        self._active: set[tuple[str, str]] = set()

    # -- judging -------------------------------------------------------
    def narrowed(self, reason: str) -> None:
        """The set of valid values shrank: breaking for input, compatible for output."""
        kind = SpecChangeKind.BREAKING if self.direction is _Direction.INPUT else SpecChangeKind.ADDITIVE
        self.notes.add(kind, reason)

    def widened(self, reason: str) -> None:
        """The set of valid values grew: additive for input, breaking for output."""
        kind = SpecChangeKind.ADDITIVE if self.direction is _Direction.INPUT else SpecChangeKind.BREAKING
        self.notes.add(kind, reason)

    # -- resolving -----------------------------------------------------
    def _resolve(self, schema: Any, root: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
        """Follow ``$ref`` chains into the side's own ``$defs``; returns the schema and the last ref.

        A one-element ``allOf`` (how older pydantic wrapped a ``$ref`` with a
        description beside it) is merged into its parent first.
        """
        ref = ""
        seen: set[str] = set()
        current: dict[str, Any] = dict(schema) if isinstance(schema, Mapping) else {}
        while True:
            wrapped = current.get("allOf")
            if isinstance(wrapped, list) and len(wrapped) == 1 and isinstance(wrapped[0], Mapping):
                current = {**wrapped[0], **{k: v for k, v in current.items() if k != "allOf"}}
                continue
            target_ref = current.get("$ref")
            if not isinstance(target_ref, str) or target_ref in seen:
                return current, ref
            ref = target_ref
            seen.add(ref)
            target = _pointer(root, ref)
            siblings = {k: v for k, v in current.items() if k != "$ref"}
            current = {**target, **siblings} if target is not None else siblings

    def _branches(self, schema: dict[str, Any], root: Mapping[str, Any]) -> list[dict[str, Any]]:
        """A schema as a flat list of single-typed alternatives."""
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf", "discriminator")}
                found: list[dict[str, Any]] = []
                for option in options:
                    resolved, _ = self._resolve(option, root)
                    found.extend(self._branches({**rest, **resolved}, root))
                return found
        declared = schema.get("type")
        if isinstance(declared, list):
            return [{**schema, "type": t} for t in declared]
        return [schema]

    # -- comparing -----------------------------------------------------
    def compare(self, old: Any, new: Any, where: str) -> None:
        old_schema, old_ref = self._resolve(old, self.old_root)
        new_schema, new_ref = self._resolve(new, self.new_root)
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
        old_branches = self._branches(old, self.old_root)
        new_branches = self._branches(new, self.new_root)
        if len(old_branches) == 1 and len(new_branches) == 1:
            self._compare_typed(old_branches[0], new_branches[0], where)
            return
        self._compare_unions(old_branches, new_branches, where)

    def _compare_unions(self, old: list[dict[str, Any]], new: list[dict[str, Any]], where: str) -> None:
        """Pair each old alternative with the new one that keeps it working best."""
        label = _label(where, self.direction)
        matched_new: set[int] = set()
        for old_branch in old:
            old_type = _type_name(old_branch)
            candidates = [i for i, b in enumerate(new) if _accepts(_type_name(b), old_type)]
            if not candidates:
                self.narrowed(f"type of {label} narrowed: {old_type} no longer accepted")
                continue
            best = min(candidates, key=lambda i: self._trial(old_branch, new[i], where))
            matched_new.add(best)
            self._compare_typed(old_branch, new[best], where)
        for index, new_branch in enumerate(new):
            if index in matched_new:
                continue
            new_type = _type_name(new_branch)
            if not any(_accepts(_type_name(b), new_type) for b in old):
                self.widened(f"type of {label} widened: {new_type} now accepted")

    def _trial(self, old: dict[str, Any], new: dict[str, Any], where: str) -> tuple[int, int]:
        """How badly pairing ``old`` with ``new`` would break: (breaking reasons, all reasons)."""
        trial = _Comparer(self.old_root, self.new_root, _Notes(), self.direction)
        trial._active = set(self._active)
        trial._compare_typed(old, new, where)
        return trial.notes.breaking_count(), len(trial.notes.items)

    def _compare_typed(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        label = _label(where, self.direction)
        old_type, new_type = _type_name(old), _type_name(new)
        if old_type != new_type:
            if _accepts(new_type, old_type):
                self.widened(f"type of {label} widened from {old_type} to {new_type}")
            elif _accepts(old_type, new_type):
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
            old_items, new_items = old.get("items", {}), new.get("items", {})
            if isinstance(old_items, Mapping) and isinstance(new_items, Mapping):
                self.compare(old_items, new_items, f"{where}[]")
        for word in sorted((set(old) | set(new)) - _HANDLED):
            if old.get(word) != new.get(word):
                self.notes.add(SpecChangeKind.BREAKING, f"'{word}' of {label} changed")

    def _compare_enums(self, old: dict[str, Any], new: dict[str, Any], label: str) -> None:
        old_values = _allowed(old)
        new_values = _allowed(new)
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
        for word in _LOWER_BOUNDS:
            before, after = old.get(word), new.get(word)
            if before == after:
                continue
            if after is None:
                self.widened(f"{word} of {label} removed (was {before})")
            elif before is None or after > before:
                self.narrowed(
                    f"{word} of {label} raised to {after}" + ("" if before is None else f" from {before}")
                )
            else:
                self.widened(f"{word} of {label} lowered to {after} from {before}")
        for word in _UPPER_BOUNDS:
            before, after = old.get(word), new.get(word)
            if before == after:
                continue
            if after is None:
                self.widened(f"{word} of {label} removed (was {before})")
            elif before is None or after < before:
                self.narrowed(
                    f"{word} of {label} lowered to {after}" + ("" if before is None else f" from {before}")
                )
            else:
                self.widened(f"{word} of {label} raised to {after} from {before}")

    def _compare_restrictions(self, old: dict[str, Any], new: dict[str, Any], label: str) -> None:
        for word in _RESTRICTIONS:
            before, after = old.get(word), new.get(word)
            if before == after or (word == "uniqueItems" and not before and not after):
                continue
            if after is None or after is False:
                self.widened(f"{word} of {label} removed")
            elif before is None or before is False:
                self.narrowed(f"{word} added to {label}: {json.dumps(after)}")
            else:
                self.narrowed(f"{word} of {label} changed to {json.dumps(after)}")

    def _compare_objects(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        label = _label(where, self.direction)
        old_props: Mapping[str, Any] = old.get("properties") or {}
        new_props: Mapping[str, Any] = new.get("properties") or {}
        old_required = set(old.get("required") or ())
        new_required = set(new.get("required") or ())
        removed = [n for n in old_props if n not in new_props]
        added = [n for n in new_props if n not in old_props]
        renamed = self._renames(old_props, new_props, removed, added, old_required, new_required)
        output = self.direction is _Direction.OUTPUT
        noun = "output field" if output else "parameter"
        for old_name, new_name in renamed:
            self.notes.add(
                SpecChangeKind.BREAKING,
                f"{noun} '{_join(where, old_name)}' renamed to '{_join(where, new_name)}'",
            )
        gone_by_rename = {o for o, _ in renamed}
        new_by_rename = {n for _, n in renamed}
        for name in removed:
            if name not in gone_by_rename:
                self.notes.add(SpecChangeKind.BREAKING, f"{noun} '{_join(where, name)}' removed")
        for name in added:
            if name in new_by_rename:
                continue
            if output:
                self.notes.add(SpecChangeKind.ADDITIVE, f"{noun} '{_join(where, name)}' added")
            elif name in new_required:
                self.notes.add(SpecChangeKind.BREAKING, f"required parameter '{_join(where, name)}' added")
            else:
                self.notes.add(SpecChangeKind.ADDITIVE, f"optional parameter '{_join(where, name)}' added")
        for name in old_props:
            if name not in new_props:
                continue
            path = _join(where, name)
            if name in new_required and name not in old_required:
                # Input: callers that left it out now fail. Output: consumers may now rely on it.
                self.narrowed(f"{noun} '{path}' became required")
            elif name in old_required and name not in new_required:
                self.widened(f"{noun} '{path}' became optional")
            self.compare(old_props[name], new_props[name], path)
        self._compare_additional(old, new, where, label)

    def _renames(
        self,
        old_props: Mapping[str, Any],
        new_props: Mapping[str, Any],
        removed: list[str],
        added: list[str],
        old_required: set[str],
        new_required: set[str],
    ) -> list[tuple[str, str]]:
        """Removed and added properties with the same schema (bar words) read as one renamed."""
        pairs: list[tuple[str, str]] = []
        taken: set[str] = set()
        for old_name in removed:
            old_shape = _shape(self._resolve(old_props[old_name], self.old_root)[0])
            for new_name in added:
                if new_name in taken:
                    continue
                new_shape = _shape(self._resolve(new_props[new_name], self.new_root)[0])
                if old_shape == new_shape and (old_name in old_required) == (new_name in new_required):
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


def _allowed(schema: Mapping[str, Any]) -> list[Any] | None:
    if "enum" in schema and isinstance(schema["enum"], list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def _shape(schema: Mapping[str, Any]) -> str:
    """A schema without its words, for spotting renames."""
    return json.dumps(_strip(schema), sort_keys=True)


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k not in _COSMETIC_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _pointer(root: Mapping[str, Any], ref: str) -> dict[str, Any] | None:
    """Resolve a local JSON pointer (``#/$defs/Name``); None for remote or missing targets."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref.lstrip("#").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return dict(node) if isinstance(node, Mapping) else None
