"""Input validation, in one place: one problem type, one wording, validators compiled once.

Validation itself is done by pydantic (generated or user models) or by
``jsonschema`` (dict input schemas of function, class and module tools); this
module (with ``loader.tools.problems``, which words them) turns either library's errors into the
same ``InputProblem`` s::

    InputProblem(parameter="address.zip", problem="must be a string",
                 message="Parameter address.zip must be a string")

and renders them one short line each, without the libraries' noise (error
URLs, echoed input values, union branch names). Paths are dotted
(``address.zip``, ``items.2``); ``(input)`` stands for the input as a whole in
payloads.

Numbers follow one rule on every path: a bool is never a number (pydantic
would take ``True`` as ``1``), and NaN or an infinity is a number only where
the schema allows it with ``"allowNonFinite": true`` on that number's schema
(pydantic's ``Field(allow_inf_nan=True)`` writes it). JSON itself has neither,
so a value that needs them must say so where the model can read it.

A JSON Schema is checked and compiled once: ``schema_validator`` keeps
validators by the schema's JSON text (key order kept, since errors come out in
schema order).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError as JsonSchemaValidationError
from jsonschema.validators import extend, validator_for  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError, SchemaValidator

from ..errors import InputProblem, ToolDefinitionError, ToolValidationError
from ..results import error_result
from ..types import JSONSchema, ToolResult
from .input_cache import LruCache
from .problems import (
    FINITE_KEYWORD,
    NOT_AN_OBJECT,
    WHOLE_INPUT,
    jsonschema_phrases,
    problem_at,
    problems_from_jsonschema,
    problems_from_pydantic,
)

__all__ = [
    "ALLOW_NON_FINITE",
    "NOT_AN_OBJECT",
    "WHOLE_INPUT",
    "InputProblem",
    "ToolValidationError",
    "checked_input_schema",
    "format_problems",
    "guard_numbers",
    "invalid_input_result",
    "problem_at",
    "problems_from_jsonschema",
    "problems_from_pydantic",
    "problems_payload",
    "schema_problems",
    "schema_validator",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

ALLOW_NON_FINITE = "allowNonFinite"
"""The keyword letting a number be NaN or an infinity: ``{"type": "number", "allowNonFinite": true}``."""

# -- compiled JSON Schemas ------------------------------------------------------------------

_COMPILED: LruCache[str, Any] = LruCache(maxsize=512)
"""Validators by schema JSON text; a folder of tools has a few hundred distinct schemas at most."""
_WITH_FINITE: dict[type, Any] = {}


def _finite_type(base: Callable[..., Iterator[JsonSchemaValidationError]]) -> Callable[..., Any]:
    """The ``type`` keyword, also refusing NaN and infinities for ``number`` unless the schema allows them."""

    def check(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[JsonSchemaValidationError]:
        failed = False
        for error in base(validator, types, instance, schema):
            failed = True
            yield error
        kinds = [types] if isinstance(types, str) else types
        if (
            not failed
            and isinstance(instance, float)
            and not math.isfinite(instance)
            and "number" in kinds
            and schema.get(ALLOW_NON_FINITE) is not True
        ):
            yield JsonSchemaValidationError(f"{instance!r} is not a finite number", validator=FINITE_KEYWORD)

    return check


def _validator_class(schema: Mapping[str, Any]) -> Any:
    """The draft named by ``$schema`` (2020-12 by default), with the number rule added."""
    base = validator_for(schema, default=Draft202012Validator)
    found = _WITH_FINITE.get(base)
    if found is None:
        found = extend(base, validators={"type": _finite_type(base.VALIDATORS["type"])})
        _WITH_FINITE[base] = found
    return found


def schema_validator(schema: Mapping[str, Any]) -> Any:
    """A checked, compiled validator for ``schema``, built once per distinct schema.

    The validator works on its own copy of the schema, so a caller changing
    its dict afterwards changes nothing.

    Raises:
        SchemaError: ``schema`` is not a valid JSON Schema.
    """
    try:
        key = json.dumps(schema)
    except (TypeError, ValueError):
        key = None
    if key is not None:
        cached = _COMPILED.get(key)
        if cached is not None:
            return cached
        schema = json.loads(key)
    cls = _validator_class(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    if key is not None:
        _COMPILED.put(key, validator)
    return validator


def checked_input_schema(schema: JSONSchema, *, tool_name: str) -> Any:
    """Check a user-supplied input schema (Draft 2020-12 unless ``$schema`` says otherwise); its validator.

    Raises:
        ToolDefinitionError: The schema is not a valid JSON Schema, or does not describe an object.
    """
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(
            f"Tool {tool_name!r}: input_schema must be a JSON Schema dict or a pydantic model class, "
            f"got {type(schema).__name__}"
        )
    try:
        validator = schema_validator(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.path) or "(root)"
        raise ToolDefinitionError(
            f"Tool {tool_name!r}: input_schema is not a valid JSON Schema at {where}: {exc.message}"
        ) from exc
    if schema.get("type", "object") != "object":
        raise ToolDefinitionError(
            f"Tool {tool_name!r}: input_schema must describe an object of named parameters "
            f"(type 'object'), got type {schema.get('type')!r}"
        )
    return validator


def schema_problems(data: Any, validator: Any) -> list[InputProblem]:
    """Every problem of ``data`` against a compiled JSON Schema (``schema_validator``)."""
    return problems_from_jsonschema(validator.iter_errors(data))


# -- the number rule for pydantic-validated input ------------------------------------------


def kwargs_validator(model: type[BaseModel], schema: JSONSchema) -> Callable[[Any], dict[str, Any]] | None:
    """``model``'s field validation alone: the keyword arguments as a dict, number rule included.

    The model's own core schema without its instance step: the same fields, config,
    errors and error title, but no model built only for its ``__dict__`` to be read
    (a noticeable share of a simple call). None when the core schema is not the plain
    ``model`` / ``model-fields`` shape this expects (the caller keeps the model).
    """
    core: Any = model.__pydantic_core_schema__
    wrapper = core["schema"] if core.get("type") == "definitions" else core
    if wrapper.get("type") != "model" or wrapper["schema"].get("type") != "model-fields":
        return None
    fields: Any = wrapper["schema"]
    if core is not wrapper:
        fields = {"type": "definitions", "schema": fields, "definitions": core["definitions"]}
    validate = SchemaValidator(fields, wrapper.get("config")).validate_python

    def first(data: Any) -> dict[str, Any]:
        return validate(data)[0]  # type: ignore[no-any-return]

    return guard_numbers(first, schema)


def guard_numbers(validate: Callable[[Any], T], schema: JSONSchema) -> Callable[[Any], T]:
    """``validate`` (a pydantic validator) also refusing bools and unallowed NaN/infinities as numbers.

    pydantic's lax mode takes ``True`` for ``1`` and accepts NaN; the input's
    JSON Schema says where numbers are, so an input holding a bool or a
    non-finite float is also checked against it (compiled on first need), and
    its problems are listed with pydantic's own. The common input, holding
    neither, costs one walk over its values.
    """
    if not _has_numbers(schema):
        return validate
    guarded_schema = dict(schema)

    def checked(data: Any) -> T:
        try:
            result = validate(data)
        except ValidationError as exc:
            extra = _number_errors(data, guarded_schema) if _suspicious(data) else []
            if not extra:
                raise
            raise ValidationError.from_exception_data(exc.title, [*_as_details(exc), *extra]) from None
        if type(data) is dict:  # the common flat input, checked without a call
            for item in data.values():
                if type(item) not in _PLAIN:
                    break
            else:
                return result
        if _suspicious(data):
            errors = _number_errors(data, guarded_schema)
            if errors:
                raise ValidationError.from_exception_data("input", errors)
        return result

    return checked


def _as_details(error: ValidationError) -> list[InitErrorDetails]:
    """pydantic's own errors again, to be raised together with the number rule's (every problem listed)."""
    return [
        {
            "type": PydanticCustomError(detail["type"], detail["msg"], detail.get("ctx")),
            "loc": detail["loc"],
            "input": detail["input"],
        }
        for detail in error.errors(include_url=False)
    ]


def _has_numbers(schema: Any) -> bool:
    """Whether any part of ``schema`` has type ``number`` or ``integer``."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kinds = node.get("type")
            if kinds == "number" or kinds == "integer":
                return True
            if isinstance(kinds, list) and ("number" in kinds or "integer" in kinds):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


