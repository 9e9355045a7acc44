"""Describing a tool class: ``@tool`` on a class attaches validated metadata and, if missing, ``validate``.

A decorated class stays an ordinary class (it can be subclassed and
instantiated); decoration only attaches a validated ``ToolMetadata`` as
``__tool_metadata__`` and, when the class has no ``validate``, a generated
one, which raises ``ToolValidationError`` on invalid input as the reference's
does (``Parameter days must be at most 14``). Everything is checked now, so a
broken tool class fails at decoration time, naming the class and the parameter.
Running a tool class is ``loader.tools.class_tool``'s job.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Unpack

from pydantic import ValidationError

from ..errors import InputProblem, InvalidToolNameError, ToolDefinitionError, ToolValidationError
from ..names import is_valid_tool_name
from ..types import JSONSchema
from .metadata import ToolMetadata
from .options import ClassKeywords, ToolOptions, options_of
from .params import check_tool_params, definition_problems
from .validation import NOT_AN_OBJECT, problem_at, schema_problems, schema_validator

__all__ = [
    "METADATA_ATTR",
    "build_metadata",
    "declared_metadata",
    "decorate_class",
    "decorate_class_with",
    "input_checker",
    "is_generated_validate",
]

logger = logging.getLogger(__name__)

METADATA_ATTR = "__tool_metadata__"


def declared_metadata(cls: type) -> ToolMetadata | None:
    """The ``ToolMetadata`` ``cls`` (or a base class) was decorated with; None if none."""
    found = getattr(cls, METADATA_ATTR, None)
    return found if isinstance(found, ToolMetadata) else None


def is_generated_validate(function: Any) -> bool:
    """Whether ``function`` is the ``validate`` decoration added (the declared checks, which run anyway)."""
    return function is _generated_validate


def _snake_case(name: str) -> str:
    """``WeatherTool`` → ``weather_tool``, ``HTTPClient`` → ``http_client``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _generated_validate(self: Any, params: Any) -> None:
    """Check ``params`` against the declared parameters of this instance's tool class.

    Raises:
        ToolValidationError: One line per problem, as the reference's ``validate`` throws.
    """
    metadata = declared_metadata(type(self))
    if metadata is None:
        return
    problems = input_checker(metadata)(params)
    if problems:
        raise ToolValidationError(problems)


def input_checker(metadata: ToolMetadata) -> Callable[[Any], list[InputProblem]]:
    """What validates input: the explicit input schema (compiled once), else the declared parameters."""
    schema = metadata.input_json_schema
    if schema is None:
        parameters = metadata.parameters
        return lambda params: check_tool_params(params, parameters)
    validator = schema_validator(schema)

    def check(params: Any) -> list[InputProblem]:
        if not isinstance(params, Mapping):
            return [problem_at(None, NOT_AN_OBJECT)]
        return schema_problems(params, validator)

    return check


def _describe_location(loc: tuple[str | int, ...]) -> str:
    """A pydantic error location as ``parameter 'address.zip' field 'min'``."""
    if not loc:
        return "metadata"
    if loc[0] != "parameters" or len(loc) < 2:
        return "field " + ".".join(str(part) for part in loc)
    path = [str(loc[1])]
    rest = list(loc[2:])
    while rest:
        if rest[0] == "properties" and len(rest) >= 2:
            path.append(str(rest[1]))
            rest = rest[2:]
        elif rest[0] == "items":
            path.append("items")
            rest = rest[1:]
        else:
            break
    where = f"parameter {'.'.join(path)!r}"
    return where + (f" field {'.'.join(str(part) for part in rest)!r}" if rest else "")


