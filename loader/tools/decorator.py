"""The public ``@tool`` decorator, for functions and classes.

Usable bare (``@tool``) or with options (``@tool(name=..., ...)``); the
``@overload`` s tell editors and type checkers what each form returns. The
options become one ``ToolOptions``; a function becomes a ``FunctionTool``, a
class is handed to ``loader.tools.class_definition`` (imported lazily, only when a
class is decorated). A ``ToolMetadata`` may be given positionally for classes:
``@tool(ToolMetadata(...))``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, Unpack, overload

from ..errors import ToolDefinitionError
from .class_tool import decorate_class_with
from .function_tool import FunctionTool
from .options import CLASS_ONLY, FUNCTION_ONLY, ClassKeywords, ToolKeywords, ToolOptions
from .schema import caller_namespace

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
def tool(obj: None = None, /, **keywords: Unpack[ToolKeywords]) -> ToolDecorator: ...
@overload
def tool(obj: ToolMetadata, /, **keywords: Unpack[ClassKeywords]) -> Callable[[C], C]: ...
def tool(obj: Any = None, /, **keywords: Unpack[ToolKeywords]) -> Any:
    """Turn a function (or a class) into a tool.

    Annotations may name things local to the function or class body the tool
    is defined in (``from __future__ import annotations`` makes every
    annotation a string): they are resolved against that body's names as they
    are when ``@tool`` runs, as pydantic's ``validate_call`` does.

    Args:
        obj: The function or class when used bare (``@tool``); a ``ToolMetadata`` for classes.
        **keywords: The options, described on ``ToolOptions`` (``name``, ``description``,
            ``input_schema``, ``context``, ``raise_errors``, ``category``, ``tags``, ``examples``,
            ``search_hint``, ``always_load``; for classes ``parameters``, ``version``,
            ``requires_auth``, ``rate_limit``).

    Returns:
        A ``FunctionTool`` for a function, the decorated class for a class, or a decorator.

    Raises:
        ToolDefinitionError: Options that do not fit the decorated object, or a bad definition
            (see ``FunctionTool`` for the errors raised for functions).
    """
    options = ToolOptions(**keywords)
    if obj is not None and isinstance(obj, (classmethod, staticmethod)) and not callable(obj):
        raise ToolDefinitionError("Put @tool below @classmethod/@staticmethod, directly on the function")
    if obj is not None and callable(obj):
        return _decorate(obj, options, None, caller_namespace())
    metadata = obj

    def decorate(target: Any) -> Any:
        return _decorate(target, options, metadata, caller_namespace())

    return decorate


def _decorate(target: Any, options: ToolOptions, metadata: Any, namespace: Mapping[str, Any] | None) -> Any:
    """Build the tool for ``target`` once the options are known to fit it."""
    if inspect.isclass(target):
        function_only = options.given(FUNCTION_ONLY)
        if function_only:
            raise ToolDefinitionError(
                f"@tool on class {target.__name__}: {', '.join(function_only)} apply to function tools only"
            )
        return decorate_class_with(target, metadata, options)
    target_name = getattr(target, "__name__", repr(target))
    if metadata is not None:
        raise ToolDefinitionError(
            f"@tool on function {target_name}: a ToolMetadata describes class tools; "
            "pass name=/description=/category=/tags= for a function"
        )
    class_only = options.given(CLASS_ONLY)
    if class_only:
        raise ToolDefinitionError(
            f"@tool on function {target_name}: {', '.join(class_only)} apply to class tools only"
        )
    return FunctionTool(target, options, namespace=namespace or {})  # {}: none, not ours
