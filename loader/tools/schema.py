"""JSON Schema for a tool's input (and output), built with pydantic.

A function's parameters become a pydantic model (``create_model``), built once
at decoration time: the model validates every call and its
``model_json_schema()``, cleaned by ``clean_schema``, is what the model sees.

The cleaned schema has the shape Strands' ``@tool`` produces
(``{"type": "object", "properties": ..., "required": [...]}``, no ``title``
keys, no top-level ``additionalProperties``, ``required`` omitted when empty,
a ``description`` on every parameter) without its losses: ``Optional`` keeps
its ``null`` branch, ``dict[str, X]`` keeps ``additionalProperties``, and
``Annotated[..., Field(...)]`` constraints are kept. Nested models and
dataclasses stay in ``$defs`` behind ``$ref`` (as pydantic emits them, which
also handles recursive models); enums are inlined as ``enum`` so a parameter
reads in one place.

Parameter descriptions, first found wins: ``Field(description=...)`` (in
``Annotated`` or as the default) or a string in ``Annotated``, then the
docstring, then ``"Parameter <name>"``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import logging
import math
import sys
import types
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, get_args, get_origin

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, JsonSchemaWarningKind
from pydantic_core import core_schema

from ..errors import ToolSignatureError
from ..types import JSONSchema
from .input_cache import LruCache, signature_key
from .validation import ALLOW_NON_FINITE

__all__ = [
    "InputModel",
    "build_input_model",
    "caller_namespace",
    "clean_schema",
    "copy_json",
    "model_input_schema",
    "output_schema",
    "parameter_description",
    "resolve_return_hint",
    "resolve_type_hints",
]

logger = logging.getLogger(__name__)

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
    }
)
_DEFS_PREFIX = "#/$defs/"
# Parameter names pydantic cannot use as field names; they get an alias instead.
_RESERVED_FIELD_NAMES = frozenset(dir(BaseModel)) | {"model_config"}


class _QuietJsonSchema(GenerateJsonSchema):
    """Logs pydantic's JSON-schema warnings (e.g. an unserialisable default) instead of warning.

    Also skips two costs pydantic pays for every schema (together 5 to 15% of
    building a tool, the more defaults the more): the table from core schema
    type to method is looked up by name once per class, not per generator, and
    JSON scalar defaults are written as they are instead of through a new
    ``TypeAdapter`` (which returns them unchanged).
    """

    _methods: ClassVar[dict[str, Callable[..., Any]] | None] = None

    def emit_warning(self, kind: JsonSchemaWarningKind, detail: str) -> None:
        logger.debug("kind=<%s>, detail=<%s> | json schema generation note", kind, detail)

    def build_schema_type_to_method(self) -> dict[Any, Callable[[Any], JsonSchemaValue]]:
        """Pydantic's table, with the method lookups done once for the class."""
        cls = type(self)
        methods = cls.__dict__.get("_methods")
        if methods is None:
            table = super().build_schema_type_to_method()
            functions: dict[str, Callable[..., Any]] = {}
            for key, bound in table.items():
                if not isinstance(bound, types.MethodType) or bound.__self__ is not self:
                    return table  # not plain methods: nothing safe to reuse
                functions[key] = bound.__func__
            cls._methods = functions
            return table
        return {key: types.MethodType(function, self) for key, function in methods.items()}

    def float_schema(self, schema: core_schema.FloatSchema) -> JsonSchemaValue:
        """Pydantic's, plus ``allowNonFinite`` where the field allows NaN and infinities."""
        json_schema = super().float_schema(schema)
        if schema.get("allow_inf_nan") is True:
            json_schema[ALLOW_NON_FINITE] = True
        return json_schema

    def encode_default(self, dft: Any) -> Any:
        """A JSON scalar as is; anything else as pydantic encodes it."""
        kind = type(dft)
        if kind is str or kind is int or kind is bool or dft is None:
            return dft
        if kind is float and math.isfinite(dft):
            return dft
        return super().encode_default(dft)


@dataclass(frozen=True, slots=True)
class InputModel:
    """A function's parameters as a pydantic model plus its cleaned JSON Schema.

    Attributes:
        model: Validates the input of a call (``extra="forbid"``).
        json_schema: The cleaned schema for the tool spec.
        renamed: Model field name → parameter name, only for parameters that needed an alias
            (leading underscore, or a name ``BaseModel`` already uses, such as ``json``).
    """

    model: type[BaseModel]
    json_schema: JSONSchema
    renamed: Mapping[str, str]


