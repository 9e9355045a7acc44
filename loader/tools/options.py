"""``ToolOptions``: what ``@tool(...)`` was given, in one object passed whole to the tool's builder.

``@tool`` checks which options fit the decorated object (function or class),
then hands the same frozen object to ``FunctionTool``/``define_function`` or to
``decorate_class_with``; no layer below ``@tool`` repeats the list of options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypedDict

from pydantic import BaseModel

from ..types import JSONSchema

__all__ = [
    "CLASS_ONLY",
    "FUNCTION_ONLY",
    "ClassKeywords",
    "FunctionKeywords",
    "ToolKeywords",
    "ToolOptions",
    "options_of",
]

FUNCTION_ONLY = ("context", "raise_errors")
"""Options that only mean something for function tools."""

CLASS_ONLY = ("parameters", "version", "requires_auth", "rate_limit")
"""Options that only mean something for class tools."""


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """The options of ``@tool``; every field's default means "not given".

    Attributes:
        name: The tool name (default: the function's name, or the class name in snake_case);
            ``^[A-Za-z0-9_-]{1,64}$``.
        description: The description (default: the docstring's summary and body, else the name).
        input_schema: A JSON Schema dict (or, for functions, a pydantic model class) replacing the
            generated schema, for validation as well as for the spec.
        category: A grouping for listings and search.
        tags: Labels for listings and search.
        context: Functions only: ``True`` to inject a ``ToolContext`` into ``tool_context``, or the
            parameter's name.
        raise_errors: Functions only: let the function's exceptions propagate.
        parameters: Classes only: the declared ``ToolParameter`` s (models or dicts).
        version: Classes only.
        requires_auth: Classes only.
        rate_limit: Classes only.
        examples: Worked calls, ``[{"description": ..., "params": {...}, "expected_output": ...}]``;
            with the loader's gate on, a reload whose examples fail is rejected.
        search_hint: Extra words ``search_tools`` finds the tool by.
        always_load: List the tool itself in a search-mode listing (``hybrid``).

    ``ToolKeywords`` and its parts type the same options as keywords, for the signatures that take them.
    """

    name: str | None = None
    description: str | None = None
    input_schema: JSONSchema | type[BaseModel] | None = None
    category: str | None = None
    tags: Iterable[str] | None = None
    context: bool | str = False
    raise_errors: bool = False
    parameters: Mapping[str, Any] | None = None
    version: str | None = None
    requires_auth: bool | None = None
    rate_limit: Any = None
    examples: Any = None
    search_hint: str | None = None
    always_load: bool = False

    def given(self, names: Iterable[str]) -> list[str]:
        """Which of ``names`` were given (differ from their defaults), sorted, for error messages."""
        defaults = _DEFAULTS
        return sorted(name for name in names if getattr(self, name) != defaults[name])

    def given_values(self) -> dict[str, Any]:
        """The options that were given, by name."""
        return {name: getattr(self, name) for name in self.given(_DEFAULTS)}


class _CommonKeywords(TypedDict, total=False):
    name: str | None
    description: str | None
    input_schema: JSONSchema | type[BaseModel] | None
    category: str | None
    tags: Iterable[str] | None
    examples: Any


class FunctionKeywords(_CommonKeywords, total=False):
    """The option keywords a function tool takes (``FunctionTool(func, **keywords)``)."""

    context: bool | str
    raise_errors: bool


class ClassKeywords(_CommonKeywords, total=False):
    """The option keywords a class tool takes (``@tool(ToolMetadata(...), **keywords)``)."""

    parameters: Any
    version: str | None
    requires_auth: bool | None
    rate_limit: Any


class ToolKeywords(FunctionKeywords, ClassKeywords, total=False):
    """Every option keyword of ``@tool(...)``: the fields of ``ToolOptions``, typed for ``Unpack``."""

    search_hint: str | None
    always_load: bool


_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(ToolOptions)}


def options_of(keywords: Mapping[str, Any], accepted: Any, where: str) -> ToolOptions:
    """``keywords`` as ``ToolOptions``, refusing one that the TypedDict ``accepted`` does not list.

    Raises:
        TypeError: As a signature that spelled the keywords out would (``where`` names the callable).
    """
    unknown = sorted(set(keywords) - accepted.__optional_keys__ - accepted.__required_keys__)
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    return ToolOptions(**keywords)
