"""Tests for loader/spec_changes.py: a table of spec changes and what they mean for callers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from loader import ToolSpec, tool
from loader.spec_diff.kinds import SpecChange, SpecChangeKind
from loader.spec_diff.specs import compare_specs, compare_tool_sets, describe_change

B, A, C, N = SpecChangeKind.BREAKING, SpecChangeKind.ADDITIVE, SpecChangeKind.COSMETIC, SpecChangeKind.NONE


def spec(
    properties: dict[str, Any],
    required: tuple[str, ...] = (),
    *,
    description: str = "A tool.",
    output: dict[str, Any] | None = None,
    defs: dict[str, Any] | None = None,
    **extra: Any,
) -> ToolSpec:
    """A Bedrock-style spec with the given input properties (``defs``: its ``$defs``)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if defs is not None:
        schema["$defs"] = defs
    if required:
        schema["required"] = list(required)
    result: ToolSpec = {"name": "t", "description": description, "inputSchema": {"json": schema}}
    if output is not None:
        result["outputSchema"] = {"json": output}
    return result


PETS = {
    name: {
        "title": name,
        "type": "object",
        "properties": {"kind": {"const": name.lower()}, field: {"type": kind}},
        "required": ["kind", field],
    }
    for name, field, kind in (
        ("Cat", "meows", "boolean"),
        ("Dog", "barks", "boolean"),
        ("Bird", "wings", "integer"),
    )
}
"""Three models as pydantic writes a discriminated union's members into ``$defs``."""

INT = {"type": "integer"}
STR = {"type": "string"}
NUM = {"type": "number"}


# ---------------------------------------------------------------- real @tool specs
class Point(BaseModel):
    x: int
    y: int = 0


class PointV2(BaseModel):
    x: int
    y: int = 0
    z: int


class Point3(BaseModel):
    x: int
    y: int = 0
    label: str = ""


def _spec_of(func: Callable[..., Any]) -> ToolSpec:
    return tool(name="t")(func).tool_spec


def calc_v1(a: int, b: int) -> int:
    """Add."""
    return a + b


def calc_a_removed(b: int) -> int:
    """Add."""
    return b


def calc_renamed(x: int, b: int) -> int:
    """Add."""
    return x + b


def calc_optional_c(a: int, b: int, c: int = 0) -> int:
    """Add."""
    return a + b + c


def calc_required_c(a: int, b: int, c: int) -> int:
    """Add."""
    return a + b + c


def calc_float(a: float, b: int) -> float:
    """Add."""
    return a + b


def calc_str(a: str, b: int) -> int:
    """Add."""
    return b


def calc_optional_none(a: int | None, b: int) -> int:
    """Add."""
    return b


