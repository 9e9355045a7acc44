"""Working out a function tool's definition: names, checked signature, input handling, spec.

Everything about a ``FunctionTool`` that does not change between calls is
decided here, once, when the tool is created, and kept in a frozen
``FunctionDefinition`` (shared with the bound copies made for methods).
Mistakes surface now, as ``ToolDefinitionError``/``ToolSignatureError``, not on
the first call.

* A parameter named ``agent`` is filled from ``invocation_state["agent"]`` and
  left out of the schema, as in Strands.
* ``input_schema=`` as a dict is checked (Draft 2020-12) here and validates
  each call with ``jsonschema``; the values reach the function as they are (no
  coercion), and ``**kwargs`` is allowed. As a pydantic model, the function
  receives the instance when its only parameter is annotated with that model,
  else the fields as keyword arguments; a model that does not set ``extra``
  itself rejects unknown parameters (it is validated through a subclass with
  ``extra="forbid"``).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import importlib.machinery
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel

from ..context.tool_context import ToolContext
from ..errors import ToolDefinitionError, ToolSignatureError
from ..names import check_tool_name
from ..types import JSONSchema, ToolExample, ToolSpec
from .docstrings import docstring_of
from .examples import parse_examples
from .options import ToolOptions
from .schema import (
    build_input_model,
    model_input_schema,
    output_schema,
    resolve_return_hint,
    resolve_type_hints,
)
from .validation import checked_input_schema, guard_numbers, kwargs_validator

__all__ = ["AGENT_PARAMETER", "FunctionDefinition", "FunctionKind", "InputMode", "define_function"]

AGENT_PARAMETER = "agent"
"""A parameter of this name receives ``invocation_state["agent"]`` and stays out of the schema."""

_CONTEXT_DEFAULT = "tool_context"
_BOUND_SLOTS = ("self", "cls")
_STARS: dict[Any, str] = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
_BYTECODE_SUFFIXES = (
    *importlib.machinery.DEBUG_BYTECODE_SUFFIXES,
    *importlib.machinery.OPTIMIZED_BYTECODE_SUFFIXES,
    *importlib.machinery.EXTENSION_SUFFIXES,
)


class FunctionKind(enum.Enum):
    """How the function runs: plain, ``async``, generator or async generator."""

    FUNCTION = "function"
    COROUTINE = "coroutine"
    GENERATOR = "generator"
    ASYNC_GENERATOR = "async_generator"


class InputMode(enum.Enum):
    """How a call's validated input becomes the function's arguments."""

    SIGNATURE = "signature"  # model generated from the signature; kwargs from its fields
    MODEL_FIELDS = "model_fields"  # input_schema=Model; kwargs from the model's fields
    MODEL_INSTANCE = "model_instance"  # input_schema=Model; one parameter receives the instance
    JSON = "json"  # input_schema={...}; validated JSON values passed as kwargs


@dataclass(frozen=True, slots=True)
class FunctionDefinition:
    """Everything about a tool that does not change between calls."""

    name: str
    function_name: str
    spec: ToolSpec
    kind: FunctionKind
    mode: InputMode
    validate: Callable[[Any], BaseModel] | None
    json_validator: Draft202012Validator | None
    renamed: Mapping[str, str]
    positional: tuple[str, ...]
    instance_parameter: str | None
    context_parameter: str | None
    agent_parameter: bool
    agent_default: Any
    raise_errors: bool
    category: str | None
    tags: tuple[str, ...]
    source_file: str | None
    source_line: int | None
    simple: bool  # a call is just ``func(**validated.__dict__)``: the fast path
    examples: tuple[ToolExample, ...] = ()
    search_hint: str | None = None
    always_load: bool = False
    validate_kwargs: Callable[[Any], dict[str, Any]] | None = None
    """``SIGNATURE`` mode: the validated input as the function's keyword arguments, no model built."""


