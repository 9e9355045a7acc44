"""Input problems worded the same way whatever found them: pydantic, jsonschema or declared parameters.

Each problem is an ``InputProblem``: a dotted path (``address.zip``,
``items.2``; None for the input as a whole, shown as ``(input)`` in payloads),
a short phrase (``must be a string``) and the sentence built from both
(``Parameter address.zip must be a string``). Library noise is left out: error
URLs, echoed input values, union branch names. ``loader.tools.validation`` is
the entry point; this module only words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from jsonschema.exceptions import ValidationError as JsonSchemaValidationError  # type: ignore[import-untyped]
from pydantic import ValidationError

from ..errors import InputProblem

__all__ = [
    "FINITE_KEYWORD",
    "NOT_AN_OBJECT",
    "WHOLE_INPUT",
    "jsonschema_phrases",
    "key_problems",
    "problem_at",
    "problems_from_jsonschema",
    "problems_from_pydantic",
]

WHOLE_INPUT = "(input)"
"""The ``parameter`` shown in payloads for a problem with the input as a whole."""

NOT_AN_OBJECT = "must be a JSON object of named parameters"
_NON_FINITE = "must be a finite number"
FINITE_KEYWORD = "finite"
"""The keyword of the jsonschema error for a NaN or an infinity where the schema does not allow one."""
_MISSING_WORDS = frozenset({"missing required parameter", "missing required field"})
_UNEXPECTED_WORDS = frozenset({"unexpected parameter", "unexpected field"})


def problem_at(parameter: str | None, problem: str) -> InputProblem:
    """An ``InputProblem`` whose sentence is worded from its path and phrase, the same way everywhere.

    ``Missing required parameter: city``, ``Unexpected parameter: x``,
    ``Parameter days must be at most 14``, ``Tool input must be ...`` (no path).
    """
    if parameter is None or parameter == WHOLE_INPUT:
        return InputProblem(None, problem, f"Tool input {problem}")
    if problem in _MISSING_WORDS:
        return InputProblem(parameter, problem, f"Missing required parameter: {parameter}")
    if problem in _UNEXPECTED_WORDS:
        return InputProblem(parameter, problem, f"Unexpected parameter: {parameter}")
    return InputProblem(parameter, problem, f"Parameter {parameter} {problem}")


_FIXED = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "string_type": "must be a string",
    "string_unicode": "must be a string",
    "bool_type": "must be a boolean",
    "bool_parsing": "must be a boolean",
    "list_type": "must be an array",
    "tuple_type": "must be an array",
    "set_type": "must be an array",
    "frozen_set_type": "must be an array",
    "iterable_type": "must be an array",
    "dict_type": "must be an object",
    "mapping_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "dataclass_exact_type": "must be an object",
    "none_required": "must be null",
}
_WITH_CONTEXT = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "multiple_of": "must be a multiple of {multiple_of}",
    "string_too_short": "must have at least {min_length} characters",
    "string_too_long": "must have at most {max_length} characters",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
    "string_pattern_mismatch": "must match the pattern '{pattern}'",
    "literal_error": "must be {expected}",
    "enum": "must be {expected}",
}
_MISSING = frozenset({"missing", "missing_argument", "missing_keyword_only_argument"})
_EXTRA = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
_JSON_TYPES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_JSON_BOUNDS = {
    "maximum": "must be at most {}",
    "minimum": "must be at least {}",
    "exclusiveMaximum": "must be less than {}",
    "exclusiveMinimum": "must be greater than {}",
    "multipleOf": "must be a multiple of {}",
    "minLength": "must have at least {} characters",
    "maxLength": "must have at most {} characters",
    "minItems": "must have at least {} items",
    "maxItems": "must have at most {} items",
    "minProperties": "must have at least {} properties",
    "maxProperties": "must have at most {} properties",
}


def problems_from_pydantic(error: ValidationError, data: Any) -> list[InputProblem]:
    """The problems in a pydantic ``ValidationError`` raised while validating ``data``.

    ``data`` is walked along each error's location, so union branch names
    pydantic puts in locations (``x.int``) are dropped and the branches'
    complaints are merged into one line (``x: must be an integer or a string``).
    """
    collected: list[tuple[str, str, bool]] = []
    for detail in error.errors(include_url=False, include_input=False):
        kind = detail["type"]
        path, tagged, key_error = _walk(detail["loc"], data, keep_last=kind in _MISSING)
        nested = "." in path
        if kind in _MISSING:
            problem = "missing required field" if nested else "missing required parameter"
        elif kind in _EXTRA:
            problem = "unexpected field" if nested else "unexpected parameter"
        elif not path and kind in ("model_type", "model_attributes_type", "dict_type"):
            problem = NOT_AN_OBJECT
        else:
            problem = _pydantic_problem(kind, detail.get("ctx") or {}, detail["msg"])
            if key_error:
                problem = f"key {problem}"
        collected.append((path or WHOLE_INPUT, problem, tagged))
    return _merge(collected)


def _walk(loc: Sequence[int | str], data: Any, *, keep_last: bool) -> tuple[str, bool, bool]:
    """Dotted path of the location segments that index into ``data``; the rest are union tags."""
    parts: list[str] = []
    current = data
    tagged = key_error = False
    last = len(loc) - 1
    for index, segment in enumerate(loc):
        if isinstance(current, Mapping) and segment in current:
            parts.append(str(segment))
            current = current[segment]
        elif (
            isinstance(current, (list, tuple))
            and isinstance(segment, int)
            and not isinstance(segment, bool)
            and -len(current) <= segment < len(current)
        ):
            parts.append(str(segment))
            current = current[segment]
        elif index == last and keep_last:
            parts.append(str(segment))
        elif segment == "[key]":
            key_error = True
        else:
            tagged = True
    return ".".join(parts), tagged, key_error


def _pydantic_problem(kind: str, ctx: Mapping[str, Any], message: str) -> str:
    fixed = _FIXED.get(kind)
    if fixed is not None:
        return fixed
    template = _WITH_CONTEXT.get(kind)
    if template is not None:
        try:
            return template.format(**{key: _number(value) for key, value in ctx.items()})
        except (KeyError, IndexError, ValueError):
            pass
    return _soften(message)


def _soften(message: str) -> str:
    """A library message reworded as "must ..." and without prefixes such as ``Value error,``."""
    text = message.strip().rstrip(".")
    for prefix in ("Value error, ", "Assertion failed, "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    if text.startswith("Input should "):
        text = "must " + text[len("Input should ") :]
    return text.splitlines()[0] if text else "is invalid"


def _merge(collected: Iterable[tuple[str, str, bool]]) -> list[InputProblem]:
    """Deduplicate, and fold the complaints of union branches about one path into one line."""
    lines: list[tuple[str, list[str]]] = []
    union_line: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for path, problem, tagged in collected:
        if (path, problem) in seen:
            continue
        seen.add((path, problem))
        if tagged and path in union_line:
            lines[union_line[path]][1].append(problem)
            continue
        if tagged:
            union_line[path] = len(lines)
        lines.append((path, [problem]))
    return [problem_at(path, _either(problems)) for path, problems in lines]


def _either(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    prefix = "must be "
    if all(p.startswith(prefix) for p in problems):
        return prefix + _or([p[len(prefix) :] for p in problems])
    return " or ".join(problems)


def _or(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def problems_from_jsonschema(errors: Iterable[JsonSchemaValidationError]) -> list[InputProblem]:
    """The problems in ``jsonschema`` validation errors (from ``iter_errors``), in the schema's order."""
    collected: list[tuple[str, str, bool]] = []
    for error in errors:
        collected.extend(_jsonschema_problems(error, [str(part) for part in error.absolute_path]))
    return _merge(collected)


