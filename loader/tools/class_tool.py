"""Class-based tools: ``ClassTool`` wraps an instance of a ``@tool``-decorated class as an ``AgentTool``.

Describing the class is ``loader.tools.class_definition``'s job; this module runs
the tool, and its ``decorate_class`` also lets the class's instances be registered
as they are (``registry.register(MyTool(secret))``: ``ClassTool.of`` the instance).
A custom ``validate(self, params)`` may return None, True or an empty list
(valid); a list of messages, one message string, False, or the reference's
``{"valid": bool, "errors": [...]}`` (invalid); or raise ``ValueError`` (invalid,
with its message; a ``ToolValidationError`` keeps each of its problems). It may
be async. Declared parameters are always enforced before a custom ``validate``
runs, so ``execute`` only ever sees input that matches the schema the model was shown.
"""

from __future__ import annotations

import inspect
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping
from typing import Any, cast

from ..calls.containment import belongs_to_caller, failure_log_level
from ..context.tool_context import ToolContext
from ..errors import InputProblem, ToolDefinitionError, ToolValidationError
from ..results import exception_result, to_tool_result
from ..types import (
    AGENT_TOOL_HOOK,
    AgentTool,
    JSONSchema,
    ToolGenerator,
    ToolResult,
    ToolSpec,
    ToolUse,
    call_frame,
    new_tool_use_id,
    run_sync,
)
from . import class_definition
from .class_definition import build_metadata, declared_metadata, input_checker, is_generated_validate
from .description import DescribedTool, ToolDescription
from .examples import runnable_examples
from .metadata import ToolMetadata
from .options import ToolOptions
from .params import apply_defaults, parameters_to_json_schema
from .validation import invalid_input_result

__all__ = [
    "ClassTool",
    "create_tool",
    "decorate_class",
    "decorate_class_with",
    "get_tool_metadata",
    "is_tool",
    "registrable",
]

logger = logging.getLogger(__name__)


def get_tool_metadata(obj: Any) -> ToolMetadata | None:
    """The ``ToolMetadata`` of a decorated class, its instance or a ``ClassTool``; None otherwise.

    Function and module tools have no ``ToolMetadata`` (their spec is the source
    of truth), so they give None.
    """
    if isinstance(obj, ClassTool):
        return obj._metadata
    carried = getattr(obj, "metadata", None) if isinstance(obj, AgentTool) else None
    if isinstance(carried, ToolMetadata):  # a process-mode proxy carries its class tool's metadata
        return carried
    return declared_metadata(obj if isinstance(obj, type) else type(obj))


def is_tool(obj: Any) -> bool:
    """Whether ``obj`` is a decorated tool class, an instance of one, or any ``AgentTool``."""
    return isinstance(obj, AgentTool) or get_tool_metadata(obj) is not None


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _finish_awaitable(value: Any) -> Any:
    """Resolve an awaitable returned by a sync-looking method from synchronous code."""
    if inspect.isawaitable(value):
        return run_sync(lambda: _await(value))
    return value


