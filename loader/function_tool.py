"""``FunctionTool``: the ``AgentTool`` made from a plain Python function.

Everything that can be worked out ahead of time (name, spec, the validating
model, how to call the function) is worked out once, when the tool is
created, and kept in a frozen ``_Definition`` shared with bound copies made for
methods. A call then only validates, calls and maps the result.

Calling conventions:

* ``invoke`` on a sync function or sync generator runs on the calling thread:
  no event loop, no thread. Async functions and async generators go through
  ``loader.types.run_sync``.
* ``ainvoke`` and ``stream`` run a sync function directly on the event loop's
  thread too (a slow sync tool blocks that loop; callers that mind check
  ``is_async`` and use a thread themselves).
* Generators: every yielded value is a stream event, yielded by ``stream``
  as-is. The result is the generator's ``return`` value when it returns one
  (not None), else its last yielded value (async generators cannot return a
  value, so for them it is always the last yield). ``stream`` yields the
  final ``ToolResult`` last.
* Invalid input never reaches the function: the call returns an error result
  listing each problem (see ``loader.validation``), even with
  ``raise_errors=True``, which only concerns exceptions raised by the tool.
* A parameter named ``agent`` is filled from ``invocation_state["agent"]`` and
  left out of the schema, as in Strands.
* ``input_schema=`` as a dict is checked (Draft 2020-12) at creation and
  validates each call with ``jsonschema``; the values reach the function as
  they are (no coercion), and ``**kwargs`` is allowed. As a pydantic model, the
  function receives the instance when its only parameter is annotated with
  that model, else the fields as keyword arguments; a model that does not set
  ``extra`` itself rejects unknown parameters (it is validated through a
  subclass with ``extra="forbid"``).
* ``tool_spec`` is built once; every access returns a deep copy, so a caller
  (Strands' registry normalises specs in place) cannot change the tool's.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import logging
import os
import re
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar, cast, overload

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from .docstrings import docstring_of
from .errors import InvalidToolNameError, ToolDefinitionError, ToolSignatureError
from .results import error_result, to_tool_result
from .schema import (
    build_input_model,
    model_input_schema,
    output_schema,
    resolve_return_hint,
    resolve_type_hints,
)
from .types import AgentTool, JSONSchema, ToolContext, ToolGenerator, ToolResult, ToolSpec, ToolUse
from .validation import (
    WHOLE_INPUT,
    check_json_schema,
    invalid_input_result,
    problems_from_jsonschema,
    problems_from_pydantic,
)

__all__ = ["TOOL_NAME_PATTERN", "FunctionTool"]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Names a model provider accepts for a tool."""

_CONTEXT_DEFAULT = "tool_context"
_AGENT = "agent"
_BOUND_SLOTS = ("self", "cls")
_STARS: dict[Any, str] = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}


class _Kind(enum.Enum):
    FUNCTION = "function"
    COROUTINE = "coroutine"
    GENERATOR = "generator"
    ASYNC_GENERATOR = "async_generator"


class _Mode(enum.Enum):
    SIGNATURE = "signature"  # model generated from the signature; kwargs from its fields
    MODEL_FIELDS = "model_fields"  # input_schema=Model; kwargs from the model's fields
    MODEL_INSTANCE = "model_instance"  # input_schema=Model; one parameter receives the instance
    JSON = "json"  # input_schema={...}; validated JSON values passed as kwargs


@dataclass(frozen=True, slots=True)
class _Definition:
    """Everything about a tool that does not change between calls."""

    name: str
    function_name: str
    spec: ToolSpec
    kind: _Kind
    mode: _Mode
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


