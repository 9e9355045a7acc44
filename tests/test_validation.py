"""Validation problems: one short line per problem, from pydantic and from jsonschema alike."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loader.errors import ToolDefinitionError
from loader.tools.validation import (
    WHOLE_INPUT,
    InputProblem,
    check_json_schema,
    format_problems,
    invalid_input_result,
    problems_from_jsonschema,
    problems_from_pydantic,
)


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    model_config = ConfigDict(extra="forbid")
    street: str
    zip: Annotated[str, Field(pattern=r"^\d{5}$")]


class Order(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = 1
    price: float = 1.0
    name: str = "n"
    urgent: bool = False
    items: list[int] = []
    meta: dict[str, int] = {}
    days: Annotated[int, Field(ge=1, le=14)] = 3
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5
    step: Annotated[int, Field(multiple_of=5)] = 5
    code: Annotated[str, Field(min_length=2, max_length=4)] = "ab"
    pair: Annotated[list[int], Field(min_length=1, max_length=2)] = [1]
    mode: Literal["fast", "slow"] = "fast"
    color: Color = Color.RED
    address: Address | None = None
    choice: int | str = 0
    points: list[Address] = []
    even: int = 0

    @field_validator("even")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even")
        return value


def pydantic_problems(data: Any) -> list[InputProblem]:
    with pytest.raises(ValidationError) as caught:
        Order.model_validate(data)
    return problems_from_pydantic(caught.value, data)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"count": "many"}, [{"parameter": "count", "problem": "must be an integer"}]),
        ({"count": 1.5}, [{"parameter": "count", "problem": "must be a whole number"}]),
        ({"price": "cheap"}, [{"parameter": "price", "problem": "must be a number"}]),
        ({"name": 5}, [{"parameter": "name", "problem": "must be a string"}]),
        ({"urgent": "perhaps"}, [{"parameter": "urgent", "problem": "must be a boolean"}]),
        ({"items": "1,2"}, [{"parameter": "items", "problem": "must be an array"}]),
        ({"meta": [1]}, [{"parameter": "meta", "problem": "must be an object"}]),
        ({"days": 20}, [{"parameter": "days", "problem": "must be at most 14"}]),
        ({"days": 0}, [{"parameter": "days", "problem": "must be at least 1"}]),
        ({"ratio": 1}, [{"parameter": "ratio", "problem": "must be less than 1"}]),
        ({"ratio": 0}, [{"parameter": "ratio", "problem": "must be greater than 0"}]),
        ({"step": 7}, [{"parameter": "step", "problem": "must be a multiple of 5"}]),
        ({"code": "a"}, [{"parameter": "code", "problem": "must have at least 2 characters"}]),
        ({"code": "abcde"}, [{"parameter": "code", "problem": "must have at most 4 characters"}]),
        ({"pair": []}, [{"parameter": "pair", "problem": "must have at least 1 items"}]),
        ({"pair": [1, 2, 3]}, [{"parameter": "pair", "problem": "must have at most 2 items"}]),
        ({"mode": "medium"}, [{"parameter": "mode", "problem": "must be 'fast' or 'slow'"}]),
        ({"color": "green"}, [{"parameter": "color", "problem": "must be 'red' or 'blue'"}]),
        ({"colour": "red"}, [{"parameter": "colour", "problem": "unexpected parameter"}]),
        ({"even": 3}, [{"parameter": "even", "problem": "must be even"}]),
        ({"items": [1, "two", 3]}, [{"parameter": "items.1", "problem": "must be an integer"}]),
        ({"meta": {"a": "b"}}, [{"parameter": "meta.a", "problem": "must be an integer"}]),
        ({"choice": [1]}, [{"parameter": "choice", "problem": "must be an integer or a string"}]),
    ],
)
def test_pydantic_problem_kinds(data: dict[str, Any], expected: list[InputProblem]) -> None:
    assert pydantic_problems(data) == expected


def test_pydantic_nested_paths_are_dotted() -> None:
    data = {
        "address": {"street": "Main", "zip": "12", "floor": 3},
        "points": [{"street": "a", "zip": "12345"}, {"street": "b", "zip": "12345"}, {"zip": "x"}],
    }
    assert pydantic_problems(data) == [
        {"parameter": "address.zip", "problem": "must match the pattern '^\\d{5}$'"},
        {"parameter": "address.floor", "problem": "unexpected field"},
        {"parameter": "points.2.street", "problem": "missing required field"},
        {"parameter": "points.2.zip", "problem": "must match the pattern '^\\d{5}$'"},
    ]


def test_pydantic_missing_top_level_parameter() -> None:
    class Needs(BaseModel):
        model_config = ConfigDict(extra="forbid")
        city: str
        days: int

    with pytest.raises(ValidationError) as caught:
        Needs.model_validate({"days": "x"})
    assert problems_from_pydantic(caught.value, {"days": "x"}) == [
        {"parameter": "city", "problem": "missing required parameter"},
        {"parameter": "days", "problem": "must be an integer"},
    ]


@pytest.mark.parametrize("data", ["just text", ["a"], 3])
def test_pydantic_input_that_is_not_an_object(data: Any) -> None:
    assert pydantic_problems(data) == [
        {"parameter": WHOLE_INPUT, "problem": "must be a JSON object of named parameters"}
    ]


def test_pydantic_dict_key_problem_says_key() -> None:
    class Keys(BaseModel):
        table: dict[int, str]

    with pytest.raises(ValidationError) as caught:
        Keys.model_validate({"table": {"one": "x"}})
    assert problems_from_pydantic(caught.value, {"table": {"one": "x"}}) == [
        {"parameter": "table.one", "problem": "key must be an integer"}
    ]


# -- jsonschema -------------------------------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2, "maxLength": 5},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "step": {"type": "integer", "multipleOf": 5},
        "mode": {"enum": ["fast", "slow"]},
        "fixed": {"const": 1},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "items": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}},
            "required": ["street"],
            "additionalProperties": False,
        },
    },
    "required": ["city"],
    "additionalProperties": False,
}


def jsonschema_problems(data: Any) -> list[InputProblem]:
    return problems_from_jsonschema(Draft202012Validator(SCHEMA).iter_errors(data))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, [{"parameter": "city", "problem": "missing required parameter"}]),
        ({"city": 3}, [{"parameter": "city", "problem": "must be a string"}]),
        ({"city": "a"}, [{"parameter": "city", "problem": "must have at least 2 characters"}]),
        ({"city": "abcdef"}, [{"parameter": "city", "problem": "must have at most 5 characters"}]),
        ({"city": "Oslo", "days": 20}, [{"parameter": "days", "problem": "must be at most 14"}]),
        ({"city": "Oslo", "days": 0}, [{"parameter": "days", "problem": "must be at least 1"}]),
        ({"city": "Oslo", "ratio": 1}, [{"parameter": "ratio", "problem": "must be less than 1"}]),
        ({"city": "Oslo", "ratio": 0}, [{"parameter": "ratio", "problem": "must be greater than 0"}]),
        ({"city": "Oslo", "step": 7}, [{"parameter": "step", "problem": "must be a multiple of 5"}]),
        ({"city": "Oslo", "mode": "x"}, [{"parameter": "mode", "problem": "must be 'fast' or 'slow'"}]),
        ({"city": "Oslo", "fixed": 2}, [{"parameter": "fixed", "problem": "must be 1"}]),
        (
            {"city": "Oslo", "zip": "12"},
            [{"parameter": "zip", "problem": "must match the pattern '^[0-9]{5}$'"}],
        ),
        ({"city": "Oslo", "note": 5}, [{"parameter": "note", "problem": "must be a string or null"}]),
        ({"city": "Oslo", "items": []}, [{"parameter": "items", "problem": "must have at least 1 items"}]),
        (
            {"city": "Oslo", "items": [1, 2, 3]},
            [{"parameter": "items", "problem": "must have at most 2 items"}],
        ),
        ({"city": "Oslo", "items": [1, "x"]}, [{"parameter": "items.1", "problem": "must be an integer"}]),
        ({"city": "Oslo", "colour": "red"}, [{"parameter": "colour", "problem": "unexpected parameter"}]),
        (
            {"city": "Oslo", "address": {"floor": 1}},
            [
                {"parameter": "address.street", "problem": "missing required field"},
                {"parameter": "address.floor", "problem": "unexpected field"},
            ],
        ),
        ("text", [{"parameter": WHOLE_INPUT, "problem": "must be a JSON object of named parameters"}]),
    ],
)
def test_jsonschema_problem_kinds(data: Any, expected: list[InputProblem]) -> None:
    assert jsonschema_problems(data) == expected


def test_jsonschema_several_missing_parameters_are_listed_once_each() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]}
    problems = problems_from_jsonschema(Draft202012Validator(schema).iter_errors({}))
    assert problems == [
        {"parameter": "a", "problem": "missing required parameter"},
        {"parameter": "b", "problem": "missing required parameter"},
    ]


# -- rendering ------------------------------------------------------------------------------------

WEATHER_PROBLEMS: list[InputProblem] = [
    {"parameter": "days", "problem": "must be at most 14"},
    {"parameter": "city", "problem": "missing required parameter"},
    {"parameter": "colour", "problem": "unexpected parameter"},
]


def test_format_problems_one_line_each() -> None:
    assert format_problems("weather", WEATHER_PROBLEMS) == (
        "Invalid input for tool 'weather':\n"
        "- days: must be at most 14\n"
        "- city: missing required parameter\n"
        "- colour: unexpected parameter"
    )


def test_invalid_input_result_carries_text_and_json() -> None:
    assert invalid_input_result("t-1", "weather", WEATHER_PROBLEMS) == {
        "toolUseId": "t-1",
        "status": "error",
        "content": [
            {"text": format_problems("weather", WEATHER_PROBLEMS)},
            {"json": {"errors": WEATHER_PROBLEMS}},
        ],
    }


def test_no_library_noise_in_text() -> None:
    data = {"count": "x", "days": 99, "extra": 1, "address": {"zip": 1}}
    text = format_problems("order", pydantic_problems(data))
    for noise in ("errors.pydantic.dev", "For further information", "input_value", "type=", "Input should"):
        assert noise not in text


# -- checking user schemas ------------------------------------------------------------------------


def test_check_json_schema_accepts_valid_object_schema() -> None:
    validator = check_json_schema(SCHEMA, tool_name="t")
    assert validator.is_valid({"city": "Oslo"})


def test_check_json_schema_rejects_invalid_schema() -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"Tool 't': input_schema is not a valid JSON Schema at properties/x"
    ):
        check_json_schema({"type": "object", "properties": {"x": {"type": "integr"}}}, tool_name="t")


def test_check_json_schema_rejects_non_object_schema() -> None:
    with pytest.raises(ToolDefinitionError, match="must describe an object"):
        check_json_schema({"type": "string"}, tool_name="t")


def test_check_json_schema_rejects_non_dict() -> None:
    with pytest.raises(ToolDefinitionError, match="JSON Schema dict or a pydantic model"):
        check_json_schema(["not", "a", "schema"], tool_name="t")  # type: ignore[arg-type]
