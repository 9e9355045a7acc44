"""Validation problems: one short line per problem, from pydantic and from jsonschema alike; compiled schemas."""

from __future__ import annotations

import asyncio
import json
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loader.errors import ToolDefinitionError
from loader.tools.class_tool import ClassTool, create_tool
from loader.tools.function_tool import FunctionTool
from loader.tools.module_tool import ModuleTool
from loader.tools.validation import (
    WHOLE_INPUT,
    InputProblem,
    _as_details,
    checked_input_schema,
    format_problems,
    invalid_input_result,
    problem_at,
    problems_from_jsonschema,
    problems_from_pydantic,
    problems_payload,
    schema_problems,
    schema_validator,
)
from loader.types import AgentTool, ToolResult

Payload = list[dict[str, str]]


def payload(problems: list[InputProblem]) -> Payload:
    """Problems as the ``{"errors": [...]}`` entries a model receives."""
    return list(problems_payload(problems)["errors"])


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


def pydantic_problems(data: Any) -> Payload:
    with pytest.raises(ValidationError) as caught:
        Order.model_validate(data)
    return payload(problems_from_pydantic(caught.value, data))


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
def test_pydantic_problem_kinds(data: dict[str, Any], expected: Payload) -> None:
    assert pydantic_problems(data) == expected
    # Raised again beside the number rule's problems, pydantic's errors keep their wording.
    with pytest.raises(ValidationError) as caught:
        Order.model_validate(data)
    again = ValidationError.from_exception_data("input", _as_details(caught.value))
    assert payload(problems_from_pydantic(again, data)) == expected


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
    assert payload(problems_from_pydantic(caught.value, {"days": "x"})) == [
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
    assert payload(problems_from_pydantic(caught.value, {"table": {"one": "x"}})) == [
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


def jsonschema_problems(data: Any) -> Payload:
    return payload(problems_from_jsonschema(Draft202012Validator(SCHEMA).iter_errors(data)))


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
def test_jsonschema_problem_kinds(data: Any, expected: Payload) -> None:
    assert jsonschema_problems(data) == expected


def test_jsonschema_several_missing_parameters_are_listed_once_each() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]}
    problems = problems_from_jsonschema(Draft202012Validator(schema).iter_errors({}))
    assert payload(problems) == [
        {"parameter": "a", "problem": "missing required parameter"},
        {"parameter": "b", "problem": "missing required parameter"},
    ]


# -- rendering ------------------------------------------------------------------------------------

WEATHER_PROBLEMS: list[InputProblem] = [
    problem_at("days", "must be at most 14"),
    problem_at("city", "missing required parameter"),
    problem_at("colour", "unexpected parameter"),
]


def test_problem_sentences_are_worded_from_path_and_phrase() -> None:
    assert [p.message for p in WEATHER_PROBLEMS] == [
        "Parameter days must be at most 14",
        "Missing required parameter: city",
        "Unexpected parameter: colour",
    ]
    assert problem_at(None, "must be an object") == InputProblem(
        None, "must be an object", "Tool input must be an object"
    )
    assert problem_at(WHOLE_INPUT, "x").parameter is None


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
            {
                "json": {
                    "errors": [
                        {"parameter": "days", "problem": "must be at most 14"},
                        {"parameter": "city", "problem": "missing required parameter"},
                        {"parameter": "colour", "problem": "unexpected parameter"},
                    ]
                }
            },
        ],
    }


def test_no_library_noise_in_text() -> None:
    data = {"count": "x", "days": 99, "extra": 1, "address": {"zip": 1}}
    with pytest.raises(ValidationError) as caught:
        Order.model_validate(data)
    text = format_problems("order", problems_from_pydantic(caught.value, data))
    for noise in ("errors.pydantic.dev", "For further information", "input_value", "type=", "Input should"):
        assert noise not in text