def key_problems(
    error: JsonSchemaValidationError, path: Sequence[str]
) -> tuple[Literal["missing", "unexpected"], list[str]] | None:
    """The keys a ``required`` or extra-properties error is about, as dotted paths under ``path``.

    jsonschema reports one error for all the missing (or unexpected) keys of an
    object; callers word one problem per key. ``unexpected`` keys are those
    matched by neither ``properties`` nor ``patternProperties``. None for other
    errors, and for an extra-properties error whose keys cannot be told apart.
    """
    instance = error.instance
    if not isinstance(instance, Mapping):
        return None
    keyword = error.validator
    if keyword == "required":
        return "missing", [_dotted(path, name) for name in error.validator_value if name not in instance]
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        known = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [k for k in instance if k not in known and not any(_search(p, k) for p in patterns)]
        if extras:
            return "unexpected", [_dotted(path, key) for key in extras]
    return None


def _dotted(path: Sequence[str], key: object) -> str:
    return ".".join([*path, str(key)])


_Found = tuple[str, str, bool]
"""One problem before merging: (dotted path or ``WHOLE_INPUT``, phrase, whether a union branch found it)."""


def _jsonschema_problems(error: JsonSchemaValidationError, path: list[str]) -> list[_Found]:
    """One jsonschema error as problems: one per key for required/extra keys, else one per keyword."""
    keyed = _key_problems(error, path)
    if keyed is not None:
        return keyed
    where = ".".join(path) or WHOLE_INPUT
    if error.validator in ("anyOf", "oneOf"):
        return _union_problems(error, path, where)
    wording = _KEYWORD_PHRASES.get(error.validator)
    phrase = None if wording is None else wording(error.validator_value, bool(path))
    return [(where, _strip_instance(error.message) if phrase is None else phrase, False)]


