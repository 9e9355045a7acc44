"""check_tool_params and validate_tool_params: messages, order, nesting, raising, and the JSON Schema translation."""

from __future__ import annotations

from typing import Any

import pytest

import loader
from loader.errors import InputProblem, ToolValidationError
from loader.tools.metadata import ToolParameter
from loader.tools.params import (
    ParameterSpecs,
    apply_defaults,
    check_tool_params,
    definition_problems,
    parameters_to_json_schema,
    validate_tool_params,
)

WEATHER: dict[str, Any] = {
    "city": {"type": "string", "description": "City name"},
    "code": {"type": "string", "pattern": "^[A-Z]{3}$", "required": False},
    "days": {"type": "integer", "min": 1, "max": 14, "default": 3},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "required": False},
}


def messages(params: Any, parameters: ParameterSpecs) -> list[str]:
    """The problem sentences ``check_tool_params`` finds (``validate_tool_params`` raises them)."""
    return [problem.message for problem in check_tool_params(params, parameters)]


class TestRules:
    def test_valid_input(self) -> None:
        assert messages({"city": "Paris", "days": 2, "unit": "celsius", "code": "CDG"}, WEATHER) == []

    def test_missing_required(self) -> None:
        assert messages({}, WEATHER) == ["Missing required parameter: city"]

    def test_a_parameter_with_a_default_is_never_missing(self) -> None:
        params = {"n": {"type": "integer", "default": 1}}
        assert messages({}, params) == []

    def test_none_counts_as_not_given(self) -> None:
        assert messages({"city": None, "unit": None}, WEATHER) == ["Missing required parameter: city"]

    def test_type(self) -> None:
        assert messages({"city": 3}, WEATHER) == ["Parameter city must be of type string"]

    def test_wrong_type_stops_further_checks_of_that_value(self) -> None:
        assert messages({"city": "x", "days": "many"}, WEATHER) == ["Parameter days must be of type integer"]

    def test_pattern_is_searched(self) -> None:
        assert messages({"city": "x", "code": "cdg"}, WEATHER) == [
            "Parameter code does not match pattern ^[A-Z]{3}$"
        ]
        assert messages({"s": "xxabcxx"}, {"s": {"type": "string", "pattern": "abc"}}) == []

    def test_bounds(self) -> None:
        assert messages({"city": "x", "days": 20}, WEATHER) == ["Parameter days must be at most 14"]
        assert messages({"city": "x", "days": 0}, WEATHER) == ["Parameter days must be at least 1"]
        assert messages({"city": "x", "days": 14}, WEATHER) == []

    def test_enum(self) -> None:
        assert messages({"city": "x", "unit": "kelvin"}, WEATHER) == [
            "Parameter unit must be one of: celsius, fahrenheit"
        ]

    def test_unexpected(self) -> None:
        assert messages({"city": "x", "zzz": 1}, WEATHER) == ["Unexpected parameter: zzz"]

    def test_every_problem_in_declaration_order_then_unexpected(self) -> None:
        assert messages({"extra": 1, "unit": "k", "days": 99, "code": "no"}, WEATHER) == [
            "Missing required parameter: city",
            "Parameter code does not match pattern ^[A-Z]{3}$",
            "Parameter days must be at most 14",
            "Parameter unit must be one of: celsius, fahrenheit",
            "Unexpected parameter: extra",
        ]

    def test_one_value_can_break_several_rules(self) -> None:
        params = {"n": {"type": "number", "min": 10, "enum": [20, 30]}}
        assert messages({"n": 5}, params) == [
            "Parameter n must be at least 10",
            "Parameter n must be one of: 20, 30",
        ]

    @pytest.mark.parametrize(
        ("kind", "good", "bad"),
        [
            ("string", "s", 1),
            ("number", 1.5, True),
            ("number", 2, "2"),
            ("integer", 2, 2.0),
            ("integer", -1, False),
            ("boolean", False, 0),
            ("array", [1], (1,)),
            ("object", {"a": 1}, [("a", 1)]),
        ],
    )
    def test_types(self, kind: str, good: object, bad: object) -> None:
        params = {"v": {"type": kind}}
        assert messages({"v": good}, params) == []
        assert messages({"v": bad}, params) == [f"Parameter v must be of type {kind}"]

    def test_input_must_be_an_object(self) -> None:
        assert messages([1], WEATHER) == ["Tool input must be a JSON object of named parameters, not list"]

    def test_accepts_models_as_well_as_dicts(self) -> None:
        params = {"a": ToolParameter(type="string")}
        assert messages({}, params) == ["Missing required parameter: a"]