def test_sentences_render_each_problem_s_message() -> None:
    assert format_problems("weather", WEATHER_PROBLEMS, sentences=True) == (
        "Invalid input for tool 'weather':\n"
        "Parameter days must be at most 14\n"
        "Missing required parameter: city\n"
        "Unexpected parameter: colour"
    )


# -- checking and compiling user schemas ----------------------------------------------------------


def test_checked_input_schema_accepts_valid_object_schema() -> None:
    validator = checked_input_schema(SCHEMA, tool_name="t")
    assert validator.is_valid({"city": "Oslo"})


def test_checked_input_schema_rejects_invalid_schema() -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"Tool 't': input_schema is not a valid JSON Schema at properties/x"
    ):
        checked_input_schema({"type": "object", "properties": {"x": {"type": "integr"}}}, tool_name="t")


def test_checked_input_schema_rejects_non_object_schema() -> None:
    with pytest.raises(ToolDefinitionError, match="must describe an object"):
        checked_input_schema({"type": "string"}, tool_name="t")


def test_checked_input_schema_rejects_non_dict() -> None:
    with pytest.raises(ToolDefinitionError, match="JSON Schema dict or a pydantic model"):
        checked_input_schema(["not", "a", "schema"], tool_name="t")  # type: ignore[arg-type]


def test_a_schema_compiles_once_and_keeps_its_own_copy() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}}
    first = schema_validator(schema)
    assert schema_validator(json.loads(json.dumps(schema))) is first
    schema["properties"]["n"]["maximum"] = 100  # the caller's dict changes afterwards
    assert not first.is_valid({"n": 50})
    assert schema_validator(schema) is not first


def test_schema_problems_in_schema_order_with_class_tool_sentences() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "o": {"type": "object", "required": ["z"]}},
        "required": ["a"],
        "additionalProperties": False,
    }
    validator = schema_validator(schema)
    assert [p.message for p in schema_problems({"o": {}, "b": 1}, validator)] == [
        "Missing required parameter: o.z",  # properties come first in the schema
        "Missing required parameter: a",
        "Unexpected parameter: b",
    ]
    assert [p.message for p in schema_problems({"a": "x" * 1000}, validator)] == [
        "Parameter a must be an integer"  # the offending value is not echoed back
    ]
    assert schema_problems({"a": 1}, validator) == []


NUMBERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "i": {"type": "integer"},
        "free": {"type": "number", "allowNonFinite": True},
        "xs": {"type": "array", "items": {"type": "number"}},
    },
}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"n": True}, [{"parameter": "n", "problem": "must be a number"}]),
        ({"i": False}, [{"parameter": "i", "problem": "must be an integer"}]),
        ({"n": float("nan")}, [{"parameter": "n", "problem": "must be a finite number"}]),
        ({"n": float("-inf")}, [{"parameter": "n", "problem": "must be a finite number"}]),
        ({"i": float("inf")}, [{"parameter": "i", "problem": "must be an integer"}]),
        ({"xs": [1.5, float("nan")]}, [{"parameter": "xs.1", "problem": "must be a finite number"}]),
        ({"free": float("nan")}, []),
        ({"free": float("inf"), "n": 2.5, "i": 3}, []),
    ],
)
def test_number_rule_in_json_schemas(data: dict[str, Any], expected: Payload) -> None:
    assert payload(schema_problems(data, schema_validator(NUMBERS))) == expected


# -- the number rule on every path ----------------------------------------------------------------
# A bool is never a number, and NaN/infinities are refused unless the schema says "allowNonFinite".


class Measure(BaseModel):
    size: float
    count: int = 0


def _function_tools() -> list[FunctionTool[..., Any]]:
    def by_signature(size: float, count: int = 0, sizes: list[float] | None = None) -> str:
        """Signature."""
        return "ran"

    def by_model(measure: Measure) -> str:
        """Model instance."""
        return "ran"

    def by_fields(size: float, count: int = 0) -> str:
        """Model fields."""
        return "ran"

    def by_dict(size: float, count: int = 0) -> str:
        """Dict schema."""
        return "ran"

    dict_schema = {
        "type": "object",
        "properties": {"size": {"type": "number"}, "count": {"type": "integer"}},
        "required": ["size"],
    }
    return [
        FunctionTool(by_signature),
        FunctionTool(by_model, input_schema=Measure),
        FunctionTool(by_fields, input_schema=Measure),
        FunctionTool(by_dict, input_schema=dict_schema),
    ]


