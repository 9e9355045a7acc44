"""The sample tools: every one loads and answers a sample call through the registry, in both isolation modes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loader.console.check import find_problems
from loader.reload.loader import ToolLoader
from loader.status import FileState
from loader.types import ToolResult, ToolUse

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"


@pytest.fixture(scope="module", params=["thread", "process"])
def samples(request: pytest.FixtureRequest) -> Iterator[ToolLoader]:
    """The sample folder, loaded in each isolation mode: every sample behaves the same in both."""
    loader = ToolLoader([SAMPLE_TOOLS], isolation=request.param)
    loader.scan()
    yield loader
    loader.close()


def call(loader: ToolLoader, name: str, input: dict[str, Any]) -> ToolResult:
    return loader.registry.invoke(name, input)


def payload(result: ToolResult) -> Any:
    assert result["status"] == "success", result
    block = result["content"][0]
    return block["json"] if "json" in block else block["text"]


def test_every_file_loads_and_the_helper_defines_no_tools(samples: ToolLoader) -> None:
    states = {s.path.name: (s.state, s.tools) for s in samples.status()}
    assert states == {
        "calculator.py": (FileState.LOADED, ("calculator",)),
        "call_info.py": (FileState.LOADED, ("call_info",)),
        "count_primes.py": (FileState.LOADED, ("count_primes",)),
        "currency_converter.py": (FileState.LOADED, ("currency_converter",)),
        "shipping_quote.py": (FileState.LOADED, ("shipping_quote",)),
        "slugify.py": (FileState.LOADED, ("slugify",)),
        "text_helpers.py": (FileState.LOADED, ()),
        "unit_converter.py": (FileState.LOADED, ("unit_converter",)),
        "word_count.py": (FileState.LOADED, ("word_count",)),
    }
    kinds = {tool.tool_name: tool.tool_type for tool in samples.registry.list()}
    assert kinds["currency_converter"] == "class"
    assert kinds["word_count"] == "module"
    assert {kinds[n] for n in kinds if n not in ("currency_converter", "word_count")} == {"function"}


def test_every_sample_passes_check_strict(samples: ToolLoader) -> None:
    report = samples.scan()
    assert find_problems(samples, report, strict=True) == []


@pytest.mark.parametrize(
    ("operation", "expected"), [("add", 8.0), ("subtract", 2.0), ("multiply", 15.0), ("divide", 5 / 3)]
)
def test_calculator(samples: ToolLoader, operation: str, expected: float) -> None:
    assert payload(call(samples, "calculator", {"operation": operation, "a": 5, "b": 3})) == pytest.approx(
        expected
    )


def test_calculator_divide_by_zero_is_an_error_result(samples: ToolLoader) -> None:
    result = call(samples, "calculator", {"operation": "divide", "a": 1, "b": 0})
    assert result["status"] == "error"
    assert result["content"] == [{"text": "Cannot divide by zero"}]


def test_calculator_schema_lists_the_operations(samples: ToolLoader) -> None:
    tool = samples.registry.get("calculator")
    assert tool is not None
    schema = tool.tool_spec["inputSchema"]["json"]
    assert schema["properties"]["operation"] == {
        "description": "What to do: add, subtract, multiply or divide.",
        "enum": ["add", "subtract", "multiply", "divide"],
        "type": "string",
    }


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (5, "km", "mi", 3.10686),
        (1, "lb", "g", 453.592),
        (100, "C", "F", 212.0),
        (0, "K", "C", -273.15),
    ],
)
def test_unit_converter(samples: ToolLoader, value: float, source: str, target: str, expected: float) -> None:
    out = payload(call(samples, "unit_converter", {"value": value, "from_unit": source, "to_unit": target}))
    assert out == {"value": expected, "unit": target, "from": f"{value:g} {source}"}


def test_unit_converter_refuses_mixed_dimensions(samples: ToolLoader) -> None:
    result = call(samples, "unit_converter", {"value": 1, "from_unit": "km", "to_unit": "kg"})
    assert result["status"] == "error"
    assert "cannot convert 'km' to 'kg'" in result["content"][0]["text"]


def test_currency_converter_uses_the_offline_table_and_has_metadata(samples: ToolLoader) -> None:
    out = payload(
        call(samples, "currency_converter", {"amount": 100, "from_currency": "USD", "to_currency": "EUR"})
    )
    assert out == {"amount": 92.0, "currency": "EUR", "rate": 0.92}
    bad = call(samples, "currency_converter", {"amount": -1, "from_currency": "USD", "to_currency": "XXX"})
    assert bad["status"] == "error"
    tool = samples.registry.get("currency_converter")
    metadata = getattr(tool, "metadata", None)
    assert metadata is not None
    assert (metadata.version, metadata.category, metadata.tags) == (
        "1.2.0",
        "finance",
        ("currency", "conversion", "offline"),
    )
    assert len(metadata.examples) == 2
    for example in metadata.examples:  # the documented examples really run
        assert call(samples, "currency_converter", example["input"])["status"] == "success"


def test_word_count_module_tool(samples: ToolLoader) -> None:
    out = payload(call(samples, "word_count", {"text": "The cat and the hat. It's well-known!", "top": 1}))
    assert out == {"words": 7, "distinct": 6, "characters": 37, "top": [{"word": "the", "count": 2}]}


def test_slugify_shares_the_helper(samples: ToolLoader) -> None:
    assert payload(call(samples, "slugify", {"title": "Café au lait: a guide"})) == "cafe-au-lait-a-guide"
    assert payload(
        call(samples, "slugify", {"title": "One two three four", "separator": "_", "max_length": 9})
    ) == ("one_two")


def test_call_info_receives_the_tool_context(samples: ToolLoader) -> None:
    result = samples.registry.invoke(
        "call_info", {"note": "hello"}, tool_use_id="tooluse_sample", invocation_state={"request": 1}
    )
    assert payload(result) == {
        "note": "hello",
        "tool_use_id": "tooluse_sample",
        "tool_name": "call_info",
        "agent": None,
        "invocation_state_keys": ["request"],
    }


def test_shipping_quote_validates_the_nested_model(samples: ToolLoader) -> None:
    shipment = {
        "origin": {"city": "Berlin", "country": "DE"},
        "destination": {"city": "Munich", "country": "de"},
        "parcels": [{"weight_kg": 2.5}, {"weight_kg": 1, "fragile": True}],
        "service": "express",
    }
    out = payload(call(samples, "shipping_quote", {"shipment": shipment}))
    assert out == {"zone": "domestic", "parcels": 2, "price_eur": 21.9, "service": "express"}
    shipment["destination"] = {"city": "Paris", "country": "FRA"}
    bad = call(samples, "shipping_quote", {"shipment": shipment})
    assert bad["status"] == "error"
    assert "shipment.destination.country" in bad["content"][0]["text"]


def test_count_primes_streams_progress_before_its_result(samples: ToolLoader) -> None:
    tool = samples.registry.get("count_primes")
    assert tool is not None

    async def collect() -> list[Any]:
        use: ToolUse = {
            "toolUseId": "tooluse_primes",
            "name": "count_primes",
            "input": {"limit": 1000, "chunks": 5},
        }
        return [event async for event in tool.stream(use, {})]

    events = asyncio.run(collect())
    progress = [e for e in events if isinstance(e, dict) and "progress" in e]
    assert [e["progress"] for e in progress] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert [e["found"] for e in progress] == sorted(e["found"] for e in progress)
    final = events[-1]
    assert final == {
        "toolUseId": "tooluse_primes",
        "status": "success",
        "content": [{"json": {"limit": 1000, "count": 168, "largest": 997}}],
    }
    assert events.index(progress[-1]) < len(events) - 1