class TestNesting:
    ADDRESS: dict[str, Any] = {
        "address": {
            "type": "object",
            "properties": {
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                "street": {"type": "string", "required": False},
            },
        },
        "tags": {"type": "array", "required": False, "items": {"type": "string", "enum": ["a", "b"]}},
        "people": {
            "type": "array",
            "required": False,
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        "free": {"type": "object", "required": False},
    }

    def test_object_properties(self) -> None:
        assert messages({"address": {"zip": "1"}}, self.ADDRESS) == [
            "Parameter address.zip does not match pattern ^[0-9]{5}$"
        ]
        assert messages({"address": {}}, self.ADDRESS) == ["Missing required parameter: address.zip"]
        assert messages({"address": {"zip": "12345", "x": 1}}, self.ADDRESS) == [
            "Unexpected parameter: address.x"
        ]

    def test_array_items(self) -> None:
        assert messages({"address": {"zip": "12345"}, "tags": ["a", "b", "c", 4]}, self.ADDRESS) == [
            "Parameter tags.2 must be one of: a, b",
            "Parameter tags.3 must be of type string",
        ]

    def test_objects_inside_arrays(self) -> None:
        problems = check_tool_params(
            {"address": {"zip": "12345"}, "people": [{"name": "x"}, {}]}, self.ADDRESS
        )
        assert problems == [
            InputProblem(
                "people.1.name", "missing required parameter", "Missing required parameter: people.1.name"
            )
        ]

    def test_object_without_properties_takes_anything(self) -> None:
        assert messages({"address": {"zip": "12345"}, "free": {"any": [1]}}, self.ADDRESS) == []


def test_structured_problems_carry_path_and_short_phrase() -> None:
    assert check_tool_params({"days": 0, "x": 1}, WEATHER) == [
        InputProblem("city", "missing required parameter", "Missing required parameter: city"),
        InputProblem("days", "must be at least 1", "Parameter days must be at least 1"),
        InputProblem("x", "unexpected parameter", "Unexpected parameter: x"),
    ]
    assert check_tool_params("text", WEATHER) == [
        InputProblem(
            None,
            "must be a JSON object of named parameters, not str",
            "Tool input must be a JSON object of named parameters, not str",
        )
    ]


class TestJsonSchema:
    def test_whole_translation(self) -> None:
        assert parameters_to_json_schema(WEATHER) == {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        }

    def test_nested_translation(self) -> None:
        assert parameters_to_json_schema(TestNesting.ADDRESS) == {
            "type": "object",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {
                        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                        "street": {"type": "string"},
                    },
                    "required": ["zip"],
                    "additionalProperties": False,
                },
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "people": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                        "additionalProperties": False,
                    },
                },
                "free": {"type": "object"},
            },
            "required": ["address"],
            "additionalProperties": False,
        }

    def test_no_parameters(self) -> None:
        assert parameters_to_json_schema({}) == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }


class TestValidateToolParamsRaises:
    """The reference's ``validateToolParams`` throws a descriptive error; ours raises ``ToolValidationError``."""

    def test_valid_input_returns_none(self) -> None:
        validate_tool_params({"city": "Paris"}, WEATHER)  # no exception: valid

    def test_message_is_one_sentence_per_line_and_problems_are_kept(self) -> None:
        with pytest.raises(ToolValidationError) as caught:
            validate_tool_params({"days": 20}, WEATHER)
        assert str(caught.value) == "Missing required parameter: city\nParameter days must be at most 14"
        assert caught.value.problems == (
            InputProblem("city", "missing required parameter", "Missing required parameter: city"),
            InputProblem("days", "must be at most 14", "Parameter days must be at most 14"),
        )

    def test_is_a_value_error_of_the_project_exported_at_the_top(self) -> None:
        assert issubclass(loader.ToolValidationError, ValueError)
        assert issubclass(loader.ToolValidationError, loader.ToolLoaderError)
        with pytest.raises(
            ValueError, match=r"^Tool input must be a JSON object of named parameters, not list$"
        ):
            loader.validate_tool_params([1], WEATHER)
        assert loader.check_tool_params([1], WEATHER)[0].parameter is None


class TestNumbers:
    """A number is never a bool, and a declared number is never NaN or an infinity."""

    @pytest.mark.parametrize("kind", ["integer", "number"])
    @pytest.mark.parametrize("value", [True, False])
    def test_a_bool_is_not_a_number(self, kind: str, value: bool) -> None:
        assert messages({"v": value}, {"v": {"type": kind}}) == [f"Parameter v must be of type {kind}"]

    @pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
    def test_non_finite_numbers_are_refused(self, value: float) -> None:
        assert messages({"v": value}, {"v": {"type": "number"}}) == ["Parameter v must be a finite number"]
        assert messages({"v": value}, {"v": {"type": "number", "max": 10}}) == [
            "Parameter v must be a finite number"
        ]
        assert messages({"v": value}, {"v": {"type": "integer"}}) == ["Parameter v must be of type integer"]

    def test_nested_numbers_follow_the_same_rule(self) -> None:
        params = {"xs": {"type": "array", "items": {"type": "number"}}}
        assert messages({"xs": [1, True, float("nan")]}, params) == [
            "Parameter xs.1 must be of type number",
            "Parameter xs.2 must be a finite number",
        ]


class TestDefaults:
    def test_apply_defaults_fills_absent_and_none_and_copies(self) -> None:
        default_list: list[int] = [1]
        params: dict[str, Any] = {
            "a": {"type": "array", "default": default_list},
            "b": {"type": "string", "default": "x"},
            "o": {"type": "object", "properties": {"n": {"type": "integer", "default": 5}}},
        }
        given: dict[str, Any] = {"b": None, "o": {}}
        filled = apply_defaults(given, params)
        assert filled == {"a": [1], "b": "x", "o": {"n": 5}}
        assert given == {"b": None, "o": {}}
        filled["a"].append(2)
        assert default_list == [1]

    def test_definition_problems(self) -> None:
        assert definition_problems(
            {
                "a": {"type": "integer", "default": "x"},
                "b": {"type": "string", "enum": ["x", 2]},
                "c": {"type": "integer", "min": 1, "default": 0},
                "o": {"type": "object", "properties": {"d": {"type": "boolean", "default": 1}}},
                "ok": {"type": "string", "default": None},
            }
        ) == [
            "parameter 'a': default 'x' is invalid: Parameter a must be of type integer",
            "parameter 'b': enum value 2 is not of type string",
            "parameter 'c': default 0 is invalid: Parameter c must be at least 1",
            "parameter 'o.d': default 1 is invalid: Parameter o.d must be of type boolean",
        ]