def _module_tool() -> ModuleTool:
    spec: Any = {
        "name": "module_numbers",
        "description": "Module.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"size": {"type": "number"}, "count": {"type": "integer"}},
                "required": ["size"],
            }
        },
    }
    return ModuleTool(spec, lambda tool_use, **kwargs: "ran")


def _class_tool() -> ClassTool:
    return create_tool(
        {
            "name": "class_numbers",
            "parameters": {"size": {"type": "number"}, "count": {"type": "integer", "required": False}},
        },
        lambda params: "ran",
    )


def _every_tool() -> list[AgentTool]:
    return [*_function_tools(), _module_tool(), _class_tool()]


def _problems(result: ToolResult) -> list[str]:
    assert result["status"] == "error", result
    return [str(error["parameter"]) for error in result["content"][1]["json"]["errors"]]


@pytest.mark.parametrize("tool", _every_tool(), ids=lambda t: t.tool_name)
def test_a_bool_is_never_a_number_on_any_path(tool: AgentTool) -> None:
    assert tool.invoke({"size": 1.5, "count": 2})["content"] == [{"text": "ran"}]
    assert _problems(tool.invoke({"size": True})) == ["size"]
    assert _problems(tool.invoke({"size": 1.0, "count": False})) == ["count"]
    assert _problems(asyncio.run(tool.ainvoke({"size": True}))) == ["size"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("tool", _every_tool(), ids=lambda t: t.tool_name)
def test_non_finite_numbers_are_refused_on_any_path(tool: AgentTool, value: float) -> None:
    result = tool.invoke({"size": value})
    assert _problems(result) == ["size"]
    assert "finite" in str(result["content"][0])


def test_the_function_tool_message_for_numbers() -> None:
    tool = _function_tools()[0]
    result = tool.invoke({"size": True, "sizes": [1.0, float("nan")]})
    assert result["content"][0] == {
        "text": "Invalid input for tool 'by_signature':\n- size: must be a number\n- sizes.1: must be a finite number"
    }


def test_a_pydantic_field_can_allow_non_finite_numbers_and_the_schema_says_so() -> None:
    def loose(size: Annotated[float, Field(allow_inf_nan=True)], strict: float = 0.0) -> str:
        """Loose."""
        return str(size)

    tool = FunctionTool(loose)
    properties = tool.tool_spec["inputSchema"]["json"]["properties"]
    assert properties["size"]["allowNonFinite"] is True
    assert "allowNonFinite" not in properties["strict"]
    assert tool.invoke({"size": float("inf")})["content"] == [{"text": "inf"}]
    assert _problems(tool.invoke({"size": 1.0, "strict": float("nan")})) == ["strict"]


def test_a_bool_stays_welcome_where_a_bool_is_expected() -> None:
    def flags(on: bool, level: int | bool = 0) -> str:
        """Flags."""
        return f"{on} {level}"

    tool = FunctionTool(flags)
    assert tool.invoke({"on": True, "level": True})["content"] == [{"text": "True True"}]


def test_number_problems_are_listed_with_the_other_problems() -> None:
    def mixed(n: int, name: str, ratio: Annotated[float, Field(ge=0, le=1)] = 0.5) -> str:
        """Mixed."""
        return name

    result = FunctionTool(mixed).invoke({"n": True, "name": 5, "ratio": 3})
    assert result["content"][1] == {
        "json": {
            "errors": [
                {"parameter": "name", "problem": "must be a string"},
                {"parameter": "ratio", "problem": "must be at most 1"},
                {"parameter": "n", "problem": "must be an integer"},
            ]
        }
    }
