"""JSON Schema generation: a corpus of tricky signatures compared as whole dicts, and Strands interop."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel, Field, ValidationError
from strands import tool as strands_tool

from loader.context.tool_context import ToolContext
from loader.errors import ToolSignatureError
from loader.tools.function_tool import FunctionTool
from loader.tools.schema import (
    build_input_model,
    clean_schema,
    output_schema,
    parameter_description,
    resolve_return_hint,
    resolve_type_hints,
)

# -- types used by the corpus -----------------------------------------------------------


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip: str = Field(pattern=r"^\d{5}$", description="Five digits.")
    color: Color = Color.RED


@dataclass
class Point:
    x: int
    y: int = 0


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Forecast(TypedDict):
    city: str
    temperature: float


# -- the corpus -----------------------------------------------------------------------------


def basic(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def scalars(name: str, count: int = 1, flag: bool = False, ratio: float = 0.5) -> None:
    """Scalars with defaults."""


def optional_default(note: Optional[str] = None, limit: int | None = None) -> None:  # noqa: UP045
    """Optional parameters keep their null branch."""


def optional_required(note: str | None) -> None:
    """An Optional parameter without a default is still required."""


def literal_and_enum(mode: Literal["fast", "slow"], color: Color = Color.RED) -> None:
    """Literals and enums become enum lists."""


def containers(
    items: list[int],
    scores: dict[str, float],
    pair: tuple[int, str],
    tags: set[str] = set(),  # noqa: B006
) -> None:
    """Containers keep their item schemas."""


def nested_model(address: Address, addresses: list[Address] = []) -> None:  # noqa: B006
    """Nested models live in $defs."""


def dataclass_param(point: Point) -> None:
    """Dataclasses too."""


def constrained(
    days: Annotated[int, Field(ge=1, le=14)] = 3,
    city: Annotated[str, Field(min_length=1, description="City name from Field.")] = "Oslo",
) -> None:
    """Constraints from Annotated Field.

    Args:
        days: Days to forecast.
        city: This docstring description loses to Field's.
    """


def annotated_string(x: Annotated[int, "Described in Annotated."]) -> None:
    """A plain string in Annotated is a description."""


def field_default(x: int = Field(default=3, ge=1, description="From the Field default.")) -> None:
    """A Field as the default value."""


def untyped(x, y: Any = None) -> None:  # type: ignore[no-untyped-def]
    """Parameters without annotations accept any JSON value."""


def no_params() -> str:
    """Takes nothing."""
    return ""


def rest_style(city: str, days: int = 1) -> None:
    """Get the weather.

    :param city: The city.
    :param days: How many days.
    :returns: A forecast.
    """


def numpy_style(city: str) -> None:
    """Get the weather.

    Parameters
    ----------
    city : str
        The city.
    """


def injected(query: str, tool_context: ToolContext, agent: Any = None) -> None:
    """Context and agent never appear in the schema."""


def recursive(tree: Node) -> None:
    """Recursive models use $ref to themselves."""


def unions(value: int | str, points: dict[str, list[Point]] | None = None) -> None:
    """Unions are anyOf."""


def awkward_names(json: str, _private: int = 0, title: str = "t", model_name: str = "m") -> None:
    """Names pydantic reserves still appear as they are."""


CORPUS: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (
        basic,
        {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first number."},
                "b": {"type": "integer", "description": "The second number."},
            },
            "required": ["a", "b"],
        },
    ),
    (
        scalars,
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Parameter name"},
                "count": {"type": "integer", "default": 1, "description": "Parameter count"},
                "flag": {"type": "boolean", "default": False, "description": "Parameter flag"},
                "ratio": {"type": "number", "default": 0.5, "description": "Parameter ratio"},
            },
            "required": ["name"],
        },
    ),
    (
        optional_default,
        {
            "type": "object",
            "properties": {
                "note": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "Parameter note",
                },
                "limit": {
                    "anyOf": [{"type": "integer"}, {"type": "null"}],
                    "default": None,
                    "description": "Parameter limit",
                },
            },
        },
    ),
    (
        optional_required,
        {
            "type": "object",
            "properties": {
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Parameter note"},
            },
            "required": ["note"],
        },
    ),
    (
        literal_and_enum,
        {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"], "description": "Parameter mode"},
                "color": {
                    "type": "string",
                    "enum": ["red", "blue"],
                    "default": "red",
                    "description": "Parameter color",
                },
            },
            "required": ["mode"],
        },
    ),
    (
        containers,
        {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "integer"}, "description": "Parameter items"},
                "scores": {
                    "type": "object",
                    "additionalProperties": {"type": "number"},
                    "description": "Parameter scores",
                },
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "Parameter pair",
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "uniqueItems": True,
                    "default": [],
                    "description": "Parameter tags",
                },
            },
            "required": ["items", "scores", "pair"],
        },
    ),
    (
        nested_model,
        {
            "$defs": {
                "Address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "zip": {"type": "string", "pattern": r"^\d{5}$", "description": "Five digits."},
                        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                    },
                    "required": ["street", "zip"],
                }
            },
            "type": "object",
            "properties": {
                "address": {"$ref": "#/$defs/Address", "description": "Parameter address"},
                "addresses": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/Address"},
                    "default": [],
                    "description": "Parameter addresses",
                },
            },
            "required": ["address"],
        },
    ),
    (
        dataclass_param,
        {
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                    "required": ["x"],
                    # A dataclass takes the validating model's config: unknown fields are rejected.
                    "additionalProperties": False,
                }
            },
            "type": "object",
            "properties": {"point": {"$ref": "#/$defs/Point", "description": "Parameter point"}},
            "required": ["point"],
        },
    ),
    (
        constrained,
        {
            "type": "object",
            "properties": {
                "days": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 14,
                    "default": 3,
                    "description": "Days to forecast.",
                },
                "city": {
                    "type": "string",
                    "minLength": 1,
                    "default": "Oslo",
                    "description": "City name from Field.",
                },
            },
        },
    ),
    (
        annotated_string,
        {
            "type": "object",
            "properties": {"x": {"type": "integer", "description": "Described in Annotated."}},
            "required": ["x"],
        },
    ),
    (
        field_default,
        {
            "type": "object",
            "properties": {
                "x": {"type": "integer", "minimum": 1, "default": 3, "description": "From the Field default."}
            },
        },
    ),
    (
        untyped,
        {
            "type": "object",
            "properties": {
                "x": {"description": "Parameter x"},
                "y": {"default": None, "description": "Parameter y"},
            },
            "required": ["x"],
        },
    ),
    (no_params, {"type": "object", "properties": {}}),
    (
        rest_style,
        {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {"type": "integer", "default": 1, "description": "How many days."},
            },
            "required": ["city"],
        },
    ),
    (
        numpy_style,
        {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
        },
    ),
    (
        injected,
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Parameter query"}},
            "required": ["query"],
        },
    ),
    (
        recursive,
        {
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
                    },
                    "required": ["name"],
                }
            },
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node", "description": "Parameter tree"}},
            "required": ["tree"],
        },
    ),
    (
        unions,
        {
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                    "required": ["x"],
                    "additionalProperties": False,
                }
            },
            "type": "object",
            "properties": {
                "value": {
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                    "description": "Parameter value",
                },
                "points": {
                    "anyOf": [
                        {
                            "type": "object",
                            "additionalProperties": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
                        },
                        {"type": "null"},
                    ],
                    "default": None,
                    "description": "Parameter points",
                },
            },
            "required": ["value"],
        },
    ),
    (
        awkward_names,
        {
            "type": "object",
            "properties": {
                "json": {"type": "string", "description": "Parameter json"},
                "_private": {"type": "integer", "default": 0, "description": "Parameter _private"},
                "title": {"type": "string", "default": "t", "description": "Parameter title"},
                "model_name": {"type": "string", "default": "m", "description": "Parameter model_name"},
            },
            "required": ["json"],
        },
    ),
]


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    context = "tool_context" if "tool_context" in inspect.signature(fn).parameters else False
    schema: dict[str, Any] = FunctionTool(fn, context=context).tool_spec["inputSchema"]["json"]
    return schema


@pytest.mark.parametrize(("fn", "expected"), CORPUS, ids=[fn.__name__ for fn, _ in CORPUS])
def test_corpus_schema(fn: Callable[..., Any], expected: dict[str, Any]) -> None:
    assert _schema(fn) == expected


@pytest.mark.parametrize(("fn", "expected"), CORPUS, ids=[fn.__name__ for fn, _ in CORPUS])
def test_corpus_schema_is_valid_json_schema(fn: Callable[..., Any], expected: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(_schema(fn))


def test_methods_drop_self() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key

    assert _schema(Service.lookup) == {
        "type": "object",
        "properties": {"key": {"type": "string", "description": "Parameter key"}},
        "required": ["key"],
    }


def test_postponed_annotations_are_resolved() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import Annotated, Literal\n"
        "from pydantic import Field\n"
        "def fn(mode: Literal['a', 'b'], days: Annotated[int, Field(ge=1)] = 2, note: str | None = None):\n"
        "    '''Doc.'''\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, "<postponed>", "exec"), namespace)
    assert _schema(namespace["fn"]) == {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b"], "description": "Parameter mode"},
            "days": {"type": "integer", "minimum": 1, "default": 2, "description": "Parameter days"},
            "note": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Parameter note",
            },
        },
        "required": ["mode"],
    }


# -- the schema validates the same inputs as the model ------------------------------------------


@pytest.mark.parametrize(
    ("fn", "data"),
    [
        (basic, {"a": 1, "b": 2}),
        (basic, {"a": 1}),
        (basic, {"a": "x", "b": 2}),
        (constrained, {"days": 15}),
        (constrained, {"days": 14, "city": ""}),
        (literal_and_enum, {"mode": "fast", "color": "blue"}),
        (literal_and_enum, {"mode": "medium"}),
        (literal_and_enum, {"mode": "slow", "color": "green"}),
        (optional_default, {"note": None, "limit": 3}),
        (optional_default, {"limit": "many"}),
        (nested_model, {"address": {"street": "Main", "zip": "12345"}}),
        (nested_model, {"address": {"street": "Main", "zip": "12"}}),
        (nested_model, {"address": {"zip": "12345"}}),
        (recursive, {"tree": {"name": "a", "children": [{"name": "b"}]}}),
        (recursive, {"tree": {"name": "a", "children": [{"children": []}]}}),
        (containers, {"items": [1, 2], "scores": {"a": 1.5}, "pair": [1, "x"]}),
        (containers, {"items": [1, 2], "scores": {"a": "high"}, "pair": [1, "x"]}),
        (containers, {"items": [1], "scores": {}, "pair": [1, "x", 3]}),
    ],
)
def test_schema_and_model_agree(fn: Callable[..., Any], data: dict[str, Any]) -> None:
    tool = FunctionTool(fn)
    schema_ok = Draft202012Validator(tool.tool_spec["inputSchema"]["json"]).is_valid(data)
    assert tool.invoke(data)["status"] == ("success" if schema_ok else "error")


# -- Strands interop ------------------------------------------------------------------------------


def interop_sum(a: int, b: int = 2) -> int:
    """Sum two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def interop_greet(name: str, excited: bool = False, times: float = 1.0) -> str:
    """Greet someone.

    Repeats the greeting when asked.
    """
    return name