_PLAIN = frozenset({int, str, type(None)})


def _suspicious(value: Any) -> bool:
    """Whether ``value`` holds a bool or a non-finite float anywhere (it runs on every call: kept lean)."""
    return _any_suspicious(value.values()) if type(value) is dict else _any_suspicious((value,))


def _any_suspicious(items: Iterable[Any]) -> bool:
    for item in items:
        kind = type(item)
        if kind in _PLAIN:
            continue
        if kind is bool:
            return True
        if kind is float:
            if item - item != 0.0:  # NaN and infinities only
                return True
        elif kind is dict:
            if _any_suspicious(item.values()):
                return True
        elif (kind is list or kind is tuple) and _any_suspicious(item):
            return True
    return False


def _number_errors(data: Any, schema: JSONSchema) -> list[InitErrorDetails]:
    """The schema's complaints about bools and non-finite floats in ``data``, as pydantic line errors."""
    try:
        validator = schema_validator(schema)
    except SchemaError as exc:
        logger.debug("error=<%s> | input schema not checkable for the number rule", exc.message)
        return []
    found: list[InitErrorDetails] = []
    for error in _number_rule_errors(validator.iter_errors(data)):
        for phrase in jsonschema_phrases(error):
            found.append(
                {
                    "type": PydanticCustomError("number_rule", phrase),
                    "loc": tuple(error.absolute_path),
                    "input": error.instance,
                }
            )
    return found


