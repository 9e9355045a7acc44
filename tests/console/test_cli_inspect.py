"""``tool-loader inspect`` as a real subprocess: spec, schema, metadata, examples, source, display."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support import FAST, run_cli

from loader.console.inspect_cmd import schema_type
from loader.reload.loader import ToolLoader

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"


def first_line_of(path: Path, prefix: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(prefix))


def test_class_tool_page_shows_schema_metadata_examples_and_source(tmp_path: Path) -> None:
    done = run_cli("inspect", "currency_converter", "--dir", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    line = first_line_of(SAMPLE_TOOLS / "currency_converter.py", "@tool(")
    assert f"currency_converter  class tool  {SAMPLE_TOOLS}/currency_converter.py:{line}" in out
    assert "Convert an amount between currencies using a fixed, offline table of exchange rates." in out
    # parameters table
    assert "from_currency" in out and "EUR | USD | GBP | JPY | CHF | CAD" in out
    # the JSON Schema, pretty-printed
    assert '"additionalProperties": false' in out
    assert '"minimum": 0' in out
    # metadata
    for key, value in [
        ("version", "1.2.0 #"),
        ("category", "finance"),
        ("tags", "currency, conversion, offline"),
        ("requires_auth", "no"),
        ("rate_limit", "-"),
        ("dynamic", "yes"),
    ]:
        assert any(row.split()[:1] == [key] and value in row for row in out.splitlines()), key
    # examples and display properties
    assert "example 1" in out and "100 US dollars in euro" in out
    assert "example 2" in out and '"from_currency": "GBP"' in out
    assert "Display properties" in out and "Class" in out


def test_json_spec_is_the_tool_spec_and_nested_models_are_named(tmp_path: Path) -> None:
    done = run_cli("inspect", "shipping_quote", "--json", "--dir", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    loader = ToolLoader([SAMPLE_TOOLS], config=FAST)
    try:
        loader.scan()
        tool = loader.registry.get("shipping_quote")
        assert tool is not None
        assert record["spec"] == json.loads(json.dumps(tool.tool_spec))
        digest = loader.registry.snapshot().digest("shipping_quote")
        assert record["digest"] == digest and digest is not None
    finally:
        loader.close()
    assert record["source"]["line"] == first_line_of(SAMPLE_TOOLS / "shipping_quote.py", "@tool")
    assert record["parameters"] == [{"name": "shipment", "required": True}]
    page = run_cli("inspect", "shipping-quote", "--dir", str(SAMPLE_TOOLS), cwd=tmp_path)  # '-' finds '_'
    assert page.returncode == 0
    row = next(line for line in page.stdout.splitlines() if line.startswith("│ shipment "))
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells == [
        "shipment",
        "Shipment",
        "yes",
        "-",
        "The origin, destination, parcels and service level.",
    ]
    assert '"$defs"' in page.stdout and '"Address"' in page.stdout
    assert any(line.split()[:2] == ["digest", digest] for line in page.stdout.splitlines())


def test_enums_fold_between_values_at_80_columns(tmp_path: Path) -> None:
    allowed = {
        "calculator": {"add", "subtract", "multiply", "divide", "number"},
        "unit_converter": {"mm", "cm", "m", "km", "in", "ft", "yd", "mi", "mg", "g", "kg", "t"}
        | {"oz", "lb", "C", "F", "K", "number"},
    }
    for name, words in allowed.items():
        done = run_cli("inspect", name, "--dir", str(SAMPLE_TOOLS), cwd=tmp_path, env={"COLUMNS": "80"})
        assert done.returncode == 0, done.stderr
        rows = [line.split("│") for line in done.stdout.splitlines() if line.startswith("│")]
        type_cells = [cells[2] for cells in rows if len(cells) == 7]  # the parameters table's type column
        tokens = {token for cell in type_cells for token in re.split(r"[\s|]+", cell) if token}
        assert tokens == words, type_cells  # every value whole: no 'multiply' cut into 'multipl' and 'y'
        assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_schema_type_labels() -> None:
    assert schema_type({"type": "string"}) == "string"
    assert schema_type({"enum": ["a", "b", 3]}) == "a | b | 3"
    assert schema_type({"$ref": "#/$defs/Parcel"}) == "Parcel"
    assert schema_type({"type": "array", "items": {"$ref": "#/$defs/Parcel"}}) == "array[Parcel]"
    assert schema_type({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "integer | null"
    assert (
        schema_type({"type": "object", "additionalProperties": {"type": "number"}}) == "object[str, number]"
    )
    assert schema_type({}) == "any"


def test_unknown_tool_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("inspect", "nope", "--dir", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown tool 'nope'; available: calculator" in done.stderr
