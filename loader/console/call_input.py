"""``call``'s input: a file, a JSON object and ``key=value`` pairs, read as the tool's schema types them.

A value on a command line is text. The parameter's JSON-schema type says what
it means: ``city=123`` is the string ``"123"`` for a ``string`` parameter and
the number 123 for an ``integer`` one; objects and arrays are written as JSON.
A parameter the schema does not describe gets the old reading: JSON if it
parses, else the text.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape

from ..spec_diff.shapes import json_type
from .common import UsageError

__all__ = ["InputPart", "convert_pair", "merge_inputs", "parse_input", "read_inputs", "schema_types"]

InputPart = dict[str, Any] | tuple[str, str]
"""A JSON object given whole, or one ``key=value`` pair still as text."""

_PAIR = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$", re.DOTALL)
_INTEGER = re.compile(r"^[-+]?\d+$")
_ORDER = ("null", "boolean", "integer", "number", "array", "object", "string")
"""The order a union's types are tried in: the strictest reading first, a string last."""
_EXAMPLE = {
    "integer": "{key}=10",
    "number": "{key}=2.5",
    "boolean": "{key}=true or {key}=false",
    "null": "{key}=null",
    "array": "{key}='[1, 2]'",
    "object": "{key}='{{\"a\": 1}}'",
    "string": "{key}=text",
}
_NOUN = {
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a JSON array",
    "object": "a JSON object",
    "string": "a text",
}
_NESTING = 20


class _NotThisType(ValueError):
    """The text is no value of the type tried."""


def _json_problem(exc: json.JSONDecodeError, source: str) -> str:
    """``invalid JSON in <source>: <msg> at line L, column C`` with the line and a caret under the spot."""
    lines = exc.doc.splitlines() or [""]
    shown = lines[min(exc.lineno, len(lines)) - 1]
    caret = " " * (exc.colno - 1) + "^"
    return (
        f"invalid JSON in {source}: {exc.msg} at line {exc.lineno}, column {exc.colno}\n  {shown}\n  {caret}"
    )


def _load_object(text: str, source: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(escape(_json_problem(exc, source))) from None
    except RecursionError:
        raise UsageError(escape(f"the JSON in {source} is nested too deeply to read")) from None
    if not isinstance(value, dict):
        raise UsageError(escape(f"the input in {source} must be a JSON object, not {type(value).__name__}"))
    return value


def parse_input(
    inputs: Sequence[str],
    input_file: Path | None,
    stdin: Callable[[], str] | None = None,
    *,
    schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Merge the input file, a JSON object argument and ``key=value`` pairs, in that order.

    Each pair's value is read as the tool's input ``schema`` types its parameter
    (``convert_pair``); without a schema, as JSON if it parses, else as text.

    Raises:
        UsageError: As ``read_inputs`` and ``merge_inputs``.
    """
    return merge_inputs(read_inputs(inputs, input_file, stdin), schema)


def merge_inputs(parts: Sequence[InputPart], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The tool's input from ``read_inputs``'s parts, later ones overriding earlier ones.

    Raises:
        UsageError: A pair's value its parameter's type cannot take.
    """
    data: dict[str, Any] = {}
    for part in parts:
        if isinstance(part, tuple):
            data[part[0]] = convert_pair(part[0], part[1], schema)
        else:
            data.update(part)
    return data


def read_inputs(
    inputs: Sequence[str], input_file: Path | None, stdin: Callable[[], str] | None = None
) -> list[InputPart]:
    """The input file's object, then each argument: a JSON object, or a ``(key, text)`` pair.

    Raises:
        UsageError: Invalid JSON (naming where and the position), a JSON value
            that is not an object, or more than one JSON argument.
    """
    parts: list[InputPart] = []
    if input_file is not None:
        if str(input_file) == "-":
            parts.append(_load_object(stdin() if stdin is not None else sys.stdin.read(), "stdin"))
        else:
            try:
                text = input_file.read_text(encoding="utf-8")
            except OSError as exc:
                raise UsageError(
                    escape(f"cannot read --input-file {input_file}: {exc.strerror or exc}")
                ) from None
            parts.append(_load_object(text, str(input_file)))
    documents = 0
    for index, item in enumerate(inputs, 1):
        is_json = item.lstrip().startswith(("{", "["))
        pair = None if is_json else _PAIR.match(item)
        if pair is not None:
            parts.append((pair.group(1), pair.group(2)))
            continue
        if not is_json:
            raise UsageError(escape(f"argument {index}: expected key=value (or a JSON object), got {item!r}"))
        documents += 1
        if documents > 1:
            raise UsageError(
                escape(f"more than one JSON input given (argument {index}: {item!r}); merge them")
            )
        parts.append(_load_object(item, f"argument {index}"))
    return parts


def _resolve(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/X``) followed."""
    if not isinstance(schema, Mapping):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and depth < _NESTING:
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        return _resolve(target, root, depth + 1)
    return schema


def schema_types(schema: Any, root: Mapping[str, Any], depth: int = 0) -> set[str]:
    """The JSON types a parameter's schema accepts (empty: any), through ``anyOf``, ``$ref``, ``enum``..."""
    schema = _resolve(schema, root, depth)
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    found: set[str] = set()
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key) or ():
            if depth >= _NESTING:
                return set()
            types = schema_types(option, root, depth + 1)
            if not types:
                return set()  # one option takes anything: so does the union
            found |= types
    for value in list(schema.get("enum") or ()) + ([schema["const"]] if "const" in schema else []):
        found.add(json_type(value))
    return found


def _read(kind: str, raw: str) -> Any:
    """``raw`` as a value of JSON type ``kind``.

    Raises:
        _NotThisType: It is none.
    """
    text = raw.strip()
    if kind == "string":
        return raw
    if kind == "null" and text == "null":
        return None
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "integer" and _INTEGER.match(text):
        return int(text)
    if kind == "number":
        if _INTEGER.match(text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            raise _NotThisType(kind) from None
        if math.isfinite(number):
            return number
    if kind in ("array", "object") and text.startswith("[" if kind == "array" else "{"):
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise _NotThisType(kind) from None
        if isinstance(value, list if kind == "array" else dict):
            return value
    raise _NotThisType(kind)


def _untyped(key: str, raw: str) -> Any:
    """A value for a parameter the schema does not type: JSON if it parses, else the text."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw
    except RecursionError:
        raise UsageError(escape(f"the JSON value of {key}= is nested too deeply to read")) from None


def convert_pair(key: str, raw: str, input_schema: Mapping[str, Any] | None) -> Any:
    """The value of ``key=raw`` for a tool whose input schema is ``input_schema`` (None: unknown).

    Raises:
        UsageError: The text is no value of any type the parameter accepts; says which
            forms it takes.
    """
    properties = (input_schema or {}).get("properties")
    if not isinstance(properties, Mapping) or key not in properties:
        return _untyped(key, raw)
    types = schema_types(properties[key], input_schema or {})
    if not types:
        return _untyped(key, raw)
    ordered = [kind for kind in _ORDER if kind in types]
    if not ordered:
        return _untyped(key, raw)
    for kind in ordered:
        try:
            return _read(kind, raw)
        except _NotThisType:
            continue
    wanted = " or ".join(_NOUN[kind] for kind in ordered)
    forms = ", ".join(_EXAMPLE[kind].format(key=key) for kind in ordered)
    raise UsageError(escape(f"parameter {key!r} takes {wanted}, not {raw!r}: write it as {forms}"))
