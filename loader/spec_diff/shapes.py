"""Reading JSON Schemas the way ``loader.spec_diff.schemas`` compares them: resolved, flattened, typed.

Schemas come as pydantic v2 emits them: ``$ref`` into the side's own
``$defs`` (or an older one-element ``allOf`` around a ``$ref``), ``anyOf`` /
``oneOf`` unions (``X | None`` included) and ``type`` lists. These helpers turn
one side's schema into single-typed alternatives, name the JSON type each
accepts, and strip words (descriptions, titles, ...) to spot renames.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "COSMETIC_KEYS",
    "HANDLED_KEYS",
    "LOWER_BOUNDS",
    "RESTRICTIONS",
    "UPPER_BOUNDS",
    "accepts",
    "allowed_values",
    "branches",
    "json_type",
    "resolve",
    "shape",
    "type_name",
]

COSMETIC_KEYS = frozenset(
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
"""Keywords that only word a schema: changing them never changes which values fit."""
_STRUCTURAL_KEYS = frozenset(
    {"type", "anyOf", "oneOf", "$ref", "$defs", "definitions", "properties", "required", "items"}
    | {"additionalProperties", "enum", "const", "discriminator", "prefixItems"}
)
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
RESTRICTIONS = ("pattern", "format", "multipleOf", "uniqueItems", "contentEncoding")
HANDLED_KEYS = COSMETIC_KEYS | _STRUCTURAL_KEYS | set(LOWER_BOUNDS) | set(UPPER_BOUNDS) | set(RESTRICTIONS)
"""Keywords the comparison understands; a change to any other one is taken as breaking."""


def resolve(schema: Any, root: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
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


def branches(schema: dict[str, Any], root: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A schema as a flat list of single-typed alternatives."""
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf", "discriminator")}
            found: list[dict[str, Any]] = []
            for option in options:
                resolved, _ = resolve(option, root)
                found.extend(branches({**rest, **resolved}, root))
            return found
    declared = schema.get("type")
    if isinstance(declared, list):
        return [{**schema, "type": t} for t in declared]
    return [schema]


def type_name(schema: Mapping[str, Any]) -> str:
    """The one JSON type a (single-typed) branch accepts, ``any`` when unconstrained."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    values = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
    if values:
        kinds = {json_type(v) for v in values}
        if len(kinds) == 1:
            return kinds.pop()
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "any"


def json_type(value: Any) -> str:
    """The JSON Schema type name of a JSON value (an ``enum`` or ``const`` member)."""
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


def accepts(new_type: str, old_type: str) -> bool:
    """Whether values of ``old_type`` are all valid for ``new_type``."""
    return new_type == old_type or new_type == "any" or (new_type == "number" and old_type == "integer")


def allowed_values(schema: Mapping[str, Any]) -> list[Any] | None:
    """The fixed values a schema allows (``enum`` or ``const``), or None when it allows any."""
    if "enum" in schema and isinstance(schema["enum"], list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def shape(schema: Mapping[str, Any]) -> str:
    """A schema without its words, for spotting renames."""
    return json.dumps(_strip(schema), sort_keys=True)


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k not in COSMETIC_KEYS}
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
