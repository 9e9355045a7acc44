"""``ToolOptions`` and the keyword ``TypedDict`` s that type it: one list of options, told two ways.

A field added to ``ToolOptions`` and not to the keywords (or the other way round)
would leave ``@tool``'s signature and the options object disagreeing; these tests
say which keys belong where, so such a change fails here.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from loader.tools.options import (
    CLASS_ONLY,
    FUNCTION_ONLY,
    ClassKeywords,
    FunctionKeywords,
    ToolKeywords,
    ToolOptions,
    _CommonKeywords,
)

OPTIONS = frozenset(f.name for f in fields(ToolOptions))
DECORATOR_ONLY = frozenset({"search_hint", "always_load"})
"""Options only ``@tool`` takes: ``FunctionTool(...)`` and ``decorate_class(...)`` refuse them."""


def _keys(typed_dict: Any) -> frozenset[str]:
    return frozenset(typed_dict.__optional_keys__ | typed_dict.__required_keys__)


def test_every_keyword_is_optional() -> None:
    for typed_dict in (_CommonKeywords, FunctionKeywords, ClassKeywords, ToolKeywords):
        assert typed_dict.__required_keys__ == frozenset(), typed_dict.__name__


def test_the_decorator_keywords_are_the_fields_of_tool_options() -> None:
    assert _keys(ToolKeywords) == OPTIONS


def test_the_kind_only_lists_are_fields_and_apart() -> None:
    assert set(FUNCTION_ONLY) <= OPTIONS
    assert set(CLASS_ONLY) <= OPTIONS
    assert not set(FUNCTION_ONLY) & set(CLASS_ONLY)
    assert not DECORATOR_ONLY & (set(FUNCTION_ONLY) | set(CLASS_ONLY))


def test_the_common_keywords_are_every_field_no_kind_owns() -> None:
    assert _keys(_CommonKeywords) == OPTIONS - set(FUNCTION_ONLY) - set(CLASS_ONLY) - DECORATOR_ONLY


def test_function_keywords_are_the_common_ones_and_the_function_only_ones() -> None:
    assert _keys(FunctionKeywords) == _keys(_CommonKeywords) | set(FUNCTION_ONLY)


def test_class_keywords_are_the_common_ones_and_the_class_only_ones() -> None:
    assert _keys(ClassKeywords) == _keys(_CommonKeywords) | set(CLASS_ONLY)
