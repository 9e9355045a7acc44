"""``ToolDescription``: one description per tool, read by ``DescribedTool`` and sent to the loader whole."""

from __future__ import annotations

from typing import Any

import pytest

from loader import tool
from loader.isolation.description_wire import description_from_wire, description_to_wire
from loader.tools.class_tool import ClassTool
from loader.tools.description import DescribedTool, ToolDescription, description_of
from loader.tools.module_tool import ModuleTool
from loader.types import AgentTool, ToolExample, ToolGenerator, ToolSpec, ToolUse


@tool(category="maths", tags=["sum"], examples=[{"params": {"a": 1, "b": 2}, "expected_output": 3}])
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(name="counter", description="Counts.", version="2.1.0", tags=["count"])
class Counter:
    def execute(self, params: dict[str, Any]) -> int:
        return 1


def echo(tool_use: dict[str, Any], **kwargs: Any) -> str:
    return "echo"


def _kinds() -> list[DescribedTool]:
    spec: ToolSpec = {"name": "echo", "description": "Echo.", "inputSchema": {"json": {"type": "object"}}}
    return [add, ClassTool(Counter()), ModuleTool(spec, echo, source_file="echo.py")]


@pytest.mark.parametrize("described", _kinds(), ids=lambda t: t.tool_type)
def test_each_kind_answers_from_its_description(described: DescribedTool) -> None:
    d = described.description
    assert (described.tool_name, described.tool_type, described.tool_spec) == (d.name, d.tool_type, d.spec)
    assert (described.source_file, described.source_line) == (d.source_file, d.source_line)
    assert (described.category, described.tags, described.examples) == (d.category, d.tags, d.examples)
    assert (described.version, described.metadata, described.is_async) == (d.version, d.metadata, d.is_async)
    assert described.get_display_properties() == d.display
    assert described.source_line is not None and d.display["Name"] == d.name


@pytest.mark.parametrize("described", _kinds(), ids=lambda t: t.tool_type)
def test_a_description_crosses_the_wire_unchanged(described: DescribedTool) -> None:
    assert description_from_wire(description_to_wire(described.description)) == described.description


def test_the_spec_a_caller_gets_is_a_copy() -> None:
    spec = add.tool_spec
    spec["description"] = "changed"
    assert add.tool_spec["description"] == "Add two numbers."


def test_kind_facts() -> None:
    assert add.is_async and add.category == "maths" and add.tags == ("sum",)
    assert add.examples == (ToolExample({"a": 1, "b": 2}, "", 3),)
    counter = ClassTool(Counter())
    assert counter.version == "2.1.0" and counter.metadata is not None and counter.metadata.name == "counter"
    assert counter.get_display_properties()["Version"] == "2.1.0"


class _HandWritten(AgentTool):
    """A third-party tool that is no ``DescribedTool``: its description is read from its properties."""

    @property
    def tool_name(self) -> str:
        return "hand"

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": "hand", "description": "By hand.", "inputSchema": {"json": {"type": "object"}}}

    @property
    def tool_type(self) -> str:
        return "custom"

    @property
    def tags(self) -> tuple[str, ...]:
        return ("made",)

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        yield {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "hi"}]}


def test_any_agent_tool_can_be_described() -> None:
    found = description_of(_HandWritten())
    assert found == ToolDescription(
        name="hand",
        spec={"name": "hand", "description": "By hand.", "inputSchema": {"json": {"type": "object"}}},
        tool_type="custom",
        tags=("made",),
        display={"Name": "hand", "Type": "custom"},
    )
    assert description_from_wire(description_to_wire(found)) == found
