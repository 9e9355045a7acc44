"""Every return shape a tool can produce, mapped to a ToolResult."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from loader.results import error_result, is_tool_result_like, result_size, to_tool_result


class Point(BaseModel):
    x: int
    y: int


@dataclasses.dataclass
class Pair:
    left: str
    right: tuple[int, int]


class Opaque:
    def __str__(self) -> str:
        return "<opaque thing>"

    __repr__ = __str__


def test_str_becomes_text() -> None:
    assert to_tool_result("hello", "id1") == {
        "toolUseId": "id1",
        "status": "success",
        "content": [{"text": "hello"}],
    }


def test_tool_result_shaped_dict_passes_through_with_the_right_id() -> None:
    given = {"toolUseId": "wrong", "status": "error", "content": [{"text": "nope"}]}
    assert to_tool_result(given, "id2") == {
        "toolUseId": "id2",
        "status": "error",
        "content": [{"text": "nope"}],
    }
    assert given["toolUseId"] == "wrong"


def test_json_values() -> None:
    assert to_tool_result({"a": (1, 2)}, "i")["content"] == [{"json": {"a": [1, 2]}}]
    assert to_tool_result([1, "x"], "i")["content"] == [{"json": [1, "x"]}]
    assert to_tool_result(3, "i")["content"] == [{"json": 3}]
    assert to_tool_result(2.5, "i")["content"] == [{"json": 2.5}]
    assert to_tool_result(True, "i")["content"] == [{"json": True}]
    assert to_tool_result(None, "i")["content"] == [{"json": None}]


def test_models_and_dataclasses_become_json() -> None:
    assert to_tool_result(Point(x=1, y=2), "i")["content"] == [{"json": {"x": 1, "y": 2}}]
    assert to_tool_result(Pair("a", (1, 2)), "i")["content"] == [{"json": {"left": "a", "right": [1, 2]}}]


def test_anything_else_is_its_str() -> None:
    assert to_tool_result(Opaque(), "i")["content"] == [{"text": "<opaque thing>"}]
    assert to_tool_result({"key": Opaque()}, "i")["content"] == [{"text": "{'key': <opaque thing>}"}]


def test_error_result_carries_json_problems() -> None:
    result = error_result("i", "bad", json_content={"errors": [{"parameter": "x", "problem": "missing"}]})
    assert result["status"] == "error"
    assert result["content"] == [
        {"text": "bad"},
        {"json": {"errors": [{"parameter": "x", "problem": "missing"}]}},
    ]


def test_is_tool_result_like() -> None:
    assert is_tool_result_like({"status": "success", "content": []})
    assert not is_tool_result_like({"status": "ok", "content": []})
    assert not is_tool_result_like({"status": "success", "content": "x"})
    assert not is_tool_result_like("success")


def test_subclasses_of_plain_types_take_the_general_path() -> None:
    class Label(str):
        pass

    class Flag(int):
        def __str__(self) -> str:
            return "flag"

    assert to_tool_result(Label("x"), "i")["content"] == [{"text": "x"}]
    assert to_tool_result(Flag(1), "i")["content"] == [{"json": 1}]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (12345, "12345"),
        (-7, "-7"),
        (1.5, "1.5"),
        (1e300, "1e+300"),
        (True, "true"),
        (None, "null"),
        (10**30, "1" + "0" * 30),
    ],
)
def test_a_scalar_json_result_is_measured_exactly_once_it_may_exceed_the_limit(
    value: object, text: str
) -> None:
    result = {"toolUseId": "t", "status": "success", "content": [{"json": value}]}
    assert result_size(result, len(text) - 1) == len(text)
    assert result_size(result, len(text)) is None
