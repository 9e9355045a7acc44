"""``@prompt`` and ``@resource``: a function becomes a prompt, a resource or a resource template.

The function's parameters are the prompt's arguments (or the template's
placeholders), described by the docstring and ``Annotated``/``Field`` as for
tools; ``Literal`` and ``Enum`` parameters give the values completion offers.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args, get_origin, overload

from ..context.tool_context import ToolContext
from ..errors import ToolDefinitionError
from ..tools.docstrings import docstring_of
from ..tools.schema import parameter_description, resolve_type_hints
from ..types import ToolUse, new_tool_use_id, run_sync
from .prompts import Complete, Prompt, PromptArgument
from .resources import Resource, ResourceTemplate, check_uri, placeholders

__all__ = ["prompt", "resource"]


def _parameters(function: Callable[..., Any], what: str) -> list[inspect.Parameter]:
    parameters = list(inspect.signature(function).parameters.values())
    for parameter in parameters:
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ToolDefinitionError(f"{what} {function.__name__!r}: *args and **kwargs cannot be arguments")
    return parameters


def _choices(hint: Any) -> tuple[str, ...]:
    """The values a ``Literal`` or ``Enum`` hint allows, as text."""
    while get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    if get_origin(hint) is Literal:
        return tuple(str(value) for value in get_args(hint))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return tuple(str(member.value) for member in hint)
    return ()


def _converter(hint: Any) -> Callable[[str], Any]:
    while get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        members = {str(member.value): member for member in hint}
        return lambda text: members.get(text, text)
    return lambda text: text


def _caller(function: Callable[..., Any], hints: dict[str, Any]) -> Callable[..., Any]:
    """Call ``function`` with text arguments (enums converted), to the end even if it is async."""
    converters = {name: _converter(hint) for name, hint in hints.items()}

    def call(**arguments: Any) -> Any:
        converted = {
            name: converters[name](value) if name in converters and isinstance(value, str) else value
            for name, value in arguments.items()
        }
        if inspect.iscoroutinefunction(function):
            return run_sync(lambda: function(**converted))
        return function(**converted)

    return call


def _prompt_of(
    function: Callable[..., Any],
    name: str | None,
    title: str | None,
    description: str | None,
    complete: Complete | None,
) -> Prompt:
    parameters = _parameters(function, "prompt")
    hints = resolve_type_hints(function.__name__, function, parameters)
    context = next((p.name for p in parameters if hints.get(p.name) is ToolContext), None)
    parameters = [p for p in parameters if p.name != context]  # the context is no argument
    doc = docstring_of(function)
    arguments = tuple(
        PromptArgument(
            p.name,
            parameter_description(hints.get(p.name), p.default) or doc.params.get(p.name),
            p.default is inspect.Parameter.empty,
        )
        for p in parameters
    )
    call = _caller(function, hints)
    values = {p.name: found for p in parameters if (found := _choices(hints.get(p.name)))}
    prompt_name = name or function.__name__

    def render(given: dict[str, str], state: dict[str, Any] | None) -> Any:
        if context is None:
            return call(**given)
        tool_use: ToolUse = {"toolUseId": new_tool_use_id(), "name": prompt_name, "input": dict(given)}
        return call(**given, **{context: ToolContext.for_call(tool_use, dict(state or {}))})

    return Prompt(
        prompt_name,
        render,
        title=title,
        description=description or doc.description or None,
        arguments=arguments,
        values=values,
        complete=complete,
    )


@overload
def prompt(function: Callable[..., Any], /) -> Prompt: ...
@overload
def prompt(
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    complete: Complete | None = None,
) -> Callable[[Callable[..., Any]], Prompt]: ...
def prompt(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    complete: Complete | None = None,
) -> Prompt | Callable[[Callable[..., Any]], Prompt]:
    """Make a function a prompt; it returns text (one user message), messages or content blocks."""

    def decorate(target: Callable[..., Any]) -> Prompt:
        found = _prompt_of(target, name, title, description, complete)
        found.module = target.__module__
        return found

    return decorate if function is None else decorate(function)


def resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    complete: Complete | None = None,
) -> Callable[[Callable[..., Any]], Resource | ResourceTemplate]:
    """Make a function a resource (returning ``str`` or ``bytes``); ``{param}`` s make it a template.

    Raises:
        ToolDefinitionError: ``uri`` is not a URI, or its placeholders are not the function's parameters.
    """

    def decorate(function: Callable[..., Any]) -> Resource | ResourceTemplate:
        found = _resource_of(function)
        found.module = function.__module__
        return found

    def _resource_of(function: Callable[..., Any]) -> Resource | ResourceTemplate:
        where = f"resource {function.__name__!r}"
        check_uri(uri, where)
        parameters = _parameters(function, "resource")
        wanted, given = set(placeholders(uri)), {p.name for p in parameters}
        if wanted != given:
            raise ToolDefinitionError(
                f"{where}: the URI's placeholders {sorted(wanted)}"
                f" are not the function's parameters {sorted(given)}"
            )
        hints = resolve_type_hints(function.__name__, function, parameters)
        call = _caller(function, hints)
        text = description or docstring_of(function).description or None
        if not wanted:
            return Resource(
                uri, call, name=name or function.__name__, title=title, description=text, mime_type=mime_type
            )
        values = {p.name: found for p in parameters if (found := _choices(hints.get(p.name)))}
        return ResourceTemplate(
            uri,
            call,
            name=name or function.__name__,
            title=title,
            description=text,
            mime_type=mime_type,
            values=values,
            complete=complete,
        )

    return decorate
