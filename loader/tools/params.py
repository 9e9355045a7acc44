"""Checking tool input against declared ``ToolParameter`` s, and translating them to JSON Schema.

The checks mirror the reference's ``validateParams``: per parameter, in order,
required, type, pattern (``re.search``, like ``RegExp.test``), ``[min, max]``
for numbers, enum, then recursion into ``items`` and ``properties``. Unknown
parameters are errors, as for function tools. ``None`` counts as "not given", so
a model sending ``null`` for an optional parameter is not punished. A bool is
never a number, and a declared number is never NaN or an infinity (a
``ToolParameter`` has no way to allow them). Problems are ``InputProblem`` s,
worded by ``loader.tools.validation``.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputProblem, ToolValidationError
from ..types import JSONSchema
from .metadata import ToolParameter
from .validation import problem_at

__all__ = [
    "apply_defaults",
    "check_tool_params",
    "definition_problems",
    "parameters_to_json_schema",
    "validate_tool_params",
]

ParameterSpecs = Mapping[str, ToolParameter | Mapping[str, Any]]
"""Declared parameters, as models or as plain dicts validated into models."""


def _at(path: str, problem: str) -> InputProblem:
    return problem_at(path, problem)


def _missing(path: str) -> InputProblem:
    return problem_at(path, "missing required parameter")


def _unexpected(path: str) -> InputProblem:
    return problem_at(path, "unexpected parameter")


def _coerce(parameters: ParameterSpecs) -> dict[str, ToolParameter]:
    return {
        name: spec if isinstance(spec, ToolParameter) else ToolParameter.model_validate(spec)
        for name, spec in parameters.items()
    }


def _join(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    return isinstance(value, dict)


def _check_value(value: Any, param: ToolParameter, path: str, out: list[InputProblem]) -> None:
    """Check one present value; a wrong type stops further checks of that value."""
    if not _type_ok(value, param.type):
        out.append(_at(path, f"must be of type {param.type}"))
        return
    if isinstance(value, float) and not math.isfinite(value):
        out.append(_at(path, "must be a finite number"))
        return
    if param.pattern is not None and re.search(param.pattern, value) is None:
        out.append(_at(path, f"does not match pattern {param.pattern}"))
    if param.min is not None and value < param.min:
        out.append(_at(path, f"must be at least {param.min}"))
    if param.max is not None and value > param.max:
        out.append(_at(path, f"must be at most {param.max}"))
    if param.enum is not None and value not in param.enum:
        choices = ", ".join(str(choice) for choice in param.enum)
        out.append(_at(path, f"must be one of: {choices}"))
    if param.items is not None:
        for index, item in enumerate(value):
            _check_value(item, param.items, _join(path, index), out)
    if param.properties is not None:
        _check_object(value, param.properties, path, out)


def _check_object(
    value: Mapping[str, Any], parameters: Mapping[str, ToolParameter], path: str, out: list[InputProblem]
) -> None:
    for name, param in parameters.items():
        key = _join(path, name)
        if value.get(name) is None:
            if param.required and not param.has_default:
                out.append(_missing(key))
            continue
        _check_value(value[name], param, key, out)
    for name in value:
        if name not in parameters:
            key = _join(path, name)
            out.append(_unexpected(key))


def check_tool_params(params: Any, parameters: ParameterSpecs) -> list[InputProblem]:
    """Every problem with ``params``, each with the dotted path of the parameter it concerns."""
    if not isinstance(params, Mapping):
        return [_not_object(params)]
    out: list[InputProblem] = []
    _check_object(params, _coerce(parameters), "", out)
    return out


def _not_object(params: Any) -> InputProblem:
    return problem_at(None, f"must be a JSON object of named parameters, not {type(params).__name__}")


def validate_tool_params(params: Any, parameters: ParameterSpecs) -> None:
    """Raise when ``params`` breaks ``parameters``, as the reference's ``validateToolParams`` throws.

    Raises:
        ToolValidationError: One line per problem (``Missing required parameter: city``,
            ``Parameter days must be at most 14``); ``.problems`` keeps them with their paths.
    """
    problems = check_tool_params(params, parameters)
    if problems:
        raise ToolValidationError(problems)


def apply_defaults(params: Mapping[str, Any], parameters: ParameterSpecs) -> dict[str, Any]:
    """A copy of ``params`` with declared defaults filled in where a value is absent or None.

    Recurses into object parameters with ``properties``; the caller's dict and
    the declared defaults are never shared with the result.
    """
    specs = _coerce(parameters)
    result = dict(params)
    for name, param in specs.items():
        if result.get(name) is None and param.has_default:
            result[name] = copy.deepcopy(param.default)
        value = result.get(name)
        if param.properties is not None and isinstance(value, Mapping):
            result[name] = apply_defaults(value, param.properties)
    return result


def definition_problems(parameters: ParameterSpecs) -> list[str]:
    """Declared defaults and enum values that the parameter's own rules would reject."""
    out: list[str] = []
    _definition_problems(_coerce(parameters), "", out)
    return out


def _definition_problems(parameters: Mapping[str, ToolParameter], path: str, out: list[str]) -> None:
    for name, param in parameters.items():
        key = _join(path, name)
        if param.has_default and param.default is not None:
            found: list[InputProblem] = []
            _check_value(param.default, param, key, found)
            out.extend(f"parameter {key!r}: default {param.default!r} is invalid: {p.message}" for p in found)
        for choice in param.enum or ():
            if not _type_ok(choice, param.type):
                out.append(f"parameter {key!r}: enum value {choice!r} is not of type {param.type}")
        if param.properties is not None:
            _definition_problems(param.properties, key, out)
        if param.items is not None:
            _definition_problems({"items": param.items}, key, out)


def _parameter_schema(param: ToolParameter) -> JSONSchema:
    schema: JSONSchema = {"type": param.type}
    if param.description:
        schema["description"] = param.description
    if param.has_default:
        schema["default"] = copy.deepcopy(param.default)
    if param.pattern is not None:
        schema["pattern"] = param.pattern
    if param.min is not None:
        schema["minimum"] = param.min
    if param.max is not None:
        schema["maximum"] = param.max
    if param.enum is not None:
        schema["enum"] = list(param.enum)
    if param.items is not None:
        schema["items"] = _parameter_schema(param.items)
    if param.properties is not None:
        schema.update(_object_schema(param.properties.items()))
    return schema


def _object_schema(parameters: Iterable[tuple[str, ToolParameter]]) -> JSONSchema:
    properties: dict[str, JSONSchema] = {}
    required: list[str] = []
    for name, param in parameters:
        properties[name] = _parameter_schema(param)
        if param.required and not param.has_default:
            required.append(name)
    schema: JSONSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def parameters_to_json_schema(parameters: ParameterSpecs) -> JSONSchema:
    """The JSON Schema of an input object with ``parameters`` (``additionalProperties: false``).

    ``min``/``max`` become ``minimum``/``maximum``; a parameter is listed in
    ``required`` when it is required and has no default; ``required`` is left
    out when empty, as older drafts demand a non-empty list.
    """
    return _object_schema(_coerce(parameters).items())