class _Ready:
    """An awaitable whose value is there already: awaiting it never suspends."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[None, None, Any]:
        yield from ()
        return self.value


def _on_the_loop(value: Any) -> Awaitable[Any]:
    return value if inspect.isawaitable(value) else _Ready(value)


def _finished_here(value: Any) -> Awaitable[Any]:
    return _Ready(_finish_awaitable(value))


class _FunctionBacked:
    """The instance behind ``create_tool``: ``execute`` is the given function itself."""

    def __init__(self, execute: Callable[[dict[str, Any]], Any]) -> None:
        self.execute = execute


class ClassTool(DescribedTool):
    """An ``AgentTool`` backed by an instance of a ``@tool``-decorated class."""

    def __init__(self, instance: Any, *, metadata: ToolMetadata | None = None) -> None:
        """Wrap ``instance``; ``metadata`` defaults to the one its class was decorated with.

        Raises:
            TypeError: ``instance`` is a class (use ``ClassTool.from_class``).
            ToolDefinitionError: The instance's class is not a decorated tool class.
        """
        super().__init__()
        if isinstance(instance, type):
            raise TypeError(f"ClassTool wraps an instance; use ClassTool.from_class({instance.__qualname__})")
        found = metadata or get_tool_metadata(instance)
        if found is None:
            raise ToolDefinitionError(f"{type(instance).__qualname__!r} is not decorated with @tool")
        execute = getattr(instance, "execute", None)
        if not callable(execute):
            raise ToolDefinitionError(f"{type(instance).__qualname__!r} has no callable execute method")
        self._instance = instance
        self._metadata: ToolMetadata = found
        self._execute: Callable[[dict[str, Any]], Any] = execute
        validate = getattr(type(instance), "validate", None)
        self._validate: Callable[[dict[str, Any]], Any] | None = (
            None if validate is None or is_generated_validate(validate) else instance.validate
        )
        self._async = inspect.iscoroutinefunction(execute) or (
            self._validate is not None and inspect.iscoroutinefunction(self._validate)
        )
        self._spec = self._build_spec()
        self._check_input = input_checker(found)
        self._wants_context = _takes_context(execute)

    @classmethod
    def of(cls, instance: Any) -> ClassTool:
        """The ``ClassTool`` around ``instance``: the same one for as long as any holder keeps it.

        Registering, replacing or batching the instance itself goes through here
        (``AGENT_TOOL_HOOK``): replacing a tool by the very instance it wraps is then
        no change at all, rather than a new wrapper whose predecessor's cleanup would
        run on the instance still serving.
        """
        with _wrappers_lock:
            found = _wrappers.get(id(instance))
            if found is None or found.instance is not instance:
                found = _wrappers[id(instance)] = cls(instance)
            return found

    @classmethod
    def from_class(cls, tool_class: type, *args: Any, **kwargs: Any) -> ClassTool:
        """Instantiate ``tool_class(*args, **kwargs)`` and wrap the instance."""
        if get_tool_metadata(tool_class) is None:
            raise ToolDefinitionError(f"{tool_class.__qualname__!r} is not decorated with @tool")
        return cls(tool_class(*args, **kwargs))

    def _build_spec(self) -> ToolSpec:
        meta = self._metadata
        input_schema = meta.input_json_schema or parameters_to_json_schema(meta.parameters)
        spec: ToolSpec = {
            "name": meta.name,
            "description": meta.description or meta.name,
            "inputSchema": {"json": input_schema},
        }
        if meta.output_json_schema is not None:
            spec["outputSchema"] = {"json": meta.output_json_schema}
        return spec

    @property
    def instance(self) -> Any:
        """The wrapped instance of the decorated class."""
        return self._instance

    def _describe(self) -> ToolDescription:
        meta = self._metadata
        display = {"Name": meta.name, "Type": "class", "Version": meta.version}
        if meta.category:
            display["Category"] = meta.category
        if meta.tags:
            display["Tags"] = ", ".join(meta.tags)
        target: Any = self._execute if isinstance(self._instance, _FunctionBacked) else type(self._instance)
        display["Class"] = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
        source_file, source_line = self._source()
        return ToolDescription(
            name=meta.name,
            spec=self._spec,
            tool_type="class",
            is_async=self._async,
            source_file=source_file,
            source_line=source_line,
            version=meta.version,
            category=meta.category,
            tags=meta.tags,
            display=display,
            hot_reload=True,
            metadata=meta,
            examples=runnable_examples(meta.examples),
            search_hint=meta.search_hint,
            always_load=meta.always_load,
        )

    def _source(self) -> tuple[str | None, int | None]:
        """The file and line defining the tool class (or the function given to ``create_tool``)."""
        target: Any = type(self._instance)
        if isinstance(self._instance, _FunctionBacked):
            target = self._execute
        try:
            return inspect.getsourcefile(target), inspect.getsourcelines(target)[1]
        except (OSError, TypeError):
            code = getattr(inspect.unwrap(self._execute), "__code__", None)
            if code is None:
                return None, None
            return code.co_filename, code.co_firstlineno

    def cleanup(self) -> Awaitable[None] | None:
        """Run the instance's ``cleanup`` (returns its awaitable when it is async)."""
        method = getattr(self._instance, "cleanup", None)
        if method is None:
            return None
        return cast("Awaitable[None] | None", method())

    def _prepare(self, tool_use_id: str, raw_input: Any) -> tuple[dict[str, Any], ToolResult | None]:
        """Fill defaults and enforce the declared parameters; the second item is an error result."""
        params = {} if raw_input is None else raw_input
        if isinstance(params, Mapping):
            params = apply_defaults(params, self._metadata.parameters)
        problems = self._check_input(params)
        if problems:
            return {}, self._invalid(tool_use_id, problems)
        return params, None

    def _invalid(self, tool_use_id: str, problems: list[InputProblem]) -> ToolResult:
        logger.debug("tool_name=<%s>, problems=<%d> | invalid input", self.tool_name, len(problems))
        return invalid_input_result(tool_use_id, self.tool_name, problems, sentences=True)

    def _failure(self, tool_use_id: str, exc: BaseException) -> ToolResult:
        """The error result for anything the tool raised; the caller's cancellation or Ctrl-C propagates."""
        if belongs_to_caller(exc):
            raise exc
        logger.log(
            failure_log_level(exc),
            "tool_name=<%s> | tool raised %s",
            self.tool_name,
            type(exc).__name__,
            exc_info=exc,
        )
        return exception_result(tool_use_id, exc)

    def _context(self, tool_use: ToolUse, state: dict[str, Any]) -> ToolContext | None:
        """The ``ToolContext`` for an ``execute`` that declares a ``tool_context`` parameter."""
        if not self._wants_context:
            return None
        return ToolContext.for_call(tool_use, state)

    def _call_execute(self, prepared: dict[str, Any], context: ToolContext | None) -> Any:
        if context is None:
            return self._execute(prepared)
        return self._execute(prepared, tool_context=context)  # type: ignore[call-arg]

    async def _steps(
        self,
        tool_use_id: str,
        raw_input: Any,
        context: ToolContext | None,
        finish: Callable[[Any], Awaitable[Any]],
    ) -> ToolResult:
        """Prepare, validate, execute. ``finish`` makes what ``validate`` and ``execute`` return awaitable:
        on the caller's loop (``_on_the_loop``), or finished before the steps go on (``_finished_here``)."""
        try:
            prepared, rejected = self._prepare(tool_use_id, raw_input)
            if rejected is not None:
                return rejected
            if self._validate is not None:
                try:
                    outcome = await finish(self._validate(prepared))
                except ValueError as exc:
                    outcome = exc
                problems = _custom_problems(outcome)
                if problems:
                    return self._invalid(tool_use_id, problems)
            value = await finish(self._call_execute(prepared, context))
            return to_tool_result(value, tool_use_id)
        except BaseException as exc:
            return self._failure(tool_use_id, exc)

    async def _arun(self, tool_use_id: str, raw_input: Any, context: ToolContext | None = None) -> ToolResult:
        return await self._steps(tool_use_id, raw_input, context, _on_the_loop)

    def _run(self, tool_use_id: str, raw_input: Any, context: ToolContext | None = None) -> ToolResult:
        """The same steps as ``_arun`` without an event loop, for sync tools: they never suspend."""
        steps = self._steps(tool_use_id, raw_input, context, _finished_here)
        try:
            steps.send(None)
        except StopIteration as done:
            return cast(ToolResult, done.value)
        steps.close()
        raise RuntimeError("the steps of a synchronous call suspended")

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        """Validate, then execute; yields exactly one event, the ``ToolResult``."""
        tool_use_id = tool_use.get("toolUseId") or new_tool_use_id()
        context = self._context(tool_use, invocation_state if invocation_state is not None else {})
        yield await self._arun(tool_use_id, tool_use.get("input"), context)

    def _invoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        """Run the tool synchronously; a sync ``execute`` runs in this thread with no event loop."""
        tool_use_id = tool_use_id or new_tool_use_id()
        context = None
        if self._wants_context:
            context = self._context(*call_frame(self.tool_name, input, tool_use_id, invocation_state, agent))
        if not self._async:
            return self._run(tool_use_id, input, context)

        def factory() -> Coroutine[Any, Any, ToolResult]:
            return self._arun(tool_use_id, input, context)

        return cast(ToolResult, run_sync(factory))


