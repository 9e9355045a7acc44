"""``FunctionTool``: the ``AgentTool`` made from a plain Python function.

Everything that can be worked out ahead of time (name, spec, the validating
model, how to call the function) is worked out once, when the tool is
created, by ``loader.function_spec``; this module runs calls: it only
validates, calls and maps the result.

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
* A parameter named ``agent`` is filled from ``invocation_state["agent"]``;
  how ``input_schema=`` shapes the arguments is described in
  ``loader.function_spec``.
* ``tool_spec`` is built once; every access returns a deep copy, so a caller
  (Strands' registry normalises specs in place) cannot change the tool's.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Generator, Mapping
from typing import Any, Generic, ParamSpec, TypeVar, Unpack, overload

from pydantic import ValidationError

from ..calls.containment import belongs_to_caller, failure_log_level
from ..context.tool_context import ToolContext
from ..names import TOOL_NAME_PATTERN
from ..results import exception_result, to_tool_result
from ..types import (
    AgentTool,
    ToolGenerator,
    ToolResult,
    ToolUse,
    call_frame,
    new_tool_use_id,
)
from .description import DescribedTool, ToolDescription
from .function_definition import AGENT_PARAMETER, FunctionDefinition, FunctionKind, InputMode, define_function
from .options import FunctionKeywords, ToolOptions, options_of
from .schema import caller_namespace
from .validation import (
    NOT_AN_OBJECT,
    invalid_input_result,
    problem_at,
    problems_from_jsonschema,
    problems_from_pydantic,
)

__all__ = ["TOOL_NAME_PATTERN", "FunctionTool"]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


class _InvalidInput(Exception):
    """Carries the error result for input that failed validation."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__("invalid input")
        self.result = result


