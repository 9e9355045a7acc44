"""A JSON Schema 2020-12 input schema is listed exactly as written, whatever the tool style and protocol era."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from loader import tool
from loader.mcp import MCPToolServer
from loader.registry.tool_registry import ToolRegistry
from loader.tools.class_tool import ClassTool, decorate_class
from loader.tools.module_tool import ModuleTool, validate_tool_spec

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool(name="function_style", input_schema=SCHEMA)
def function_style(**contact: Any) -> str:
    """A function tool."""
    return "ok"


class ClassStyle:
    """A class tool."""

    def execute(self, params: dict[str, Any]) -> str:
        return "ok"


def module_style(tool_use: Any, **kwargs: Any) -> str:
    return "ok"


@pytest.fixture
def server() -> MCPToolServer:
    registry = ToolRegistry()
    registry.register(function_style)
    registry.register(
        ClassTool.from_class(decorate_class(ClassStyle, name="class_style", input_schema=SCHEMA))
    )
    spec = validate_tool_spec(
        {"name": "module_style", "description": "A module tool.", "inputSchema": {"json": SCHEMA}},
        where="m.py",
    )
    registry.register(ModuleTool(spec, module_style))
    return MCPToolServer(registry)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_keyword_survives_the_listing(server: MCPToolServer, mode: str) -> None:
    async with Client(server.server, mode=mode) as client:
        listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert listed == {"class_style": SCHEMA, "function_style": SCHEMA, "module_style": SCHEMA}


async def test_the_schema_still_validates_calls(server: MCPToolServer) -> None:
    async with Client(server.server, mode="2026-07-28") as client:
        good = await client.call_tool("function_style", {"name": "Ada", "email": "ada@example.com"})
        bad = await client.call_tool("function_style", {"name": "Ada", "fax": "123"})
    assert not good.is_error
    assert bad.is_error