def _key_problems(error: JsonSchemaValidationError, path: list[str]) -> list[_Found] | None:
    """A ``required`` or extra-properties error as one problem per key; None for other errors."""
    keyed = key_problems(error, path)
    if keyed is None:
        return None
    kind, keys = keyed
    nested = bool(path)
    if kind == "missing":
        word = "missing required field" if nested else "missing required parameter"
    else:
        word = "unexpected field" if nested else "unexpected parameter"
    return [(key, word, False) for key in keys]


def _union_problems(error: JsonSchemaValidationError, path: list[str], where: str) -> list[_Found]:
    """An ``anyOf`` / ``oneOf`` error: what each alternative found at this path, merged later in one line.

    Only the alternatives' errors about the value itself (empty ``relative_path``)
    are worded; when they word nothing, one line says no allowed form matched.
    """
    if error.context:
        direct = [sub for sub in error.context if not sub.relative_path]
        branches = [
            (where, phrase, True) for sub in direct for _, phrase, _ in _jsonschema_problems(sub, path)
        ]
        if branches:
            return branches
        return [(where, "does not match any of the allowed forms", False)]
    if error.validator == "oneOf":
        return [(where, "matches more than one of the allowed forms", False)]
    return [(where, _strip_instance(error.message), False)]


def _type_phrase(value: Any, nested: bool) -> str:
    kinds = [value] if isinstance(value, str) else list(value)
    if not nested and "object" in kinds:
        return NOT_AN_OBJECT
    return "must be " + _or([_JSON_TYPES.get(k, k) for k in kinds])


def _enum_phrase(value: Any, nested: bool) -> str | None:
    if isinstance(value, list) and value:
        return "must be " + _or([_literal(v) for v in value])
    return None


def _const_phrase(value: Any, nested: bool) -> str:
    return "must be " + _literal(value)


def _finite_phrase(value: Any, nested: bool) -> str:
    return _NON_FINITE


def _pattern_phrase(value: Any, nested: bool) -> str:
    return f"must match the pattern '{value}'"


def _bound_phrase(template: str) -> Callable[[Any, bool], str]:
    def phrase(value: Any, nested: bool) -> str:
        return template.format(_number(value))

    return phrase


_KEYWORD_PHRASES: dict[str, Callable[[Any, bool], str | None]] = {
    "type": _type_phrase,
    **{keyword: _bound_phrase(template) for keyword, template in _JSON_BOUNDS.items()},
    "enum": _enum_phrase,
    "const": _const_phrase,
    FINITE_KEYWORD: _finite_phrase,
    "pattern": _pattern_phrase,
}
"""The phrase for each JSON Schema keyword, from its value and whether the path is nested.

None from a phrase (an ``enum`` that is not a list) and keywords not listed
fall back to jsonschema's own message without the value it echoes.
"""


def _search(pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False


def _number(value: Any) -> Any:
    """``1.0`` as ``1``, so bounds read as the author wrote them; other values unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _literal(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value)


def _strip_instance(message: str) -> str:
    """jsonschema messages start with the offending value; keep the part after it."""
    for marker in (" is not ", " is too ", " does not ", " should not ", " has non-unique "):
        head, sep, tail = message.partition(marker)
        if sep and head:
            return sep.strip() + " " + tail
    return message


def jsonschema_phrases(error: JsonSchemaValidationError) -> list[str]:
    """The problem phrases of one jsonschema error (for callers that keep only some errors)."""
    return [phrase for _, phrase, _ in _jsonschema_problems(error, [str(p) for p in error.absolute_path])]