def define_function(
    func: Callable[..., Any], options: ToolOptions, *, namespace: Mapping[str, Any] | None = None
) -> FunctionDefinition:
    """Work out everything about a tool once: names, checked signature, input handling, spec.

    ``namespace`` holds the names local to where the function was defined
    (see ``loader.tools.schema.caller_namespace``), for its annotations.
    """
    name, description, input_schema = options.name, options.description, options.input_schema
    function_name, tool_name = _names(func, name)
    kind = _kind_of(func)
    json_schema_given = input_schema is not None and not _is_model_class(input_schema)
    signature = _signature(func, function_name)
    parameters = _parameters(signature, function_name, allow_var_keyword=json_schema_given)
    context_parameter = _context_parameter(function_name, parameters, options.context)
    agent_param = next(
        (p for p in parameters if p.name == AGENT_PARAMETER and p.name != context_parameter), None
    )
    schema_params = [
        p
        for p in parameters
        if p.name not in (context_parameter, AGENT_PARAMETER) and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    positional = tuple(p.name for p in schema_params if p.kind is inspect.Parameter.POSITIONAL_ONLY)
    doc = docstring_of(func)
    handling = _input_handling(
        func, function_name, tool_name, input_schema, parameters, schema_params, doc.params, namespace
    )

    spec: ToolSpec = {
        "name": tool_name,
        "description": description if description is not None else (doc.description or function_name),
        "inputSchema": {"json": handling.schema},
    }
    if kind in (FunctionKind.FUNCTION, FunctionKind.COROUTINE):
        output = output_schema(resolve_return_hint(func, signature, namespace))
        if output is not None:
            spec["outputSchema"] = {"json": output}

    source_file, source_line = _source_of(func)
    agent_default = None
    if agent_param is not None and agent_param.default is not inspect.Parameter.empty:
        agent_default = agent_param.default
    return FunctionDefinition(
        name=tool_name,
        function_name=function_name,
        spec=spec,
        kind=kind,
        mode=handling.mode,
        validate=handling.validate,
        json_validator=handling.json_validator,
        renamed=handling.renamed,
        positional=positional,
        instance_parameter=handling.instance_parameter,
        context_parameter=context_parameter,
        agent_parameter=agent_param is not None,
        agent_default=agent_default,
        raise_errors=options.raise_errors,
        category=options.category,
        tags=_tags(options.tags),
        source_file=source_file,
        source_line=source_line,
        simple=(
            handling.mode is InputMode.SIGNATURE
            and not handling.renamed
            and not positional
            and context_parameter is None
            and agent_param is None
        ),
        examples=parse_examples(options.examples, f"@tool function {function_name} (tool {tool_name!r})"),
        search_hint=options.search_hint,
        always_load=bool(options.always_load),
        validate_kwargs=handling.validate_kwargs,
    )


def _names(func: Callable[..., Any], name: str | None) -> tuple[str, str]:
    """The function's name and the tool's name (checked by ``loader.names.check_tool_name``)."""
    if not callable(func):
        raise ToolDefinitionError(f"@tool needs a function, got {type(func).__name__}")
    function_name = getattr(func, "__name__", None)
    if not isinstance(function_name, str):
        if name is None:
            raise ToolDefinitionError(f"{func!r} has no __name__: pass name= to @tool")
        function_name = name
    return function_name, check_tool_name(function_name if name is None else name)


def _signature(func: Callable[..., Any], function_name: str) -> inspect.Signature:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolSignatureError(
            f"Function {function_name!r}: cannot read its signature ({exc})", function=function_name
        ) from exc


def _parameters(
    signature: inspect.Signature, function_name: str, *, allow_var_keyword: bool
) -> list[inspect.Parameter]:
    """The parameters a call fills (an unbound method's ``self``/``cls`` left out), checked."""
    parameters = list(signature.parameters.values())
    positional_kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if parameters and parameters[0].name in _BOUND_SLOTS and parameters[0].kind in positional_kinds:
        parameters = parameters[1:]  # an unbound method: ``__get__`` fills it
    for param in parameters:
        star = _STARS.get(param.kind)
        if star == "*" or (star == "**" and not allow_var_keyword):
            raise ToolSignatureError(
                f"Function {function_name!r}: parameter '{star}{param.name}' is not supported in a tool; "
                "declare each parameter by name (a model needs a fixed schema)",
                function=function_name,
                parameter=param.name,
            )
    return parameters


@dataclass(frozen=True, slots=True)
class _InputHandling:
    mode: InputMode
    schema: JSONSchema
    validate: Callable[[Any], BaseModel] | None = None
    json_validator: Draft202012Validator | None = None
    renamed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    instance_parameter: str | None = None
    validate_kwargs: Callable[[Any], dict[str, Any]] | None = None


def _input_handling(
    func: Callable[..., Any],
    function_name: str,
    tool_name: str,
    input_schema: JSONSchema | type[BaseModel] | None,
    parameters: list[inspect.Parameter],
    schema_params: list[inspect.Parameter],
    doc_params: Mapping[str, str],
    namespace: Mapping[str, Any] | None,
) -> _InputHandling:
    """How a call's input is validated and turned into arguments, and the schema shown for it."""
    if input_schema is None:
        hints = resolve_type_hints(function_name, func, schema_params, namespace)
        built = build_input_model(function_name, schema_params, hints, doc_params)
        return _InputHandling(
            mode=InputMode.SIGNATURE,
            schema=built.json_schema,
            validate=guard_numbers(built.model.__pydantic_validator__.validate_python, built.json_schema),
            renamed=built.renamed,
            validate_kwargs=kwargs_validator(built.model, built.json_schema),
        )
    if _is_model_class(input_schema):
        model = cast(type[BaseModel], input_schema)
        mode, instance_parameter = _model_mode(function_name, func, model, schema_params, namespace)
        strict_model = _forbid_extra(model)
        schema = model_input_schema(strict_model, doc_params)
        if strict_model is not model:
            schema.pop("additionalProperties", None)
        return _InputHandling(
            mode=mode,
            schema=schema,
            validate=guard_numbers(strict_model.__pydantic_validator__.validate_python, schema),
            instance_parameter=instance_parameter,
        )
    raw = cast(JSONSchema, input_schema)
    if isinstance(raw, Mapping) and set(raw) == {"json"} and isinstance(raw["json"], Mapping):
        raw = cast(JSONSchema, raw["json"])  # the Bedrock wrapper {"json": schema}
    json_validator = checked_input_schema(raw, tool_name=tool_name)
    _check_schema_covers(function_name, raw, parameters, schema_params)
    return _InputHandling(mode=InputMode.JSON, schema=copy.deepcopy(dict(raw)), json_validator=json_validator)


def _kind_of(func: Callable[..., Any]) -> FunctionKind:
    if inspect.isasyncgenfunction(func):
        return FunctionKind.ASYNC_GENERATOR
    if inspect.iscoroutinefunction(func):
        return FunctionKind.COROUTINE
    if inspect.isgeneratorfunction(func):
        return FunctionKind.GENERATOR
    return FunctionKind.FUNCTION


def _is_model_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _context_parameter(
    function_name: str, parameters: list[inspect.Parameter], context: bool | str
) -> str | None:
    """The parameter receiving the ``ToolContext``, checked against the signature."""
    if context is True:
        wanted: str | None = _CONTEXT_DEFAULT
    elif context is False or context is None:
        wanted = None
    elif isinstance(context, str):
        wanted = context.strip()
        if not wanted:
            raise ToolDefinitionError(
                f"Function {function_name!r}: context= must be True or a parameter name"
            )
    else:
        raise ToolDefinitionError(
            f"Function {function_name!r}: context= must be True, False or a parameter name, got {context!r}"
        )
    names = {p.name for p in parameters}
    if wanted is not None and wanted not in names:
        hint = f"add a parameter '{wanted}: ToolContext'"
        if context is True:
            hint += " or pass context='<parameter name>'"
        raise ToolSignatureError(
            f"Function {function_name!r} has no parameter {wanted!r} to receive the ToolContext; {hint}",
            function=function_name,
            parameter=wanted,
        )
    for param in parameters:
        if param.name != wanted and _annotated_as_context(param.annotation):
            raise ToolSignatureError(
                f"Function {function_name!r}: parameter {param.name!r} is annotated ToolContext but "
                f"@tool(context=...) does not name it; use @tool(context={param.name!r})"
                + (" or @tool(context=True)" if param.name == _CONTEXT_DEFAULT else ""),
                function=function_name,
                parameter=param.name,
            )
    return wanted


def _annotated_as_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    return isinstance(annotation, str) and annotation.rsplit(".", 1)[-1] == "ToolContext"


def _model_mode(
    function_name: str,
    func: Callable[..., Any],
    model: type[BaseModel],
    params: list[inspect.Parameter],
    namespace: Mapping[str, Any] | None,
) -> tuple[InputMode, str | None]:
    """Whether the function takes the model instance (one parameter of that type) or its fields."""
    if len(params) == 1:
        try:
            hint = resolve_type_hints(function_name, func, params, namespace).get(params[0].name)
        except ToolSignatureError:
            hint = None
        if isinstance(hint, type) and issubclass(model, hint) and hint is not object:
            return InputMode.MODEL_INSTANCE, params[0].name
    names = {p.name for p in params}
    fields = set(model.model_fields)
    for field in model.model_fields:
        if field not in names:
            raise ToolSignatureError(
                f"Function {function_name!r}: input_schema model {model.__name__} has field {field!r} "
                "but the function has no such parameter "
                f"(or give it one parameter annotated {model.__name__})",
                function=function_name,
                parameter=field,
            )
    for param in params:
        if param.default is inspect.Parameter.empty and param.name not in fields:
            raise ToolSignatureError(
                f"Function {function_name!r}: required parameter {param.name!r} is not a field of "
                f"input_schema model {model.__name__}",
                function=function_name,
                parameter=param.name,
            )
    return InputMode.MODEL_FIELDS, None


def _forbid_extra(model: type[BaseModel]) -> type[BaseModel]:
    """The model itself if it sets ``extra``; else a subclass rejecting unknown parameters."""
    if model.model_config.get("extra") is not None:
        return model
    config = dict(model.model_config)
    config["extra"] = "forbid"
    namespace = {"model_config": config, "__module__": model.__module__, "__doc__": model.__doc__}
    return cast(type[BaseModel], type(model.__name__, (model,), namespace))


def _check_schema_covers(
    function_name: str,
    schema: Mapping[str, Any],
    parameters: list[inspect.Parameter],
    schema_params: list[inspect.Parameter],
) -> None:
    """A dict ``input_schema`` must provide every required parameter and nothing the function refuses."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    names = {p.name for p in schema_params}
    for param in schema_params:
        if param.default is inspect.Parameter.empty and param.name not in properties:
            raise ToolSignatureError(
                f"Function {function_name!r}: required parameter {param.name!r} is missing from input_schema "
                "properties",
                function=function_name,
                parameter=param.name,
            )
    if not takes_any:
        for prop in properties:
            if prop not in names:
                raise ToolSignatureError(
                    f"Function {function_name!r}: input_schema property {prop!r} is not a parameter of the "
                    "function (add it, or a **kwargs parameter)",
                    function=function_name,
                    parameter=str(prop),
                )


def _tags(tags: Iterable[str] | None) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str):
        return (tags,)
    return tuple(str(tag) for tag in tags)


def _source_of(func: Callable[..., Any]) -> tuple[str | None, int | None]:
    """The file and first line of the function's definition.

    ``inspect.getsourcefile`` answers the code's own file name for anything but
    a bytecode file name (and costs a ``stat``, or a walk over ``sys.modules``
    when the file is gone), so it is only asked about those.
    """
    target = inspect.unwrap(func)
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is None:
        return None, None
    filename = code.co_filename
    if not filename.endswith(_BYTECODE_SUFFIXES):
        return filename, code.co_firstlineno
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        path = None
    return path or filename, code.co_firstlineno
