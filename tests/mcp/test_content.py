"""Every MCP content type from a tool's result: text, image, audio, embedded resources, several at once."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from loader.mcp import MCPToolServer, to_call_tool_result
from loader.registry.tool_registry import ToolRegistry
from loader.tools.function_tool import FunctionTool
from loader.types import ToolResult

pytestmark = pytest.mark.anyio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def mixed() -> dict[str, Any]:
    """Text, an image, audio and two embedded resources (text and binary) in one result."""
    return {
        "status": "success",
        "content": [
            {"text": "Multiple content types test:"},
            {"image": {"format": "png", "source": {"bytes": PNG}}},
            {"audio": {"format": "wav", "source": {"bytes": WAV}}},
            {"resource": {"uri": "test://mixed", "mimeType": "application/json", "text": '{"test": 1}'}},
            {"resource": {"uri": "test://blob", "mimeType": "image/png", "source": {"bytes": PNG}}},
        ],
    }


EXPECTED = [
    {"type": "text", "text": "Multiple content types test:"},
    {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
    {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"},
    {
        "type": "resource",
        "resource": {"uri": "test://mixed", "mimeType": "application/json", "text": '{"test": 1}'},
    },
    {"type": "resource", "resource": {"uri": "test://blob", "mimeType": "image/png", "blob": b64(PNG)}},
]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_audio_and_resources_map_to_their_mcp_blocks(version: str) -> None:
    result: ToolResult = {"toolUseId": "t", **mixed()}  # type: ignore[typeddict-item]
    mapped = to_call_tool_result(result, None, protocol_version=version)
    assert mapped.model_dump(by_alias=True, exclude_none=True)["content"] == EXPECTED


def test_audio_format_and_resource_mime_types_have_sensible_defaults() -> None:
    result: ToolResult = {
        "toolUseId": "t",
        "status": "success",
        "content": [
            {"audio": {"format": "mp3", "source": {"bytes": b"ID3"}}},
            {"resource": {"uri": "file:///tmp/notes.txt", "text": "hi"}},
        ],
    }
    content = to_call_tool_result(result, None, protocol_version="2026-07-28").model_dump(
        by_alias=True, exclude_none=True
    )["content"]
    assert content == [
        {"type": "audio", "data": b64(b"ID3"), "mimeType": "audio/mpeg"},
        {
            "type": "resource",
            "resource": {"uri": "file:///tmp/notes.txt", "mimeType": "text/plain", "text": "hi"},
        },
    ]


async def test_a_tool_file_result_reaches_a_real_client_with_every_block() -> None:
    def test_multiple_content_types() -> dict[str, Any]:
        """Every kind of block at once."""
        return mixed()

    registry = ToolRegistry()
    registry.register(FunctionTool(test_multiple_content_types))
    server = MCPToolServer(registry)
    for mode in ("legacy", "auto"):
        async with Client(server.server, mode=mode) as client:
            result = await client.call_tool("test_multiple_content_types", {})
        assert not result.is_error
        assert [block.type for block in result.content] == ["text", "image", "audio", "resource", "resource"]
        audio = result.content[2]
        assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
        resource = result.content[3]
        assert isinstance(resource, types.EmbeddedResource) and str(resource.resource.uri) == "test://mixed"


@pytest.mark.parametrize(
    "value", [0, -7, 2**70, True, False, None, 1.5, 1e16, -0.0, 3e-7, float("nan"), float("inf"), "é\n"]
)
def test_a_scalar_json_result_reads_as_json_writes_it(value: Any) -> None:
    """Scalars skip the JSON encoder; their text is still exactly its (non-finite floats as null)."""
    result: ToolResult = {"toolUseId": "t", "status": "success", "content": [{"json": value}]}
    text = to_call_tool_result(result, None, protocol_version="2026-07-28").content[0]
    expected = None if isinstance(value, float) and not math.isfinite(value) else value
    assert isinstance(text, types.TextContent)
    assert text.text == json.dumps(expected, ensure_ascii=False)