def interop_choose(mode: Literal["a", "b"], items: list[str], note: Annotated[str, "A note."] = "") -> str:
    """Pick a mode."""
    return mode


def interop_nothing() -> str:
    """Do nothing."""
    return ""


def interop_nullable(value: int | None, label: str = "x") -> str:
    """Required nullable values keep anyOf in Strands too."""
    return label


def interop_field(x: int = Field(default=3, ge=1, description="Bounded.")) -> int:
    """Field defaults."""
    return x


@pytest.mark.parametrize(
    "fn",
    [interop_sum, interop_greet, interop_choose, interop_nothing, interop_nullable, interop_field],
    ids=lambda fn: fn.__name__,
)
def test_same_schema_and_description_as_strands(fn: Callable[..., Any]) -> None:
    ours = FunctionTool(fn).tool_spec
    theirs = strands_tool(fn).tool_spec
    assert ours["inputSchema"]["json"] == theirs["inputSchema"]["json"]
    assert ours["description"] == theirs["description"]
    assert ours["name"] == theirs["name"]


def test_strands_losses_are_not_ours() -> None:
    def lossy(note: str | None = None, scores: dict[str, int] | None = None) -> None:
        """Strands drops null and additionalProperties here."""

    theirs = strands_tool(lossy).tool_spec["inputSchema"]["json"]
    assert theirs["properties"]["note"] == {
        "type": "string",
        "default": None,
        "description": "Parameter note",
    }
    assert _schema(lossy)["properties"] == {
        "note": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "default": None,
            "description": "Parameter note",
        },
        "scores": {
            "anyOf": [{"type": "object", "additionalProperties": {"type": "integer"}}, {"type": "null"}],
            "default": None,
            "description": "Parameter scores",
        },
    }