def _takes_context(execute: Callable[..., Any]) -> bool:
    """Whether ``execute`` declares a ``tool_context`` parameter (it then receives the ``ToolContext``)."""
    try:
        parameters = inspect.signature(execute).parameters
    except (TypeError, ValueError):
        return False
    found = parameters.get("tool_context")
    return found is not None and found.kind not in (
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.POSITIONAL_ONLY,
    )


def _custom(message: str) -> InputProblem:
    return InputProblem(None, message, message)


def _custom_problems(outcome: Any) -> list[InputProblem]:
    """Normalise what a custom ``validate`` returned or raised (see the module docstring)."""
    if isinstance(outcome, ToolValidationError):
        return list(outcome.problems)
    if isinstance(outcome, ValueError):
        return [_custom(str(outcome))]
    if outcome is None or outcome is True:
        return []
    if outcome is False:
        return [_custom("Validation failed")]
    if isinstance(outcome, str):
        return [_custom(outcome)] if outcome else []
    if isinstance(outcome, Mapping) and "valid" in outcome:
        if outcome["valid"]:
            return []
        return [_custom(str(message)) for message in outcome.get("errors") or ["Validation failed"]]
    if isinstance(outcome, (list, tuple)):
        return [_custom(str(message)) for message in outcome]
    raise TypeError(
        f"validate() returned {type(outcome).__name__}; return None/True when valid, "
        "or a list of problem messages"
    )