class _InvalidInput(Exception):
    """Carries the error result for input that failed validation."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__("invalid input")
        self.result = result


def _new_tool_use_id() -> str:
    # Same shape as types.new_tool_use_id, without uuid4's cost on the hot path.
    return "tooluse_" + os.urandom(10).hex()


class FunctionTool(AgentTool, Generic[P, R]):
    """A function exposed as a tool; still callable as the function itself.

    Build one with ``@tool`` (``loader.decorator``) or directly with
    ``FunctionTool(func, name=..., ...)``; the options are those of ``@tool``.
    Access through an instance (``obj.method``) gives a bound copy whose
    schema has no ``self``.

    Raises (at construction):
        InvalidToolNameError: The name is outside ``^[A-Za-z0-9_-]{1,64}$``.
        ToolSignatureError: ``*args``/``**kwargs``, an annotation that cannot become JSON Schema,
            a missing context parameter, ...
        ToolDefinitionError: A bad ``input_schema``.
    """

    # Set by functools.update_wrapper; declared so type checkers know them.
    __name__: str
    __wrapped__: Callable[P, R]

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: JSONSchema | type[BaseModel] | None = None,
        context: bool | str = False,
        raise_errors: bool = False,
        category: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        super().__init__()
        if isinstance(func, FunctionTool):  # re-decorating: start again from the plain function
            func = func.original_function
        definition = _define(
            func,
            name=name,
            description=description,
            input_schema=input_schema,
            context=context,
            raise_errors=raise_errors,
            category=category,
            tags=tags,
        )
        self._attach(func, definition)
        logger.debug(
            "tool_name=<%s>, kind=<%s> | function tool created", definition.name, definition.kind.value
        )

    def _attach(self, func: Callable[P, R], definition: _Definition) -> None:
        functools.update_wrapper(self, func)
        self._func = func
        self._definition = definition
        self._display: dict[str, str] | None = None

    @classmethod
    def _bound_copy(cls, func: Callable[..., Any], definition: _Definition) -> FunctionTool[..., Any]:
        tool: FunctionTool[..., Any] = cls.__new__(cls)
        AgentTool.__init__(tool)
        tool._attach(func, definition)
        return tool

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> FunctionTool[P, R]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> FunctionTool[..., R]: ...
    def __get__(self, instance: object | None, owner: type | None = None) -> FunctionTool[..., R]:
        """Bind to an instance like a method would: ``obj.method`` is a tool without ``self``."""
        func: Any = self._func
        if instance is None or inspect.ismethod(func) or not hasattr(func, "__get__"):
            return self
        return self._bound_copy(func.__get__(instance, owner), self._definition)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the plain function (an async function still returns an awaitable)."""
        return self._func(*args, **kwargs)

    # -- AgentTool -----------------------------------------------------------------

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self._definition.name

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec, built once; each access returns a fresh copy the caller may change freely."""
        return copy.deepcopy(self._definition.spec)

    @property
    def tool_type(self) -> str:
        """Always ``"function"``."""
        return "function"

    @property
    def supports_hot_reload(self) -> bool:
        """Function tools can be swapped for a new version at any time."""
        return True

    @property
    def category(self) -> str | None:
        """The ``category=`` given to ``@tool``."""
        return self._definition.category

    @property
    def tags(self) -> tuple[str, ...]:
        """The ``tags=`` given to ``@tool``."""
        return self._definition.tags

    def get_display_properties(self) -> dict[str, str]:
        """Name and type plus ``Function`` (the function's name) and ``Source`` (``file:line``)."""
        if self._display is None:
            props = super().get_display_properties()
            props["Function"] = self._definition.function_name
            if self.source_file is not None:
                props["Source"] = (
                    f"{self.source_file}:{self.source_line}" if self.source_line else self.source_file
                )
            self._display = props
        return dict(self._display)

    # -- extras --------------------------------------------------------------------

    @property
    def original_function(self) -> Callable[P, R]:
        """The wrapped function (a bound method for a tool accessed through an instance)."""
        return self._func

    @property
    def source_file(self) -> str | None:
        """The file the function is defined in, when known."""
        return self._definition.source_file

    @property
    def source_line(self) -> int | None:
        """The first line of the function's definition (its first decorator), when known."""
        return self._definition.source_line

    @property
    def is_async(self) -> bool:
        """Whether the function is ``async`` (coroutine or async generator)."""
        return self._definition.kind in (_Kind.COROUTINE, _Kind.ASYNC_GENERATOR)

    @property
    def is_generator(self) -> bool:
        """Whether the function is a (sync or async) generator, i.e. streams events."""
        return self._definition.kind in (_Kind.GENERATOR, _Kind.ASYNC_GENERATOR)

    # -- running -------------------------------------------------------------------

    def invoke(
        self,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the tool and return its result; sync tools run right here, on the calling thread."""
        definition = self._definition
        if definition.kind is _Kind.COROUTINE or definition.kind is _Kind.ASYNC_GENERATOR:
            return super().invoke(
                input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
            )
        tool_use_id = tool_use_id or _new_tool_use_id()
        data = {} if input is None else input
        if definition.simple:
            try:
                kwargs = definition.validate(data).__dict__  # type: ignore[misc]
            except ValidationError as exc:
                return invalid_input_result(tool_use_id, definition.name, problems_from_pydantic(exc, data))
            return self._run_sync((), kwargs, tool_use_id)
        state = _state(invocation_state, agent)
        try:
            args, kwargs = self._arguments(data, tool_use_id, None, state, None)
        except _InvalidInput as bad:
            return bad.result
        return self._run_sync(args, kwargs, tool_use_id)

    async def ainvoke(
        self,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the tool and return its result; sync tools run directly, without a thread."""
        kind = self._definition.kind
        if kind is _Kind.FUNCTION or kind is _Kind.GENERATOR:
            return self.invoke(input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent)
        if kind is _Kind.ASYNC_GENERATOR:
            return await super().ainvoke(
                input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent
            )
        tool_use_id = tool_use_id or _new_tool_use_id()
        try:
            args, kwargs = self._arguments(
                {} if input is None else input, tool_use_id, None, _state(invocation_state, agent), None
            )
        except _InvalidInput as bad:
            return bad.result
        try:
            value = await self._func(*args, **kwargs)  # type: ignore[misc]
        except Exception as exc:
            return self._failure(exc, tool_use_id)
        return to_tool_result(value, tool_use_id)

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        """Validate, run, yield each generator event as-is, then the ``ToolResult``.

        ``kwargs["_tool_context"]``, when it is a ``loader.types.ToolContext``, is
        injected as-is instead of one built from ``tool_use`` and ``invocation_state``.
        """
        tool_use_id = str(tool_use.get("toolUseId") or _new_tool_use_id())
        data = tool_use.get("input")
        given = kwargs.get("_tool_context")
        try:
            args, call_kwargs = self._arguments(
                {} if data is None else data,
                tool_use_id,
                tool_use,
                invocation_state if invocation_state is not None else {},
                given if isinstance(given, ToolContext) else None,
            )
        except _InvalidInput as bad:
            yield bad.result
            return
        kind = self._definition.kind
        if kind is _Kind.FUNCTION:
            yield self._run_sync(args, call_kwargs, tool_use_id)
            return
        try:
            running: Any = self._func(*args, **call_kwargs)
            if kind is _Kind.COROUTINE:
                value = await running
        except Exception as exc:
            yield self._failure(exc, tool_use_id)
            return
        if kind is _Kind.COROUTINE:
            yield to_tool_result(value, tool_use_id)
            return
        # Generators: every item is an event; the inner generator is closed however the stream ends.
        last: Any = None
        try:
            while True:
                try:
                    if kind is _Kind.GENERATOR:
                        item = next(running)
                    else:
                        item = await running.__anext__()
                except StopIteration as stop:
                    last = stop.value if stop.value is not None else last
                    break
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    yield self._failure(exc, tool_use_id)
                    return
                last = item
                yield item
        finally:
            if kind is _Kind.GENERATOR:
                running.close()
            else:
                await running.aclose()
        yield to_tool_result(last, tool_use_id)

    def _run_sync(self, args: tuple[Any, ...], kwargs: dict[str, Any], tool_use_id: str) -> ToolResult:
        try:
            value: Any = self._func(*args, **kwargs)
            if self._definition.kind is _Kind.GENERATOR:
                value = _drain(value)
        except Exception as exc:
            return self._failure(exc, tool_use_id)
        return to_tool_result(value, tool_use_id)

    def _failure(self, exc: Exception, tool_use_id: str) -> ToolResult:
        """Log the tool's exception and turn it into an error result (or re-raise with raise_errors)."""
        if self._definition.raise_errors:
            raise exc
        logger.error(
            "tool_name=<%s>, tool_use_id=<%s> | tool raised %s",
            self._definition.name,
            tool_use_id,
            type(exc).__name__,
            exc_info=exc,
        )
        return error_result(tool_use_id, f"Error: {type(exc).__name__} - {exc}")

    def _arguments(
        self,
        data: Any,
        tool_use_id: str,
        tool_use: ToolUse | None,
        state: dict[str, Any],
        context: ToolContext | None,
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Validated call arguments, with the context and agent injected.

        Raises:
            _InvalidInput: With the error result listing every problem.
        """
        d = self._definition
        values: dict[str, Any]
        if d.mode is _Mode.JSON:
            assert d.json_validator is not None
            problems = problems_from_jsonschema(d.json_validator.iter_errors(data))
            if not problems and not isinstance(data, Mapping):
                problems = [
                    {"parameter": WHOLE_INPUT, "problem": "must be a JSON object of named parameters"}
                ]
            if problems:
                raise _InvalidInput(invalid_input_result(tool_use_id, d.name, problems))
            values = dict(data)
        else:
            assert d.validate is not None
            try:
                validated = d.validate(data)
            except ValidationError as exc:
                problems = problems_from_pydantic(exc, data)
                raise _InvalidInput(invalid_input_result(tool_use_id, d.name, problems)) from None
            if d.instance_parameter is not None:
                values = {d.instance_parameter: validated}
            elif d.renamed:
                values = {d.renamed.get(key, key): value for key, value in validated.__dict__.items()}
            else:
                values = dict(validated.__dict__)
        if d.context_parameter is not None:
            if context is None:
                if tool_use is None:
                    tool_use = {"toolUseId": tool_use_id, "name": d.name, "input": data}
                context = ToolContext(tool_use=tool_use, agent=state.get(_AGENT), invocation_state=state)
            values[d.context_parameter] = context
        if d.agent_parameter:
            values[_AGENT] = state[_AGENT] if _AGENT in state else d.agent_default
        if not d.positional:
            return (), values
        return tuple(values.pop(name) for name in d.positional if name in values), values


def _state(invocation_state: dict[str, Any] | None, agent: Any) -> dict[str, Any]:
    state = dict(invocation_state or {})
    if agent is not None:
        state.setdefault(_AGENT, agent)
    return state


def _drain(generator: Generator[Any, Any, Any]) -> Any:
    """Run a sync generator to the end: its return value if not None, else its last yield."""
    last: Any = None
    while True:
        try:
            last = next(generator)
        except StopIteration as stop:
            return stop.value if stop.value is not None else last


# -- building the definition -----------------------------------------------------------


def _define(
    func: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    input_schema: JSONSchema | type[BaseModel] | None,
    context: bool | str,
    raise_errors: bool,
    category: str | None,
    tags: Iterable[str] | None,
) -> _Definition:
    """Work out everything about a tool once: names, checked signature, input handling, spec."""
    function_name, tool_name = _names(func, name)
    kind = _kind_of(func)
    json_schema_given = input_schema is not None and not _is_model_class(input_schema)
    parameters = _parameters(func, function_name, allow_var_keyword=json_schema_given)
    context_parameter = _context_parameter(function_name, parameters, context)
    agent_param = next((p for p in parameters if p.name == _AGENT and p.name != context_parameter), None)
    schema_params = [
        p
        for p in parameters
        if p.name not in (context_parameter, _AGENT) and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    positional = tuple(p.name for p in schema_params if p.kind is inspect.Parameter.POSITIONAL_ONLY)
    doc = docstring_of(func)
    handling = _input_handling(
        func, function_name, tool_name, input_schema, parameters, schema_params, doc.params
    )

    spec: ToolSpec = {
        "name": tool_name,
        "description": description if description is not None else (doc.description or function_name),
        "inputSchema": {"json": handling.schema},
    }
    if kind in (_Kind.FUNCTION, _Kind.COROUTINE):
        output = output_schema(resolve_return_hint(func))
        if output is not None:
            spec["outputSchema"] = {"json": output}

    source_file, source_line = _source_of(func)
    agent_default = None
    if agent_param is not None and agent_param.default is not inspect.Parameter.empty:
        agent_default = agent_param.default
    return _Definition(
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
        raise_errors=raise_errors,
        category=category,
        tags=_tags(tags),
        source_file=source_file,
        source_line=source_line,
        simple=(
            handling.mode is _Mode.SIGNATURE
            and not handling.renamed
            and not positional
            and context_parameter is None
            and agent_param is None
        ),
    )


def _names(func: Callable[..., Any], name: str | None) -> tuple[str, str]:
    """The function's name and the tool's name (checked against ``TOOL_NAME_PATTERN``)."""
    if not callable(func):
        raise ToolDefinitionError(f"@tool needs a function, got {type(func).__name__}")
    function_name = getattr(func, "__name__", None)
    if not isinstance(function_name, str):
        if name is None:
            raise ToolDefinitionError(f"{func!r} has no __name__: pass name= to @tool")
        function_name = name
    tool_name = function_name if name is None else name
    if not isinstance(tool_name, str) or not TOOL_NAME_PATTERN.match(tool_name):
        raise InvalidToolNameError(str(tool_name))
    return function_name, tool_name


def _parameters(
    func: Callable[..., Any], function_name: str, *, allow_var_keyword: bool
) -> list[inspect.Parameter]:
    """The parameters a call fills (an unbound method's ``self``/``cls`` left out), checked."""
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError) as exc:
        raise ToolSignatureError(
            f"Function {function_name!r}: cannot read its signature ({exc})", function=function_name
        ) from exc
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
    mode: _Mode
    schema: JSONSchema
    validate: Callable[[Any], BaseModel] | None = None
    json_validator: Draft202012Validator | None = None
    renamed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    instance_parameter: str | None = None


def _input_handling(
    func: Callable[..., Any],
    function_name: str,
    tool_name: str,
    input_schema: JSONSchema | type[BaseModel] | None,
    parameters: list[inspect.Parameter],
    schema_params: list[inspect.Parameter],
    doc_params: Mapping[str, str],
) -> _InputHandling:
    """How a call's input is validated and turned into arguments, and the schema shown for it."""
    if input_schema is None:
        hints = resolve_type_hints(function_name, func, schema_params)
        built = build_input_model(function_name, schema_params, hints, doc_params)
        return _InputHandling(
            mode=_Mode.SIGNATURE,
            schema=built.json_schema,
            validate=built.model.__pydantic_validator__.validate_python,
            renamed=built.renamed,
        )
    if _is_model_class(input_schema):
        model = cast(type[BaseModel], input_schema)
        mode, instance_parameter = _model_mode(function_name, func, model, schema_params)
        strict_model = _forbid_extra(model)
        schema = model_input_schema(strict_model, doc_params)
        if strict_model is not model:
            schema.pop("additionalProperties", None)
        return _InputHandling(
            mode=mode,
            schema=schema,
            validate=strict_model.__pydantic_validator__.validate_python,
            instance_parameter=instance_parameter,
        )
    raw = cast(JSONSchema, input_schema)
    if isinstance(raw, Mapping) and set(raw) == {"json"} and isinstance(raw["json"], Mapping):
        raw = cast(JSONSchema, raw["json"])  # the Bedrock wrapper {"json": schema}
    json_validator = check_json_schema(raw, tool_name=tool_name)
    _check_schema_covers(function_name, raw, parameters, schema_params)
    return _InputHandling(mode=_Mode.JSON, schema=copy.deepcopy(dict(raw)), json_validator=json_validator)


def _kind_of(func: Callable[..., Any]) -> _Kind:
    if inspect.isasyncgenfunction(func):
        return _Kind.ASYNC_GENERATOR
    if inspect.iscoroutinefunction(func):
        return _Kind.COROUTINE
    if inspect.isgeneratorfunction(func):
        return _Kind.GENERATOR
    return _Kind.FUNCTION


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
    function_name: str, func: Callable[..., Any], model: type[BaseModel], params: list[inspect.Parameter]
) -> tuple[_Mode, str | None]:
    """Whether the function takes the model instance (one parameter of that type) or its fields."""
    if len(params) == 1:
        try:
            hint = resolve_type_hints(function_name, func, params).get(params[0].name)
        except ToolSignatureError:
            hint = None
        if isinstance(hint, type) and issubclass(model, hint) and hint is not object:
            return _Mode.MODEL_INSTANCE, params[0].name
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
    return _Mode.MODEL_FIELDS, None


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
    target = inspect.unwrap(func)
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is None:
        return None, None
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        path = None
    return path or code.co_filename, code.co_firstlineno