# -- building blocks ---------------------------------------------------------------------------


def test_clean_schema_removes_titles_only_in_schema_positions() -> None:
    raw = {
        "title": "Model",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "sub": {"title": "Sub", "anyOf": [{"title": "A", "type": "integer"}, {"type": "null"}]},
        },
        "required": ["title"],
    }
    assert clean_schema(raw) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "sub": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["title"],
    }
    assert raw["title"] == "Model"  # the input is not changed


def test_clean_schema_inlines_enums_and_keeps_models_in_defs() -> None:
    raw = {
        "$defs": {
            "Color": {"title": "Color", "type": "string", "enum": ["red"], "description": "A colour."},
            "Box": {"title": "Box", "type": "object", "properties": {"c": {"$ref": "#/$defs/Color"}}},
        },
        "type": "object",
        "properties": {
            "color": {"$ref": "#/$defs/Color", "description": "Own description wins."},
            "box": {"$ref": "#/$defs/Box"},
        },
    }
    assert clean_schema(raw) == {
        "$defs": {
            "Box": {
                "type": "object",
                "properties": {"c": {"type": "string", "enum": ["red"], "description": "A colour."}},
            }
        },
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["red"], "description": "Own description wins."},
            "box": {"$ref": "#/$defs/Box"},
        },
    }