def calc_v1_doc(a: int, b: int) -> int:
    """Add two integers together.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def calc_b_default(a: int, b: int = 1) -> int:
    """Add."""
    return a + b


def mode_xy(mode: Literal["x", "y"]) -> str:
    """Pick."""
    return mode


def mode_xyz(mode: Literal["x", "y", "z"]) -> str:
    """Pick."""
    return mode


def mode_x(mode: Literal["x"]) -> str:
    """Pick."""
    return mode


def bounded_1_5(n: Annotated[int, Field(ge=1, le=5)]) -> int:
    """Bound."""
    return n


def bounded_2_5(n: Annotated[int, Field(ge=2, le=5)]) -> int:
    """Bound."""
    return n


def bounded_0_10(n: Annotated[int, Field(ge=0, le=10)]) -> int:
    """Bound."""
    return n


def bounded_1_4(n: Annotated[int, Field(ge=1, le=4)]) -> int:
    """Bound."""
    return n


def text_free(text: str) -> str:
    """Echo."""
    return text


def text_pattern(text: Annotated[str, Field(pattern="^[a-z]+$")]) -> str:
    """Echo."""
    return text


def point_v1(p: Point) -> int:
    """Use a point."""
    return p.x


def point_v2(p: PointV2) -> int:
    """Use a point."""
    return p.x


def point_label(p: Point3) -> int:
    """Use a point."""
    return p.x


def points_v1(ps: list[Point]) -> int:
    """Use points."""
    return len(ps)


def points_v2(ps: list[PointV2]) -> int:
    """Use points."""
    return len(ps)


def maybe_point(p: Point | None = None) -> int:
    """Use a point."""
    return 0


def maybe_point_v2(p: PointV2 | None = None) -> int:
    """Use a point."""
    return 0


def str_or_int(s: str | int) -> str:
    """Either."""
    return str(s)


def str_only(s: str) -> str:
    """Either."""
    return s


def out_point(a: int) -> Point:
    """Make a point."""
    return Point(x=a)


def out_point_v2(a: int) -> PointV2:
    """Make a point."""
    return PointV2(x=a, z=0)


def out_point_label(a: int) -> Point3:
    """Make a point."""
    return Point3(x=a)


class PointStr(BaseModel):
    x: str
    y: int = 0


def out_point_str(a: int) -> PointStr:
    """Make a point."""
    return PointStr(x=str(a))


class Node(BaseModel):
    value: int
    children: list[Node] = []


class NodeV2(BaseModel):
    value: str
    children: list[NodeV2] = []


def tree_v1(root: Node) -> int:
    """Walk."""
    return root.value


def tree_v2(root: NodeV2) -> int:
    """Walk."""
    return 0


# ---------------------------------------------------------------- the table
CASES: list[tuple[str, ToolSpec, ToolSpec, SpecChangeKind, str | None]] = [
    # none / cosmetic
    ("identical", spec({"a": INT}, ("a",)), spec({"a": INT}, ("a",)), N, None),
    ("tool description", spec({"a": INT}), spec({"a": INT}, description="Other."), C, "description changed"),
    (
        "param description",
        spec({"a": {**INT, "description": "x"}}),
        spec({"a": {**INT, "description": "y"}}),
        C,
        "description of parameter 'a' changed",
    ),
    ("param title", spec({"a": {**INT, "title": "A"}}), spec({"a": INT}), C, "title of parameter 'a'"),
    ("examples", spec({"a": {**INT, "examples": [1]}}), spec({"a": {**INT, "examples": [2]}}), C, "examples"),
    ("default changed", spec({"a": {**INT, "default": 1}}), spec({"a": {**INT, "default": 2}}), C, "default"),
    # required / optional parameters
    (
        "required added",
        spec({"a": INT}, ("a",)),
        spec({"a": INT, "b": STR}, ("a", "b")),
        B,
        "required parameter 'b' added",
    ),
    (
        "optional added",
        spec({"a": INT}, ("a",)),
        spec({"a": INT, "b": STR}, ("a",)),
        A,
        "optional parameter 'b' added",
    ),
    ("param removed", spec({"a": INT, "b": STR}), spec({"a": INT}), B, "parameter 'b' removed"),
    (
        "param renamed",
        spec({"a": INT, "b": STR}, ("b",)),
        spec({"a": INT, "c": STR}, ("c",)),
        B,
        "parameter 'b' renamed to 'c'",
    ),
    ("becomes required", spec({"a": INT}), spec({"a": INT}, ("a",)), B, "parameter 'a' became required"),
    ("becomes optional", spec({"a": INT}, ("a",)), spec({"a": INT}), A, "parameter 'a' became optional"),
    # types
    (
        "type changed",
        spec({"a": INT}),
        spec({"a": STR}),
        B,
        "type of parameter 'a' changed from integer to string",
    ),
    ("integer widened to number", spec({"a": INT}), spec({"a": NUM}), A, "widened from integer to number"),
    ("number narrowed to integer", spec({"a": NUM}), spec({"a": INT}), B, "narrowed from number to integer"),
    (
        "type list widened",
        spec({"a": STR}),
        spec({"a": {"type": ["string", "null"]}}),
        A,
        "null now accepted",
    ),
    (
        "type list narrowed",
        spec({"a": {"type": ["string", "integer"]}}),
        spec({"a": STR}),
        B,
        "integer no longer accepted",
    ),
    ("anyOf widened", spec({"a": STR}), spec({"a": {"anyOf": [STR, INT]}}), A, "integer now accepted"),
    ("oneOf narrowed", spec({"a": {"oneOf": [STR, INT]}}), spec({"a": INT}), B, "string no longer accepted"),
    # a variant of a type already accepted: a new accepted shape all the same
    (
        "anyOf of constants gains one",
        spec({"a": {"anyOf": [{"const": "x"}, {"const": "y"}]}}),
        spec({"a": {"anyOf": [{"const": "x"}, {"const": "y"}, {"const": "z"}]}}),
        A,
        "parameter 'a' accepts a new alternative: \"z\"",
    ),
    (
        "anyOf of constants loses one",
        spec({"a": {"anyOf": [{"const": "x"}, {"const": "y"}, {"const": "z"}]}}),
        spec({"a": {"anyOf": [{"const": "x"}, {"const": "y"}]}}),
        B,
        "parameter 'a' no longer accepts the alternative \"z\"",
    ),
    (
        "oneOf of objects gains one",
        spec({"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, defs=PETS),
        spec({"pet": {"oneOf": [{"$ref": f"#/$defs/{n}"} for n in ("Cat", "Dog", "Bird")]}}, defs=PETS),
        A,
        "parameter 'pet' accepts a new alternative: Bird",
    ),
    (
        "oneOf of objects loses one",
        spec({"pet": {"oneOf": [{"$ref": f"#/$defs/{n}"} for n in ("Cat", "Dog", "Bird")]}}, defs=PETS),
        spec({"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, defs=PETS),
        B,
        "parameter 'pet' no longer accepts the alternative Bird",
    ),
    (
        "the same alternatives reordered",
        spec({"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, defs=PETS),
        spec({"pet": {"oneOf": [{"$ref": "#/$defs/Dog"}, {"$ref": "#/$defs/Cat"}]}}, defs=PETS),
        N,
        None,
    ),
    (
        "a narrower alternative added beside a wider one",
        spec({"a": {"anyOf": [STR, INT]}}),
        spec({"a": {"anyOf": [STR, INT, {**STR, "maxLength": 3}]}}),
        N,
        None,
    ),
    ("untyped narrowed", spec({"a": {}}), spec({"a": STR}), B, "narrowed from any to string"),
    # enums
    (
        "enum value removed",
        spec({"m": {**STR, "enum": ["x", "y"]}}),
        spec({"m": {**STR, "enum": ["x"]}}),
        B,
        "enum values removed from parameter 'm': \"y\"",
    ),
    (
        "enum value added",
        spec({"m": {**STR, "enum": ["x"]}}),
        spec({"m": {**STR, "enum": ["x", "y"]}}),
        A,
        "enum values added",
    ),
    ("enum introduced", spec({"m": STR}), spec({"m": {**STR, "enum": ["x"]}}), B, "restricted to"),
    ("enum dropped", spec({"m": {**STR, "enum": ["x"]}}), spec({"m": STR}), A, "no longer restricted"),
    ("const changed", spec({"m": {"const": "x"}}), spec({"m": {"const": "y"}}), B, "enum values removed"),
    # bounds
    (
        "minimum raised",
        spec({"n": {**INT, "minimum": 1}}),
        spec({"n": {**INT, "minimum": 2}}),
        B,
        "minimum of parameter 'n' raised to 2 from 1",
    ),
    (
        "minimum lowered",
        spec({"n": {**INT, "minimum": 1}}),
        spec({"n": {**INT, "minimum": 0}}),
        A,
        "minimum of parameter 'n' lowered",
    ),
    (
        "maximum lowered",
        spec({"n": {**INT, "maximum": 5}}),
        spec({"n": {**INT, "maximum": 4}}),
        B,
        "maximum of parameter 'n' lowered to 4",
    ),
    (
        "maximum raised",
        spec({"n": {**INT, "maximum": 5}}),
        spec({"n": {**INT, "maximum": 9}}),
        A,
        "maximum of parameter 'n' raised",
    ),
    (
        "maximum added",
        spec({"n": INT}),
        spec({"n": {**INT, "maximum": 9}}),
        B,
        "maximum of parameter 'n' lowered to 9",
    ),
    (
        "minimum removed",
        spec({"n": {**INT, "minimum": 1}}),
        spec({"n": INT}),
        A,
        "minimum of parameter 'n' removed",
    ),
    (
        "maxLength lowered",
        spec({"s": {**STR, "maxLength": 10}}),
        spec({"s": {**STR, "maxLength": 5}}),
        B,
        "maxLength",
    ),
    (
        "minItems raised",
        spec({"l": {"type": "array", "minItems": 0}}),
        spec({"l": {"type": "array", "minItems": 1}}),
        B,
        "minItems",
    ),
    # patterns and formats
    (
        "pattern added",
        spec({"s": STR}),
        spec({"s": {**STR, "pattern": "^a"}}),
        B,
        "pattern added to parameter 's'",
    ),
    (
        "pattern changed",
        spec({"s": {**STR, "pattern": "^a"}}),
        spec({"s": {**STR, "pattern": "^b"}}),
        B,
        "pattern of parameter 's' changed",
    ),
    (
        "pattern removed",
        spec({"s": {**STR, "pattern": "^a"}}),
        spec({"s": STR}),
        A,
        "pattern of parameter 's' removed",
    ),
    ("format added", spec({"s": STR}), spec({"s": {**STR, "format": "date-time"}}), B, "format added"),
    # objects
    (
        "additionalProperties closed",
        spec({"a": INT}),
        spec({"a": INT}, additionalProperties=False),
        B,
        "additionalProperties closed on input",
    ),
    (
        "additionalProperties opened",
        spec({"a": INT}, additionalProperties=False),
        spec({"a": INT}),
        A,
        "additionalProperties opened",
    ),
    (
        "nested required added",
        spec({"p": {"type": "object", "properties": {"x": INT}}}),
        spec({"p": {"type": "object", "properties": {"x": INT, "y": INT}, "required": ["y"]}}),
        B,
        "required parameter 'p.y' added",
    ),
    (
        "nested type changed",
        spec({"p": {"type": "object", "properties": {"x": INT}}}),
        spec({"p": {"type": "object", "properties": {"x": STR}}}),
        B,
        "type of parameter 'p.x' changed",
    ),
    # arrays
    (
        "array items changed",
        spec({"l": {"type": "array", "items": INT}}),
        spec({"l": {"type": "array", "items": STR}}),
        B,
        "parameter 'l[]'",
    ),
    (
        "array items widened",
        spec({"l": {"type": "array", "items": INT}}),
        spec({"l": {"type": "array", "items": NUM}}),
        A,
        "parameter 'l[]'",
    ),
    # $ref / $defs written by hand, different def names on each side
    (
        "ref to renamed def, same shape",
        spec({"p": {"$ref": "#/$defs/A"}}, defs={"A": {"type": "object", "properties": {"x": INT}}}),
        spec({"p": {"$ref": "#/$defs/B"}}, defs={"B": {"type": "object", "properties": {"x": INT}}}),
        N,
        None,
    ),
    (
        "ref target field removed",
        spec(
            {"p": {"$ref": "#/$defs/A"}},
            defs={"A": {"type": "object", "properties": {"x": INT, "y": INT}}},
        ),
        spec({"p": {"$ref": "#/$defs/A"}}, defs={"A": {"type": "object", "properties": {"x": INT}}}),
        B,
        "parameter 'p.y' removed",
    ),
    (
        "allOf-wrapped ref, same shape",
        spec(
            {"p": {"allOf": [{"$ref": "#/$defs/A"}], "description": "x"}},
            defs={"A": {"type": "object", "properties": {"x": INT}}},
        ),
        spec(
            {"p": {"$ref": "#/$defs/A", "description": "x"}},
            defs={"A": {"type": "object", "properties": {"x": INT}}},
        ),
        N,
        None,
    ),
    (
        "recursive $ref, nested change",
        spec(
            {"n": {"$ref": "#/$defs/N"}},
            defs={"N": {"type": "object", "properties": {"v": INT, "next": {"$ref": "#/$defs/N"}}}},
        ),
        spec(
            {"n": {"$ref": "#/$defs/N"}},
            defs={"N": {"type": "object", "properties": {"v": STR, "next": {"$ref": "#/$defs/N"}}}},
        ),
        B,
        "type of parameter 'n.v' changed",
    ),
    # output schema
    ("output added", spec({}), spec({}, output=INT), A, "output schema added"),
    ("output removed", spec({}, output=INT), spec({}), B, "output schema removed"),
    ("output type changed", spec({}, output=INT), spec({}, output=STR), B, "type of output changed"),
    ("output widened", spec({}, output=INT), spec({}, output=NUM), B, "type of output widened"),
    ("output narrowed", spec({}, output=NUM), spec({}, output=INT), A, "type of output narrowed"),
    (
        "output field removed",
        spec({}, output={"type": "object", "properties": {"x": INT, "y": INT}}),
        spec({}, output={"type": "object", "properties": {"x": INT}}),
        B,
        "output field 'y' removed",
    ),
    (
        "output field becomes optional",
        spec({}, output={"type": "object", "properties": {"x": INT}, "required": ["x"]}),
        spec({}, output={"type": "object", "properties": {"x": INT}}),
        B,
        "output field 'x' became optional",
    ),
    # real specs from @tool functions (pydantic v2 schemas)
    ("tool: same function", _spec_of(calc_v1), _spec_of(calc_v1), N, None),
    ("tool: param removed", _spec_of(calc_v1), _spec_of(calc_a_removed), B, "parameter 'a' removed"),
    ("tool: param renamed", _spec_of(calc_v1), _spec_of(calc_renamed), B, "parameter 'a' renamed to 'x'"),
    (
        "tool: optional param added",
        _spec_of(calc_v1),
        _spec_of(calc_optional_c),
        A,
        "optional parameter 'c' added",
    ),
    (
        "tool: required param added",
        _spec_of(calc_v1),
        _spec_of(calc_required_c),
        B,
        "required parameter 'c' added",
    ),
    (
        "tool: int to float",
        _spec_of(calc_v1),
        _spec_of(calc_float),
        A,
        "type of parameter 'a' widened from integer to number",
    ),
    ("tool: int to str", _spec_of(calc_v1), _spec_of(calc_str), B, "type of parameter 'a' changed"),
    ("tool: int to optional int", _spec_of(calc_v1), _spec_of(calc_optional_none), A, "null now accepted"),
    ("tool: docstring only", _spec_of(calc_v1), _spec_of(calc_v1_doc), C, "description"),
    ("tool: got a default", _spec_of(calc_v1), _spec_of(calc_b_default), A, "parameter 'b' became optional"),
    ("tool: literal value added", _spec_of(mode_xy), _spec_of(mode_xyz), A, "enum values added"),
    ("tool: literal value removed", _spec_of(mode_xy), _spec_of(mode_x), B, "enum values removed"),
    ("tool: ge raised", _spec_of(bounded_1_5), _spec_of(bounded_2_5), B, "minimum of parameter 'n' raised"),
    ("tool: le lowered", _spec_of(bounded_1_5), _spec_of(bounded_1_4), B, "maximum of parameter 'n' lowered"),
    ("tool: bounds relaxed", _spec_of(bounded_1_5), _spec_of(bounded_0_10), A, None),
    ("tool: pattern added", _spec_of(text_free), _spec_of(text_pattern), B, "pattern added"),
    (
        "tool: model gains required field",
        _spec_of(point_v1),
        _spec_of(point_v2),
        B,
        "required parameter 'p.z' added",
    ),
    (
        "tool: model gains optional field",
        _spec_of(point_v1),
        _spec_of(point_label),
        A,
        "optional parameter 'p.label' added",
    ),
    (
        "tool: list of models",
        _spec_of(points_v1),
        _spec_of(points_v2),
        B,
        "required parameter 'ps[].z' added",
    ),
    (
        "tool: optional model",
        _spec_of(maybe_point),
        _spec_of(maybe_point_v2),
        B,
        "required parameter 'p.z' added",
    ),
    ("tool: union narrowed", _spec_of(str_or_int), _spec_of(str_only), B, "integer no longer accepted"),
    ("tool: union widened", _spec_of(str_only), _spec_of(str_or_int), A, "integer now accepted"),
    (
        "tool: output field added",
        _spec_of(out_point),
        _spec_of(out_point_label),
        A,
        "output field 'label' added",
    ),
    (
        "tool: output required field added",
        _spec_of(out_point),
        _spec_of(out_point_v2),
        A,
        "output field 'z' added",
    ),
    (
        "tool: output field type changed",
        _spec_of(out_point),
        _spec_of(out_point_str),
        B,
        "type of output 'x' changed",
    ),
    (
        "tool: recursive model",
        _spec_of(tree_v1),
        _spec_of(tree_v2),
        B,
        "type of parameter 'root.value' changed",
    ),
]


@pytest.mark.parametrize(("old", "new", "kind", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classification(old: ToolSpec, new: ToolSpec, kind: SpecChangeKind, reason: str | None) -> None:
    change = compare_specs(old, new)
    assert change.kind is kind, change.reasons
    if reason is not None:
        assert any(reason in line for line in change.reasons), change.reasons
    if kind is N:
        assert change.reasons == ()
    assert len(change.reason_kinds) == len(change.reasons)
    assert change.reason_kinds[:1] == ((kind,) if change.reasons else ())


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 40


def test_reasons_are_most_severe_first() -> None:
    change = compare_specs(
        spec({"a": INT, "b": STR}, description="x"), spec({"a": INT, "c": INT}, description="y")
    )
    assert change.kind is B
    assert change.reason_kinds == tuple(sorted(change.reason_kinds, key=[B, A, C, N].index))
    assert change.reasons_of(B) == ("parameter 'b' removed",)
    assert change.reasons_of(A) == ("optional parameter 'c' added",)
    assert change.reasons_of(C) == ("description changed",)


def test_json_round_trip() -> None:
    change = compare_specs(_spec_of(calc_v1), _spec_of(calc_required_c))
    assert SpecChange.from_json(change.to_json()) == change


def test_tool_sets() -> None:
    old = {"calc": _spec_of(calc_v1), "echo": _spec_of(text_free), "pick": _spec_of(mode_xy)}
    new = {"calc": _spec_of(calc_optional_c), "pick": _spec_of(mode_xy), "walk": _spec_of(tree_v1)}
    change = compare_tool_sets(old, new)
    assert change.kind is B
    assert change.removed == ("echo",)
    assert change.added == ("walk",)
    assert set(change.changed) == {"calc"}
    assert change.changed["calc"].kind is A
    assert change.reasons[0] == "tool 'echo' removed"
    assert "calc: optional parameter 'c' added" in change.reasons


def test_tool_set_only_added_is_additive() -> None:
    change = compare_tool_sets({}, {"calc": _spec_of(calc_v1)})
    assert change.kind is A
    assert compare_tool_sets({"calc": _spec_of(calc_v1)}, {"calc": _spec_of(calc_v1)}).kind is N


def test_describe_change() -> None:
    change = compare_specs(_spec_of(calc_v1), _spec_of(calc_a_removed))
    assert describe_change(change) == "BREAKING: parameter 'a' removed"
    assert describe_change(SpecChange()) == "unchanged"
    many = compare_specs(spec({"a": INT, "b": INT, "c": INT, "d": INT}), spec({}))
    assert describe_change(many, limit=2).endswith("(+2 more)")