def _number_rule_errors(errors: Iterable[JsonSchemaValidationError]) -> Iterator[JsonSchemaValidationError]:
    """The errors about numbers, looking into the branches of a failed ``anyOf``/``oneOf``."""
    for error in errors:
        if _about_numbers(error):
            yield error
        elif error.context:
            yield from _number_rule_errors(error.context)


def _about_numbers(error: JsonSchemaValidationError) -> bool:
    """A non-finite number, or a bool refused where a number was expected (pydantic coerced it)."""
    if error.validator == FINITE_KEYWORD:
        return True
    return isinstance(error.instance, bool) and error.validator in ("type", "anyOf", "oneOf")


# -- rendering -------------------------------------------------------------------------------


def format_problems(tool_name: str, problems: Sequence[InputProblem], *, sentences: bool = False) -> str:
    """``Invalid input for tool 'x':`` then one line per problem.

    Lines are ``- parameter: problem`` (function and module tools), or each
    problem's whole sentence with ``sentences`` (class tools, as the reference words them).
    """
    if sentences:
        lines = [p.message for p in problems]
    else:
        lines = [f"- {p.parameter or WHOLE_INPUT}: {p.problem}" for p in problems]
    return "\n".join([f"Invalid input for tool '{tool_name}':", *lines])


def problems_payload(problems: Sequence[InputProblem]) -> dict[str, Any]:
    """The ``{"errors": [{"parameter": ..., "problem": ...}]}`` json content of an invalid-input result."""
    return {"errors": [{"parameter": p.parameter or WHOLE_INPUT, "problem": p.problem} for p in problems]}


def invalid_input_result(
    tool_use_id: str, tool_name: str, problems: Sequence[InputProblem], *, sentences: bool = False
) -> ToolResult:
    """An error result: the problems as text lines (see ``format_problems``) and as json content."""
    text = format_problems(tool_name, problems, sentences=sentences)
    return error_result(tool_use_id, text, json_content=problems_payload(problems))