_wrappers: weakref.WeakValueDictionary[int, ClassTool] = weakref.WeakValueDictionary()
"""``ClassTool.of``'s wrappers by the id of their instance, while something holds them (a wrapper
holds its instance, so that id cannot be reused meanwhile)."""
_wrappers_lock = threading.Lock()


def _agent_tool_of(instance: Any) -> ClassTool:
    """``AGENT_TOOL_HOOK`` of decorated classes: an instance stands for its ``ClassTool``."""
    return ClassTool.of(instance)


def registrable(cls: type) -> type:
    """Let instances of the decorated class ``cls`` be registered as they are (``AGENT_TOOL_HOOK``)."""
    setattr(cls, AGENT_TOOL_HOOK, _agent_tool_of)
    return cls


def decorate_class(cls: type, metadata: ToolMetadata | None = None, **options: Any) -> type:
    """``@tool`` on a class, as a call (``class_definition.decorate_class``), instances registrable."""
    return registrable(class_definition.decorate_class(cls, metadata, **options))


def decorate_class_with(
    cls: type, metadata: ToolMetadata | None, options: ToolOptions, *, output_schema: JSONSchema | None = None
) -> type:
    """``class_definition.decorate_class_with``, instances registrable (what ``@tool`` runs for a class)."""
    return registrable(
        class_definition.decorate_class_with(cls, metadata, options, output_schema=output_schema)
    )


def create_tool(
    metadata: ToolMetadata | Mapping[str, Any],
    execute_fn: Callable[[dict[str, Any]], Any],
) -> ClassTool:
    """A ``ClassTool`` from metadata and a plain (sync or async) function taking the params dict.

    Raises:
        ToolDefinitionError: Invalid metadata or a non-callable ``execute_fn``.
    """
    label = metadata.name if isinstance(metadata, ToolMetadata) else metadata.get("name")
    owner = f"create_tool({label!r})"
    if not callable(execute_fn):
        raise ToolDefinitionError(f"{owner}: execute_fn must be callable, got {type(execute_fn).__name__}")
    built = build_metadata(owner, metadata, {})
    if not built.description:
        built = built.model_copy(update={"description": built.name})
    return ClassTool(_FunctionBacked(execute_fn), metadata=built)