def test_parameter_description_sources() -> None:
    assert parameter_description(Annotated[int, "text"], 1) == "text"
    assert parameter_description(Annotated[int, Field(description="field")], 1) == "field"
    assert parameter_description(int, Field(default=1, description="default")) == "default"
    assert parameter_description(Annotated[int, Field(ge=1)], 1) is None
    assert parameter_description(int, inspect.Parameter.empty) is None


def test_build_input_model_validates_and_renames() -> None:
    def fn(json: int, _hidden: str = "h") -> None:
        pass

    params = list(inspect.signature(fn).parameters.values())
    built = build_input_model("fn", params, resolve_type_hints("fn", fn, params), {})
    validated = built.model.model_validate({"json": 1, "_hidden": "x"})
    assert {built.renamed.get(k, k): v for k, v in validated.__dict__.items()} == {"json": 1, "_hidden": "x"}
    with pytest.raises(ValidationError):
        built.model.model_validate({"json": 1, "extra": 2})


class _Opaque:
    pass


def test_unserialisable_annotation_names_function_and_parameter() -> None:
    def fn(ok: int, handle: _Opaque) -> None:
        pass

    params = list(inspect.signature(fn).parameters.values())
    with pytest.raises(ToolSignatureError) as caught:
        build_input_model("fn", params, resolve_type_hints("fn", fn, params), {})
    assert caught.value.function == "fn"
    assert caught.value.parameter == "handle"
    assert "'fn'" in str(caught.value) and "'handle'" in str(caught.value)
    assert "errors.pydantic.dev" not in str(caught.value)


def test_unresolvable_annotation_names_the_parameter() -> None:
    namespace: dict[str, Any] = {}
    exec("def fn(x: 'DoesNotExist') -> None: pass", namespace)
    fn = namespace["fn"]
    with pytest.raises(ToolSignatureError, match="'x'"):
        resolve_type_hints("fn", fn, list(inspect.signature(fn).parameters.values()))


def test_output_schema_for_structured_returns_only() -> None:
    def model_fn() -> Address: ...  # type: ignore[empty-body]
    def dataclass_fn() -> Point: ...  # type: ignore[empty-body]
    def typed_dict_fn() -> Forecast: ...  # type: ignore[empty-body]
    def plain_fn() -> int: ...  # type: ignore[empty-body]
    def bare_fn(): ...  # type: ignore[no-untyped-def]

    assert output_schema(resolve_return_hint(model_fn)) == {
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "zip": {"type": "string", "pattern": r"^\d{5}$", "description": "Five digits."},
            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
        },
        "required": ["street", "zip"],
    }
    assert output_schema(resolve_return_hint(dataclass_fn)) == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert output_schema(resolve_return_hint(typed_dict_fn)) == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "temperature": {"type": "number"}},
        "required": ["city", "temperature"],
    }
    assert output_schema(resolve_return_hint(plain_fn)) is None
    assert output_schema(resolve_return_hint(bare_fn)) is None
