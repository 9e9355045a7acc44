"""One tool's digest: sha256 of its listed MCP entry in RFC 8785 canonical JSON, the same wherever it is computed."""

from __future__ import annotations

import gc
import hashlib
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loader.fingerprint import canonical_json, model_view, spec_digest, tool_digest
from loader.registry.tool_registry import ToolRegistry
from loader.tools.function_tool import FunctionTool
from loader.types import AgentTool, ToolGenerator, ToolSpec, ToolUse

# RFC 8785, section 3.2.2: the sample input, written the way a Python JSON parser reads it.
RFC_SAMPLE = json.loads(
    r"""{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"""
)
RFC_SAMPLE_CANONICAL = (
    r"""{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"""
    r""""string":"€$\u000f\nA'B\"\\\\\"/"}"""
)

# RFC 8785, section 3.2.3: properties sort by their UTF-16 code units, not by code points.
RFC_SORTING = {
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\U0001f600": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis",
}
RFC_SORTED_VALUES = [
    "Carriage Return",
    "One",
    "Control",
    "Latin Small Letter O With Diaeresis",
    "Euro Sign",
    "Emoji: Grinning Face",
    "Hebrew Letter Dalet With Dagesh",
]

# RFC 8785, appendix B: IEEE 754 doubles (as hex) and their canonical text.
RFC_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def test_the_rfc_sample_is_written_as_the_rfc_says() -> None:
    assert canonical_json(RFC_SAMPLE).decode("utf-8") == RFC_SAMPLE_CANONICAL


def test_properties_sort_by_utf16_code_units() -> None:
    assert list(json.loads(canonical_json(RFC_SORTING)).values()) == RFC_SORTED_VALUES


@pytest.mark.parametrize(("bits", "text"), RFC_NUMBERS)
def test_numbers_are_written_as_ecmascript_writes_them(bits: str, text: str) -> None:
    (value,) = struct.unpack(">d", bytes.fromhex(bits))
    assert canonical_json(value).decode() == text


def test_values_json_cannot_hold_are_written_as_a_client_would_read_them() -> None:
    """Integers past a double's precision become that double, written as ECMAScript writes it (what a
    JavaScript client computes from the same listing); non-finite floats become null, as the wire writes them."""
    assert canonical_json({"maximum": 2**63 - 1}) == b'{"maximum":9223372036854776000}'
    assert canonical_json({"nan": float("nan"), "inf": float("-inf")}) == b'{"inf":null,"nan":null}'
    assert canonical_json({"ok": 2**53 - 1, "tuple": (1, "a")}) == b'{"ok":9007199254740991,"tuple":[1,"a"]}'
    assert canonical_json({"odd": "\ud800", "object": Path("x")}) == b'{"object":"x","odd":"?"}'


SPEC: ToolSpec = {
    "name": "weather",
    "description": "Today's forecast.",
    "inputSchema": {"json": {"properties": {"city": {"type": "string"}}, "required": ["city"]}},
    "outputSchema": {"json": {"type": "object", "properties": {"celsius": {"type": "number"}}}},
}


def test_the_digest_is_sha256_of_the_listed_entry_in_canonical_json() -> None:
    view = model_view(SPEC)
    assert view == {
        "name": "weather",
        "description": "Today's forecast.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}},
    }
    by_hand = hashlib.sha256(
        b'{"description":"Today\'s forecast.","inputSchema":{"properties":{"city":{"type":"string"}},'
        b'"required":["city"],"type":"object"},"name":"weather","outputSchema":{"properties":'
        b'{"celsius":{"type":"number"}},"type":"object"}}'
    ).hexdigest()
    assert spec_digest(SPEC) == by_hand


def test_what_a_model_sees_changes_the_digest_and_nothing_else_does() -> None:
    digest = spec_digest(SPEC)
    reordered: dict[str, Any] = json.loads(json.dumps(SPEC))
    reordered["inputSchema"]["json"] = dict(reversed(list(reordered["inputSchema"]["json"].items())))
    assert spec_digest(reordered) == digest  # key order is not identity
    assert spec_digest({**SPEC, "inputSchema": model_view(SPEC)["inputSchema"]}) == digest  # unwrapped
    assert spec_digest({**SPEC, "description": "Tomorrow's forecast."}) != digest
    wider = json.loads(json.dumps(SPEC))
    wider["inputSchema"]["json"]["properties"]["days"] = {"type": "integer"}
    assert spec_digest(wider) != digest
    assert spec_digest({**SPEC, "title": "Weather"}) != digest  # a title is shown to models too


def forecast(city: str) -> str:
    """Today's forecast.

    Args:
        city: The city.
    """
    return city


class Counting(AgentTool):
    """A tool that counts how often its spec is read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    @property
    def tool_name(self) -> str:
        return "counting"

    @property
    def tool_spec(self) -> ToolSpec:
        self.reads += 1
        return {"name": "counting", "description": "Counts.", "inputSchema": {"json": {}}}

    @property
    def tool_type(self) -> str:
        return "test"

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        yield {"toolUseId": tool_use["toolUseId"], "status": "success", "content": []}


def test_equal_tools_have_one_digest_and_each_object_is_digested_once() -> None:
    first, second = FunctionTool(forecast), FunctionTool(forecast)
    assert tool_digest(first) == tool_digest(second) == spec_digest(first.tool_spec)
    counting = Counting()
    digest = tool_digest(counting)
    assert [tool_digest(counting) for _ in range(3)] == [digest] * 3
    assert counting.reads == 1


def test_a_snapshot_names_each_tools_digest() -> None:
    registry = ToolRegistry()
    registry.register(FunctionTool(forecast))
    snapshot = registry.snapshot()
    assert snapshot.digest("forecast") == spec_digest(FunctionTool(forecast).tool_spec)
    assert snapshot.digest("nothing") is None


@pytest.fixture
def collected() -> Iterator[None]:
    yield
    gc.collect()


def test_a_digested_tool_is_not_kept_alive(collected: None) -> None:
    import weakref

    tool = Counting()
    tool_digest(tool)
    gone = weakref.ref(tool)
    del tool
    gc.collect()
    assert gone() is None
