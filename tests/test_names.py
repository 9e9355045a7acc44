"""The one tool-name rule shared by every tool kind, the registry and the loader."""

from __future__ import annotations

import pytest

from loader.errors import InvalidToolNameError
from loader.names import TOOL_NAME_PATTERN, check_tool_name, is_valid_tool_name, normalise_tool_name

CASES = [
    ("a", True),
    ("my-tool_2", True),
    ("x" * 64, True),
    ("", False),
    ("x" * 65, False),
    ("a b", False),
    ("a\n", False),
    ("\na", False),
    ("naïve", False),
    ("a.b", False),
    (3, False),
    (None, False),
]


@pytest.mark.parametrize(("name", "valid"), CASES)
def test_is_valid_tool_name(name: object, valid: bool) -> None:
    assert is_valid_tool_name(name) is valid


@pytest.mark.parametrize(("name", "valid"), CASES)
def test_check_tool_name_returns_the_name_or_raises(name: object, valid: bool) -> None:
    if valid:
        assert check_tool_name(name) == name
    else:
        with pytest.raises(InvalidToolNameError) as info:
            check_tool_name(name)
        assert info.value.name == str(name)
        assert "1 to 64 characters" in str(info.value)


@pytest.mark.parametrize(("name", "valid"), CASES)
def test_the_pattern_checks_the_whole_name_whichever_method_is_used(name: object, valid: bool) -> None:
    if isinstance(name, str):
        for method in (TOOL_NAME_PATTERN.match, TOOL_NAME_PATTERN.fullmatch, TOOL_NAME_PATTERN.search):
            assert (method(name) is not None) is valid


def test_normalise_tool_name() -> None:
    assert normalise_tool_name("my-tool") == normalise_tool_name("my_tool") == "my_tool"
    assert normalise_tool_name("plain") == "plain"


def test_every_tool_kind_uses_the_same_rule() -> None:
    from loader.tools.function_tool import FunctionTool
    from loader.tools.metadata import ToolMetadata
    from loader.tools.metadata import is_valid_tool_name as metadata_check

    def f() -> None:
        """A tool."""

    assert metadata_check is is_valid_tool_name
    with pytest.raises(InvalidToolNameError):
        FunctionTool(f, name="bad\n")
    with pytest.raises(ValueError, match="invalid tool name"):
        ToolMetadata(name="bad\n")
