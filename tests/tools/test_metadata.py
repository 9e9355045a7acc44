"""ToolMetadata, ToolParameter and ToolSchema: what they accept and what they reject."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from loader.tools.metadata import RateLimit, ToolMetadata, ToolParameter, ToolSchema, is_valid_tool_name


class TestToolParameter:
    def test_defaults(self) -> None:
        param = ToolParameter(type="string")
        assert param.model_dump() == {
            "type": "string",
            "description": "",
            "required": True,
            "default": None,
            "pattern": None,
            "min": None,
            "max": None,
            "enum": None,
            "items": None,
            "properties": None,
        }
        assert param.has_default is False

    def test_explicit_none_default_counts_as_a_default(self) -> None:
        assert ToolParameter(type="string", default=None).has_default is True

    def test_nested_plain_dicts_become_models(self) -> None:
        param = ToolParameter.model_validate(
            {
                "type": "object",
                "properties": {
                    "zip": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "integer"}},
                },
            }
        )
        assert param.properties is not None
        assert isinstance(param.properties["zip"], ToolParameter)
        assert param.properties["tags"].items == ToolParameter(type="integer")

    def test_integer_is_a_type(self) -> None:
        assert ToolParameter(type="integer", min=1, max=3).max == 3

    def test_int_bounds_stay_ints(self) -> None:
        param = ToolParameter(type="number", min=1, max=2.5)
        assert type(param.min) is int
        assert type(param.max) is float

    def test_frozen(self) -> None:
        param = ToolParameter(type="string")
        with pytest.raises(ValidationError):
            param.type = "number"

    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            (
                {"type": "str"},
                "Input should be 'string', 'number', 'integer', 'boolean', 'array' or 'object'",
            ),
            ({"type": "number", "min": 5, "max": 1}, "min (5) is greater than max (1)"),
            ({"type": "string", "min": 1}, "min/max apply to number and integer parameters only, not string"),
            ({"type": "integer", "pattern": "^a"}, "pattern applies to string parameters only, not integer"),
            ({"type": "string", "pattern": "("}, "pattern '(' is not a valid regex"),
            ({"type": "string", "enum": []}, "enum must list at least one value"),
            ({"type": "string", "items": {"type": "string"}}, "items applies to array parameters only"),
            ({"type": "array", "properties": {}}, "properties applies to object parameters only"),
            ({"type": "string", "minimum": 1}, "Extra inputs are not permitted"),
        ],
    )
    def test_rejects(self, fields: dict[str, object], message: str) -> None:
        with pytest.raises(ValidationError) as info:
            ToolParameter.model_validate(fields)
        assert message in str(info.value)


class TestToolSchema:
    def test_accepts_valid_schemas(self) -> None:
        schema = ToolSchema(
            input_json_schema={"type": "object", "properties": {"a": {"type": "string"}}},
            output_json_schema={"type": "string"},
        )
        assert schema.output_json_schema == {"type": "string"}

    def test_rejects_invalid_json_schema(self) -> None:
        with pytest.raises(ValidationError, match="not a valid JSON Schema"):
            ToolSchema(output_json_schema={"type": "no-such-type"})

    def test_input_schema_must_describe_an_object(self) -> None:
        with pytest.raises(ValidationError, match='must have "type": "object"'):
            ToolSchema(input_json_schema={"type": "string"})


class TestToolMetadata:
    def test_defaults_and_coercion(self) -> None:
        meta = ToolMetadata.model_validate(
            {
                "name": "weather",
                "parameters": {"city": {"type": "string"}},
                "tags": ["a", "b"],
                "rate_limit": {"requests": 10, "window_seconds": 60},
                "examples": [{"input": {"city": "Paris"}, "output": "sunny"}],
            }
        )
        assert meta.parameters == {"city": ToolParameter(type="string")}
        assert meta.tags == ("a", "b")
        assert meta.rate_limit == RateLimit(requests=10, window_seconds=60)
        assert meta.examples == ({"input": {"city": "Paris"}, "output": "sunny"},)
        assert (meta.version, meta.category, meta.requires_auth, meta.schema_) == ("1.0.0", None, False, None)
        assert meta.description == ""

    def test_schema_keyword_and_accessors(self) -> None:
        schema = {"type": "object", "properties": {}}
        meta = ToolMetadata(name="t", schema=ToolSchema(input_json_schema=schema))
        assert meta.input_json_schema == schema
        assert meta.output_json_schema is None
        assert meta.model_dump(by_alias=True)["schema"]["input_json_schema"] == schema

    def test_parameters_and_input_schema_exclude_each_other(self) -> None:
        with pytest.raises(ValidationError, match=r"either parameters or schema\.input_json_schema"):
            ToolMetadata.model_validate(
                {
                    "name": "t",
                    "parameters": {"a": {"type": "string"}},
                    "schema": {"input_json_schema": {"type": "object"}},
                }
            )

    @pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dot.name", "newline\n"])
    def test_rejects_bad_names(self, name: str) -> None:
        with pytest.raises(ValidationError, match="invalid tool name"):
            ToolMetadata(name=name)

    def test_rate_limit_must_be_positive(self) -> None:
        with pytest.raises(ValidationError):
            ToolMetadata.model_validate({"name": "t", "rate_limit": {"requests": 0, "window_seconds": 1}})


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("a", True),
        ("my-tool_2", True),
        ("x" * 64, True),
        ("x" * 65, False),
        ("a b", False),
        ("a\n", False),
        (3, False),
    ],
)
def test_is_valid_tool_name(name: object, valid: bool) -> None:
    assert is_valid_tool_name(name) is valid
