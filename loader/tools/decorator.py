"""The public ``@tool`` decorator, for functions and classes.

Usable bare (``@tool``) or with options (``@tool(name=..., ...)``); a function
becomes a ``FunctionTool``, a class is handed to ``loader.class_tool``
(imported lazily, only when a class is decorated). A ``ToolMetadata`` may be
given positionally for classes: ``@tool(ToolMetadata(...))``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, overload

from pydantic import BaseModel

from ..errors import ToolDefinitionError
from ..types import JSONSchema
from .function_tool import FunctionTool

if TYPE_CHECKING:
    from .metadata import ToolMetadata

__all__ = ["tool"]

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)


class ToolDecorator(Protocol):
    """What ``@tool(...)`` returns: a decorator for a function or a class."""

    @overload
    def __call__(self, obj: C, /) -> C: ...  # type: ignore[overload-overlap]
    @overload
    def __call__(self, obj: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(obj: C, /) -> C: ...  # type: ignore[overload-overlap]
@overload
def tool(obj: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
    obj: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: JSONSchema | type[BaseModel] | None = None,
    context: bool | str = False,
    raise_errors: bool = False,
    category: str | None = None,
    tags: Iterable[str] | None = None,
    parameters: Any = None,
    version: str | None = None,
    requires_auth: bool | None = None,
    rate_limit: Any = None,
    examples: Any = None,
) -> ToolDecorator: ...
@overload
def tool(
    obj: ToolMetadata,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: JSONSchema | type[BaseModel] | None = None,
    category: str | None = None,
    tags: Iterable[str] | None = None,
    parameters: Any = None,
    version: str | None = None,
    requires_auth: bool | None = None,
    rate_limit: Any = None,
    examples: Any = None,
) -> Callable[[C], C]: ...
def tool(
    obj: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: JSONSchema | type[BaseModel] | None = None,
    context: bool | str = False,
    raise_errors: bool = False,
    category: str | None = None,
    tags: Iterable[str] | None = None,
    parameters: Any = None,
    version: str | None = None,
    requires_auth: bool | None = None,
    rate_limit: Any = None,
    examples: Any = None,
) -> Any:
    """Turn a function (or a class) into a tool.

    Args:
        obj: The function or class when used bare (``@tool``); a ``ToolMetadata`` for classes.
        name: The tool name (default: the function's name); ``^[A-Za-z0-9_-]{1,64}$``.
        description: The description (default: the docstring's summary and body, else the name).
        input_schema: A JSON Schema dict or a pydantic model class replacing the generated schema,
            for validation as well as for the spec.
        context: ``True`` to inject a ``ToolContext`` into ``tool_context``, or the parameter name.
        raise_errors: Let exceptions raised by the function propagate instead of becoming error results.
        category: A grouping for listings and search.
        tags: Labels for listings and search.
        parameters: Class tools only (see ``loader.class_tool``).
        version: Class tools only.
        requires_auth: Class tools only.
        rate_limit: Class tools only.
        examples: Worked calls, ``[{"description": ..., "params": {...}, "expected_output": ...}]``;
            with the loader's gate on, a reload whose examples fail is rejected.

    Returns:
        A ``FunctionTool`` for a function, the decorated class for a class, or a decorator.

    Raises:
        ToolDefinitionError: Options that do not fit the decorated object, or a bad definition
            (see ``FunctionTool`` for the errors raised for functions).
    """
    common = _given(
        name=name, description=description, input_schema=input_schema, category=category, tags=tags
    )
    class_only = _given(
        parameters=parameters,
        version=version,
        requires_auth=requires_auth,
        rate_limit=rate_limit,
    )
    function_only = _given(context=context or None, raise_errors=raise_errors or None)
    metadata: Any = None
    if obj is not None and isinstance(obj, (classmethod, staticmethod)) and not callable(obj):
        raise ToolDefinitionError("Put @tool below @classmethod/@staticmethod, directly on the function")
    if obj is not None and not callable(obj):
        metadata, obj = obj, None

    def decorate(target: Any) -> Any:
        if inspect.isclass(target):
            if function_only:
                raise ToolDefinitionError(
                    f"@tool on class {target.__name__}: {', '.join(sorted(function_only))} "
                    "apply to function tools only"
                )
            from .class_tool import decorate_class

            return decorate_class(
                target, metadata=metadata, **common, **class_only, **_given(examples=examples)
            )
        target_name = getattr(target, "__name__", repr(target))
        if metadata is not None:
            raise ToolDefinitionError(
                f"@tool on function {target_name}: a ToolMetadata describes class tools; "
                "pass name=/description=/category=/tags= for a function"
            )
        if class_only:
            raise ToolDefinitionError(
                f"@tool on function {target_name}: {', '.join(sorted(class_only))} apply to class tools only"
            )
        return FunctionTool(
            target,
            name=name,
            description=description,
            input_schema=input_schema,
            context=context,
            raise_errors=raise_errors,
            category=category,
            tags=tags,
            examples=examples,
        )

    if obj is None:
        return decorate
    return decorate(obj)


def _given(**options: Any) -> dict[str, Any]:
    return {key: value for key, value in options.items() if value is not None}