def _explain(error: Mapping[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    if error["type"] == "literal_error" and error["loc"][-1:] == ("type",):
        return f"unknown type {error['input']!r}; use one of {ctx.get('expected', '')}"
    if isinstance(ctx.get("error"), Exception):
        return str(ctx["error"])
    return str(error["msg"])


def _definition_error(owner: str, exc: ValidationError, data: Mapping[str, Any]) -> ToolDefinitionError:
    """Turn pydantic's report into one error that names the tool and each bad parameter."""
    errors = exc.errors()
    name = data.get("name")
    if any(tuple(err["loc"]) == ("name",) for err in errors) and isinstance(name, str):
        if not is_valid_tool_name(name):
            bad_name = InvalidToolNameError(name)
            bad_name.args = (f"{owner}: {bad_name.args[0]}",)
            return bad_name
    parts = [f"{_describe_location(tuple(err['loc']))}: {_explain(err)}" for err in errors]
    return ToolDefinitionError(f"{owner}: invalid tool metadata: " + "; ".join(parts))


def build_metadata(
    owner: str, base: ToolMetadata | Mapping[str, Any] | None, overrides: dict[str, Any]
) -> ToolMetadata:
    """Validate metadata (base fields overridden by keyword arguments) into a ``ToolMetadata``."""
    if isinstance(base, ToolMetadata):
        data: dict[str, Any] = {field: getattr(base, field) for field in base.model_fields_set}
    else:
        data = dict(base or {})
    data.update({key: value for key, value in overrides.items() if value is not None})
    try:
        metadata = ToolMetadata.model_validate(data)
    except ValidationError as exc:
        raise _definition_error(owner, exc, data) from None
    problems = definition_problems(metadata.parameters)
    if problems:
        raise ToolDefinitionError(f"{owner}: invalid tool metadata: " + "; ".join(problems))
    return metadata


def _check_execute(cls: type) -> None:
    raw = inspect.getattr_static(cls, "execute", None)
    if raw is None or not callable(getattr(cls, "execute", None)):
        raise ToolDefinitionError(
            f"Tool class {cls.__qualname__!r} has no execute method; define `def execute(self, params)` "
            "(sync or async) that runs the tool"
        )
    if inspect.isfunction(raw):
        signature = inspect.signature(raw)
        extra = {"tool_context": None} if "tool_context" in signature.parameters else {}
        try:
            signature.bind(object(), {}, **extra)
        except TypeError as exc:
            raise ToolDefinitionError(
                f"Tool class {cls.__qualname__!r}: execute must accept (self, params) "
                f"or (self, params, tool_context): {exc}"
            ) from None


def decorate_class(
    cls: type,
    metadata: ToolMetadata | None = None,
    *,
    output_schema: JSONSchema | None = None,
    **keywords: Unpack[ClassKeywords],
) -> type:
    """Attach validated tool metadata to ``cls`` and return ``cls`` itself (``@tool`` on a class).

    The keywords are the class-tool options of ``@tool`` (see ``decorate_class_with``),
    plus ``output_schema``.
    """
    options = options_of(keywords, ClassKeywords, "decorate_class")
    return decorate_class_with(cls, metadata, options, output_schema=output_schema)


def decorate_class_with(
    cls: type,
    metadata: ToolMetadata | None,
    options: ToolOptions,
    *,
    output_schema: JSONSchema | None = None,
) -> type:
    """Attach tool metadata built from ``metadata`` overridden by the given ``options``; return ``cls``.

    The name defaults to the class name in snake_case; the description to the
    cleaned class docstring, else to the name (logged, since models choose
    tools by their description). Function-only options are ignored here
    (``@tool`` refuses them for classes).

    Raises:
        ToolDefinitionError: No ``execute``, or invalid metadata (the message
            names the class and the parameter).
        InvalidToolNameError: The name is outside ``^[A-Za-z0-9_-]{1,64}$``.
    """
    if not isinstance(cls, type):
        raise ToolDefinitionError(f"decorate_class expects a class, got {type(cls).__name__}")
    owner = f"Tool class {cls.__qualname__!r}"
    _check_execute(cls)
    name, description = options.name, options.description
    overrides: dict[str, Any] = {
        "name": name,
        "description": description,
        "parameters": options.parameters,
        "version": options.version,
        "category": options.category,
        "tags": options.tags,
        "requires_auth": options.requires_auth,
        "rate_limit": options.rate_limit,
        "examples": options.examples,
        "search_hint": options.search_hint,
        "always_load": options.always_load or None,
    }
    if options.input_schema is not None or output_schema is not None:
        overrides["schema"] = {"input_json_schema": options.input_schema, "output_json_schema": output_schema}
    if metadata is None:
        overrides["name"] = name or _snake_case(cls.__name__)
    if description is None and (metadata is None or not metadata.description):
        doc = cls.__dict__.get("__doc__")
        if isinstance(doc, str) and doc.strip():
            overrides["description"] = inspect.cleandoc(doc)
        else:
            overrides["description"] = overrides["name"] or (metadata.name if metadata else None)
    built = build_metadata(owner, metadata, overrides)
    if built.description == built.name:
        logger.warning("tool_name=<%s> | no description or docstring; using the tool name", built.name)
    setattr(cls, METADATA_ATTR, built)
    if getattr(cls, "validate", None) is None:
        cls.validate = _generated_validate  # type: ignore[attr-defined]
    logger.debug("tool_name=<%s>, tool_class=<%s> | decorated tool class", built.name, cls.__qualname__)
    return cls