_BUILT: LruCache[Hashable, InputModel] = LruCache(maxsize=256)
"""Input models by signature (``loader.input_cache``); a few hundred cover a folder's repeated ones."""


def caller_namespace() -> dict[str, Any] | None:
    """The local names of the code that called our caller, when it is a function or class body.

    ``@tool`` calls this at decoration time: a tool defined inside a function
    may annotate with names local to it (a model, ``Field``), which the
    function's ``__globals__`` do not hold. This is what pydantic's
    ``validate_call`` does (``_typing_extra.parent_frame_namespace``): module
    level gives None (its locals are the globals), and the names are those
    bound when the decorator runs. A copy, so later rebinding changes nothing.
    """
    frame = sys._getframe(2)
    if frame.f_back is None or frame.f_code.co_name == "<module>":
        return None
    return dict(frame.f_locals)


def resolve_type_hints(
    function_name: str,
    func: Callable[..., Any],
    parameters: Sequence[inspect.Parameter],
    namespace: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The evaluated annotations of ``parameters`` (string annotations resolved, ``Annotated`` kept).

    Names are looked up in ``namespace`` (the defining body's locals, see
    ``caller_namespace``), then in the function's globals. Only the given
    parameters are resolved, so an unresolvable return annotation (a class
    naming itself in its own body) does not matter here.

    Raises:
        ToolSignatureError: An annotation names something that cannot be resolved.
    """
    annotations = {p.name: p.annotation for p in parameters if p.annotation is not inspect.Parameter.empty}
    if not annotations:
        return {}
    globalns = getattr(inspect.unwrap(func), "__globals__", {})
    hints: dict[str, Any] = {}
    for name, annotation in annotations.items():
        try:
            hints[name] = _evaluate(annotation, globalns, namespace)
        except Exception as exc:
            raise ToolSignatureError(
                f"Function {function_name!r}: cannot resolve the annotation {annotation!r} of parameter "
                f"{name!r} ({type(exc).__name__}: {exc}); import the type where the function is defined",
                function=function_name,
                parameter=name,
            ) from exc
    return hints


def resolve_return_hint(
    func: Callable[..., Any],
    signature: inspect.Signature | None = None,
    namespace: Mapping[str, Any] | None = None,
) -> Any:
    """The evaluated return annotation, or None when absent or unresolvable.

    Pass ``signature`` when the caller has already read it, to save reading it
    again, and ``namespace`` as for ``resolve_type_hints``.
    """
    try:
        annotation = (signature or inspect.signature(func)).return_annotation
    except (TypeError, ValueError):
        return None
    if annotation is inspect.Signature.empty:
        return None
    try:
        return _evaluate(annotation, getattr(inspect.unwrap(func), "__globals__", {}), namespace)
    except Exception as exc:
        logger.debug("annotation=<%r>, error=<%s> | return annotation not resolvable", annotation, exc)
        return None


def _evaluate(annotation: Any, globalns: dict[str, Any], localns: Mapping[str, Any] | None) -> Any:
    holder = types.SimpleNamespace(__annotations__={"value": annotation})
    local = None if localns is None else dict(localns)
    return typing.get_type_hints(holder, globalns=globalns, localns=local, include_extras=True)["value"]


def parameter_description(annotation: Any, default: Any) -> str | None:
    """The description written next to a parameter (``Annotated`` string or ``Field(description=)``)."""
    found: str | None = None
    if get_origin(annotation) is Annotated:
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, str):
                found = meta
            elif isinstance(meta, FieldInfo) and meta.description:
                found = meta.description
    if isinstance(default, FieldInfo) and default.description:
        found = default.description
    return found


def build_input_model(
    function_name: str,
    parameters: Sequence[inspect.Parameter],
    hints: Mapping[str, Any],
    doc_params: Mapping[str, str],
) -> InputModel:
    """Build the validating model and cleaned JSON Schema for ``parameters``.

    A signature built before (see ``loader.input_cache``) gets that model again,
    with its own copy of the schema: the model's name is the only difference,
    and nothing shows it.

    Raises:
        ToolSignatureError: A parameter's annotation cannot be validated or turned into JSON Schema;
            the message names the function and the parameter.
    """
    key = signature_key(parameters, hints, doc_params)
    cached = None if key is None else _BUILT.get(key)
    if cached is not None:
        return InputModel(cached.model, copy_json(cached.json_schema), dict(cached.renamed))
    built = _model(function_name, *_fields(parameters, hints, doc_params))
    if key is not None:
        _BUILT.put(key, InputModel(built.model, copy_json(built.json_schema), dict(built.renamed)))
    return built


def _fields(
    parameters: Sequence[inspect.Parameter], hints: Mapping[str, Any], doc_params: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The model's field definitions, and the fields renamed from their parameter (``param_0``: ``_x``)."""
    fields: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    taken = {p.name for p in parameters}
    for index, param in enumerate(parameters):
        definition = _field_definition(param, hints.get(param.name, Any), doc_params)
        field_name = param.name
        if param.name.startswith(("_", "model_")) or param.name in _RESERVED_FIELD_NAMES:
            field_name = _free_name(f"param_{index}", taken)
            annotation, info = definition
            definition = (Annotated[annotation, Field(alias=param.name)], info)
            renamed[field_name] = param.name
        fields[field_name] = definition
    return fields, renamed


def _model(function_name: str, fields: dict[str, Any], renamed: dict[str, str]) -> InputModel:
    model_name = f"{function_name[:1].upper()}{function_name[1:]}Input"
    try:
        model = _create_model(model_name, fields)
        schema = model.model_json_schema(schema_generator=_QuietJsonSchema)
    except (PydanticUserError, TypeError, ValueError, NameError) as exc:
        raise _locate_schema_error(function_name, model_name, fields, renamed, exc) from exc
    cleaned = clean_schema(schema)
    cleaned.pop("additionalProperties", None)  # our extra="forbid": Strands shows none either
    return InputModel(model=model, json_schema=cleaned, renamed=renamed)


def _create_model(model_name: str, fields: dict[str, Any]) -> type[BaseModel]:
    model: type[BaseModel] = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    return model


def _field_definition(
    param: inspect.Parameter, annotation: Any, doc_params: Mapping[str, str]
) -> tuple[Any, Any]:
    """``(annotation, FieldInfo)`` for one parameter, with its description resolved."""
    default = param.default
    description = (
        parameter_description(annotation, default) or doc_params.get(param.name) or f"Parameter {param.name}"
    )
    extra: dict[str, Any] = {"description": description}
    if isinstance(default, FieldInfo):
        # Keep the user's Field (default, constraints) whole; only add a description.
        return Annotated[annotation, default], Field(**extra)
    if default is inspect.Parameter.empty:
        return annotation, Field(..., **extra)
    return annotation, Field(default=default, **extra)


def _free_name(base: str, taken: set[str]) -> str:
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _locate_schema_error(
    function_name: str,
    model_name: str,
    fields: Mapping[str, Any],
    renamed: Mapping[str, str],
    error: Exception,
) -> ToolSignatureError:
    """Find the parameter whose annotation broke the model, for an actionable message."""
    for field_name, definition in fields.items():
        try:
            _create_model(model_name, {field_name: definition}).model_json_schema(
                schema_generator=_QuietJsonSchema
            )
        except (PydanticUserError, TypeError, ValueError, NameError) as exc:
            parameter = renamed.get(field_name, field_name)
            return ToolSignatureError(
                f"Function {function_name!r}: parameter {parameter!r} has a type that cannot become JSON "
                f"Schema ({_first_line(exc)}); use JSON-compatible types (str, int, float, bool, list, dict, "
                "Literal, Enum, a pydantic model or a dataclass)",
                function=function_name,
                parameter=parameter,
            )
    return ToolSignatureError(
        f"Function {function_name!r}: its parameters cannot become JSON Schema ({_first_line(error)})",
        function=function_name,
    )


def _first_line(exc: BaseException) -> str:
    """The first sentence of a pydantic error: its advice (config switches, URLs) does not apply here."""
    lines = str(exc).strip().splitlines()
    return lines[0].split(". ")[0].rstrip(".") if lines else type(exc).__name__


def model_input_schema(model: type[BaseModel], doc_params: Mapping[str, str]) -> JSONSchema:
    """The cleaned input schema of a user-supplied model (``input_schema=SomeModel``).

    Top-level properties without a description get the function docstring's, else ``"Parameter <name>"``.
    """
    schema = clean_schema(model.model_json_schema(schema_generator=_QuietJsonSchema))
    for name, prop in schema.get("properties", {}).items():
        if isinstance(prop, dict) and "description" not in prop:
            prop["description"] = doc_params.get(name) or f"Parameter {name}"
    return schema


def output_schema(annotation: Any) -> JSONSchema | None:
    """The cleaned JSON Schema of a return annotation that is a pydantic model, dataclass or TypedDict.

    Anything else (plain types, unions, containers) gives None: those results need no schema.
    """
    target = get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation
    if not isinstance(target, type):
        return None
    structured = (
        issubclass(target, BaseModel) or dataclasses.is_dataclass(target) or typing.is_typeddict(target)
    )
    if not structured:
        return None
    try:
        try:
            schema = _serialization_schema(target)
        except PydanticUserError:
            if not typing.is_typeddict(target):
                raise
            schema = _serialization_schema(_portable_typed_dict(target))
    except (PydanticUserError, TypeError, ValueError, NameError) as exc:
        logger.debug("annotation=<%r>, error=<%s> | no output schema", annotation, exc)
        return None
    return clean_schema(schema)


def _serialization_schema(target: Any) -> JSONSchema:
    return TypeAdapter(target).json_schema(mode="serialization", schema_generator=_QuietJsonSchema)


def _portable_typed_dict(typed_dict: Any) -> Any:
    """A ``typing_extensions`` copy of a ``typing.TypedDict``, which pydantic rejects before Python 3.12."""
    try:
        hints = typing.get_type_hints(typed_dict)
    except Exception:
        return typed_dict
    required = typed_dict.__required_keys__
    fields = {
        key: (typing_extensions.Required[hint] if key in required else typing_extensions.NotRequired[hint])
        for key, hint in hints.items()
    }
    portable: Any = typing_extensions.TypedDict(typed_dict.__name__, fields)  # type: ignore[misc]
    portable.__doc__ = typed_dict.__doc__
    return portable


def clean_schema(schema: JSONSchema) -> JSONSchema:
    """A copy of a pydantic JSON Schema without ``title`` keys and with enums inlined.

    Only schema positions are touched: a property that happens to be named
    ``title`` stays. ``$defs`` entries that are plain enums are inlined where
    referenced (the reference's own keys, such as ``description``, win) and
    dropped; ``$defs`` disappears when nothing is left in it.
    """
    raw_defs = schema.get("$defs")
    enums: dict[str, Any] = {}
    if isinstance(raw_defs, dict):
        enums = {
            _DEFS_PREFIX + name: definition
            for name, definition in raw_defs.items()
            if isinstance(definition, dict) and "enum" in definition and "properties" not in definition
        }
    cleaned = _clean_node(schema, enums)
    defs = cleaned.get("$defs")
    if isinstance(defs, dict):
        for ref in enums:
            defs.pop(ref[len(_DEFS_PREFIX) :], None)
        if not defs:
            del cleaned["$defs"]
    return cleaned  # type: ignore[no-any-return]


def _clean_node(node: Any, enums: Mapping[str, Any]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref in enums:
        merged = dict(enums[ref])
        merged.update((key, value) for key, value in node.items() if key != "$ref")
        node = merged
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _clean_node(sub, enums) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_clean_node(sub, enums) for sub in value]
        elif key in _SCHEMA_ONES:
            out[key] = (
                [_clean_node(sub, enums) for sub in value]
                if isinstance(value, list)
                else _clean_node(value, enums)
            )
        else:
            out[key] = value
    return out


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """A deep copy of a spec or schema, fast for JSON-shaped data.

    Plain dicts and lists are rebuilt and JSON scalars shared; anything else
    (a tuple, a set, a dict subclass in a hand-written schema) goes through
    ``copy.deepcopy``, so the copy never shares anything mutable. Callers ask
    for specs on every listing, where ``copy.deepcopy`` alone costs several times more.
    """
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    if kind in _JSON_SCALARS:
        return value
    return copy.deepcopy(value)
