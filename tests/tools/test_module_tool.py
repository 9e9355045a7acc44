"""Strands-style module tools: TOOL_SPEC plus a function."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from loader.errors import InvalidToolNameError, ToolDefinitionError
from loader.tools.module_tool import ModuleTool, validate_tool_spec

SPEC = {"name": "echo", "description": "Echo.", "inputSchema": {"json": {"type": "object"}}}


def echo(tool_use: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "success",
        "content": [{"text": f"{tool_use['input']['x']} {sorted(kwargs)}"}],
    }


async def aecho(tool_use: dict[str, Any], **kwargs: Any) -> str:
    await asyncio.sleep(0)
    return f"async {tool_use['input']['x']}"


def broken(tool_use: dict[str, Any], **kwargs: Any) -> None:
    raise ValueError("nope")


def test_spec_validation() -> None:
    assert validate_tool_spec({**SPEC, "inputSchema": {"type": "object"}}, where="f.py")["inputSchema"] == {
        "json": {"type": "object"}
    }
    with pytest.raises(ToolDefinitionError, match=r"f\.py: TOOL_SPEC is missing 'description'"):
        validate_tool_spec({"name": "x", "inputSchema": {}}, where="f.py")
    with pytest.raises(ToolDefinitionError, match="must be a dict"):
        validate_tool_spec([], where="f.py")
    with pytest.raises(InvalidToolNameError):
        validate_tool_spec({**SPEC, "name": "no spaces"}, where="f.py")


def test_invoke_passes_invocation_state_as_kwargs() -> None:
    tool = ModuleTool(validate_tool_spec(SPEC, where="t"), echo)
    result = tool.invoke({"x": 1}, tool_use_id="u", invocation_state={"k": 1}, agent="a")
    assert result == {"toolUseId": "u", "status": "success", "content": [{"text": "1 ['agent', 'k']"}]}
    assert tool.tool_type == "module" and tool.supports_hot_reload


def test_async_function_and_errors() -> None:
    assert ModuleTool(validate_tool_spec(SPEC, where="t"), aecho).invoke({"x": 2})["content"] == [
        {"text": "async 2"}
    ]
    result = ModuleTool(validate_tool_spec(SPEC, where="t"), broken).invoke({}, tool_use_id="e")
    assert result == {"toolUseId": "e", "status": "error", "content": [{"text": "Error: ValueError - nope"}]}


def test_input_is_checked_against_the_spec_schema() -> None:
    spec = {
        **SPEC,
        "inputSchema": {
            "json": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
        },
    }
    tool = ModuleTool(validate_tool_spec(spec, where="t"), echo)
    result = tool.invoke({"x": "one"}, tool_use_id="v")
    assert result["status"] == "error"
    assert result["content"][0]["text"].startswith("Invalid input for tool 'echo':\n- x:")
    assert result["content"][1]["json"]["errors"][0]["parameter"] == "x"
    missing = tool.invoke({}, tool_use_id="w")
    assert missing["content"][1]["json"] == {
        "errors": [{"parameter": "x", "problem": "missing required parameter"}]
    }
    assert tool.invoke({"x": 1})["status"] == "success"


def test_an_invalid_spec_schema_is_not_enforced() -> None:
    spec = {**SPEC, "inputSchema": {"json": {"type": "not-a-type"}}}
    assert ModuleTool(validate_tool_spec(spec, where="t"), echo).invoke({"x": 3})["status"] == "success"


def test_tool_spec_is_a_copy_callers_cannot_corrupt() -> None:
    tool = ModuleTool(validate_tool_spec(SPEC, where="t"), echo)
    tool.tool_spec["inputSchema"]["json"]["type"] = "array"
    assert tool.tool_spec["inputSchema"]["json"]["type"] == "object"