class FunctionTool(DescribedTool, Generic[P, R]):
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
        options: ToolOptions | None = None,
        *,
        namespace: Mapping[str, Any] | None = None,
        **keywords: Unpack[FunctionKeywords],
    ) -> None:
        """Describe ``func`` as a tool: ``options`` (what ``@tool`` passes) or the same as keywords.

        ``namespace`` holds names the annotations may use beyond the function's
        globals; by default, the caller's local names (see ``caller_namespace``).
        """
        super().__init__()
        if isinstance(func, FunctionTool):  # re-decorating: start again from the plain function
            func = func.original_function
        given = options_of(keywords, FunctionKeywords, "FunctionTool")
        if options is not None and given != ToolOptions():
            raise TypeError("FunctionTool takes a ToolOptions or option keywords, not both")
        definition = define_function(
            func,
            given if options is None else options,
            namespace=caller_namespace() if namespace is None else namespace,
        )
        self._attach(func, definition)
        logger.debug(
            "tool_name=<%s>, kind=<%s> | function tool created", definition.name, definition.kind.value
        )

    def _attach(self, func: Callable[P, R], definition: FunctionDefinition) -> None:
        functools.update_wrapper(self, func)
        self._func = func
        self._definition = definition
        # A plain sync function whose validated input is its keyword arguments: invoke's fast path.
        self._inline = definition.simple and definition.kind is FunctionKind.FUNCTION
        self._kwargs_of = definition.validate_kwargs or _model_kwargs(definition)

    @classmethod
    def _bound_copy(cls, func: Callable[..., Any], definition: FunctionDefinition) -> FunctionTool[..., Any]:
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

    def _describe(self) -> ToolDescription:
        d = self._definition
        display = {"Name": d.name, "Type": "function", "Function": d.function_name}
        if d.source_file is not None:
            display["Source"] = f"{d.source_file}:{d.source_line}" if d.source_line else d.source_file
        return ToolDescription(
            name=d.name,
            spec=d.spec,
            tool_type="function",
            is_async=d.kind in (FunctionKind.COROUTINE, FunctionKind.ASYNC_GENERATOR),
            streaming=d.kind in (FunctionKind.GENERATOR, FunctionKind.ASYNC_GENERATOR),
            source_file=d.source_file,
            source_line=d.source_line,
            category=d.category,
            tags=d.tags,
            display=display,
            hot_reload=True,
            examples=d.examples,
            search_hint=d.search_hint,
            always_load=d.always_load,
        )

    # -- extras --------------------------------------------------------------------

    @property
    def original_function(self) -> Callable[P, R]:
        """The wrapped function (a bound method for a tool accessed through an instance)."""
        return self._func

    # -- running -------------------------------------------------------------------

    def _invoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        """Run the tool and return its result; sync tools run right here, on the calling thread."""
        definition = self._definition
        if self._inline:
            tool_use_id = tool_use_id or new_tool_use_id()
            data = {} if input is None else input
            try:
                kwargs = self._kwargs_of(data)
            except ValidationError as exc:
                return invalid_input_result(tool_use_id, definition.name, problems_from_pydantic(exc, data))
            try:
                value = self._func(**kwargs)  # type: ignore[call-arg]
            except BaseException as exc:  # the tool's sys.exit() must not stop the host (see _failure)
                return self._failure(exc, tool_use_id)
            return to_tool_result(value, tool_use_id)
        if self.is_async:
            return super()._invoke(input, tool_use_id, invocation_state, agent)
        tool_use_id = tool_use_id or new_tool_use_id()
        data = {} if input is None else input
        if definition.simple:
            try:
                kwargs = self._kwargs_of(data)
            except ValidationError as exc:
                return invalid_input_result(tool_use_id, definition.name, problems_from_pydantic(exc, data))
            return self._run_sync((), kwargs, tool_use_id)
        tool_use, state = call_frame(definition.name, data, tool_use_id, invocation_state, agent)
        try:
            args, kwargs = self._arguments(data, tool_use_id, tool_use, state, None)
        except _InvalidInput as bad:
            return bad.result
        return self._run_sync(args, kwargs, tool_use_id)

    async def _ainvoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        """Run the tool and return its result; sync tools run directly, without a thread."""
        kind = self._definition.kind
        if kind is FunctionKind.FUNCTION or kind is FunctionKind.GENERATOR:
            return self.invoke(input, tool_use_id=tool_use_id, invocation_state=invocation_state, agent=agent)
        if kind is FunctionKind.ASYNC_GENERATOR:
            return await super()._ainvoke(input, tool_use_id, invocation_state, agent)
        tool_use, state = call_frame(self._definition.name, input, tool_use_id, invocation_state, agent)
        tool_use_id = tool_use["toolUseId"]
        try:
            args, kwargs = self._arguments(tool_use["input"], tool_use_id, tool_use, state, None)
        except _InvalidInput as bad:
            return bad.result
        try:
            value = await self._func(*args, **kwargs)  # type: ignore[misc]
        except BaseException as exc:
            return self._failure(exc, tool_use_id)
        return to_tool_result(value, tool_use_id)

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        """Validate, run, yield each generator event as-is, then the ``ToolResult``.

        ``kwargs["_tool_context"]``, when it is a ``loader.types.ToolContext``, is
        injected as-is instead of one built from ``tool_use`` and ``invocation_state``.
        """
        tool_use_id = str(tool_use.get("toolUseId") or new_tool_use_id())
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
        if kind is FunctionKind.FUNCTION:
            yield self._run_sync(args, call_kwargs, tool_use_id)
            return
        try:
            running: Any = self._func(*args, **call_kwargs)
            if kind is FunctionKind.COROUTINE:
                value = await running
        except BaseException as exc:
            yield self._failure(exc, tool_use_id)
            return
        if kind is FunctionKind.COROUTINE:
            yield to_tool_result(value, tool_use_id)
            return
        # Generators: every item is an event; the inner generator is closed however the stream ends.
        last: Any = None
        try:
            while True:
                try:
                    if kind is FunctionKind.GENERATOR:
                        item = next(running)
                    else:
                        item = await running.__anext__()
                except StopIteration as stop:
                    last = stop.value if stop.value is not None else last
                    break
                except StopAsyncIteration:
                    break
                except BaseException as exc:
                    yield self._failure(exc, tool_use_id)
                    return
                last = item
                yield item
        finally:
            if kind is FunctionKind.GENERATOR:
                running.close()
            else:
                await running.aclose()
        yield to_tool_result(last, tool_use_id)

    def _run_sync(self, args: tuple[Any, ...], kwargs: dict[str, Any], tool_use_id: str) -> ToolResult:
        try:
            value: Any = self._func(*args, **kwargs)
            if self._definition.kind is FunctionKind.GENERATOR:
                value = _drain(value)
        except BaseException as exc:
            return self._failure(exc, tool_use_id)
        return to_tool_result(value, tool_use_id)

    def _failure(self, exc: BaseException, tool_use_id: str) -> ToolResult:
        """Log the tool's exception and turn it into an error result (or re-raise with raise_errors).

        Any ``BaseException`` counts (a tool's ``sys.exit()`` must not stop the host), except
        the caller's own cancellation or Ctrl-C (``loader.calls.containment``), which propagate.
        """
        if self._definition.raise_errors or belongs_to_caller(exc):
            raise exc
        logger.log(
            failure_log_level(exc),
            "tool_name=<%s>, tool_use_id=<%s> | tool raised %s",
            self._definition.name,
            tool_use_id,
            type(exc).__name__,
            exc_info=exc,
        )
        return exception_result(tool_use_id, exc)

    def _arguments(
        self,
        data: Any,
        tool_use_id: str,
        tool_use: ToolUse,
        state: dict[str, Any],
        context: ToolContext | None,
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Validated call arguments, with the context and agent injected.

        Raises:
            _InvalidInput: With the error result listing every problem.
        """
        d = self._definition
        values: dict[str, Any]
        if d.mode is InputMode.JSON:
            assert d.json_validator is not None
            problems = problems_from_jsonschema(d.json_validator.iter_errors(data))
            if not problems and not isinstance(data, Mapping):
                problems = [problem_at(None, NOT_AN_OBJECT)]
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
                context = ToolContext.for_call(tool_use, state)
            values[d.context_parameter] = context
        if d.agent_parameter:
            values[AGENT_PARAMETER] = state[AGENT_PARAMETER] if AGENT_PARAMETER in state else d.agent_default
        if not d.positional:
            return (), values
        return tuple(values.pop(name) for name in d.positional if name in values), values


def _drain(generator: Generator[Any, Any, Any]) -> Any:
    """Run a sync generator to the end: its return value if not None, else its last yield."""
    last: Any = None
    while True:
        try:
            last = next(generator)
        except StopIteration as stop:
            return stop.value if stop.value is not None else last


def _model_kwargs(definition: FunctionDefinition) -> Callable[[Any], dict[str, Any]]:
    """Keyword arguments from the definition's model validator (when no field validator was built)."""
    validate = definition.validate

    def kwargs_of(data: Any) -> dict[str, Any]:
        if validate is None:
            raise TypeError(f"tool {definition.name!r} validates no model input")
        return validate(data).__dict__

    return kwargs_of
