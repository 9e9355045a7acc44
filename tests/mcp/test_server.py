"""The MCP server against the SDK's own client, in process (real client, real server, in-memory streams).

``mode="legacy"`` runs the 2025 handshake over JSON-RPC memory streams;
``mode="auto"`` on an in-process server speaks 2026-07-28 (``server/discover``,
per-request envelopes, ``subscriptions/listen``).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from mcp import Client
from mcp.server import Server
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import BaseModel
from support import text_of

from loader.mcp import FINGERPRINT_META_KEY, MCPToolServer, to_call_tool_result, to_mcp_tool
from loader.registry.tool_registry import ToolRegistry
from loader.tools.function_tool import FunctionTool
from loader.types import ToolResult, ToolSpec

pytestmark = pytest.mark.anyio

LEGACY = "2025-11-25"
MODERN = LATEST_MODERN_VERSION


class Forecast(BaseModel):
    city: str
    celsius: float


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def weather(city: str) -> Forecast:
    """Today's forecast for a city.

    Args:
        city: The city.
    """
    return Forecast(city=city, celsius=21.5)


def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def until(predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Wait (without blocking the loop) until ``predicate()`` is truthy."""
    with anyio.fail_after(timeout):
        while not (value := predicate()):
            await anyio.sleep(0.005)
    return value


def in_thread(function: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    """Run a registry write on a worker thread, as the loader does (listeners fire off the loop)."""
    return anyio.to_thread.run_sync(function, *args)


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    for function in (add, weather, greet):
        registry.register(FunctionTool(function), source=f"{function.__name__}.py")
    return registry


@pytest.fixture
def server(registry: ToolRegistry) -> MCPToolServer:
    return MCPToolServer(registry)


class Notes:
    """The notifications one legacy client received."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)

    def tools_changed(self) -> int:
        return sum(isinstance(m, types.ToolListChangedNotification) for m in self.messages)


@asynccontextmanager
async def legacy_client(server: MCPToolServer) -> AsyncIterator[tuple[Client, Notes]]:
    notes = Notes()
    async with Client(server.server, mode="legacy", message_handler=notes) as client:
        yield client, notes


def dumped(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(by_alias=True, exclude_none=True)


# -- capabilities ------------------------------------------------------------------


async def test_list_changed_is_advertised_in_both_eras(server: MCPToolServer) -> None:
    async with legacy_client(server) as (client, _):
        assert client.protocol_version == LEGACY
        assert client.server_capabilities.tools == types.ToolsCapability(list_changed=True)
    async with Client(server.server, mode="auto") as client:
        assert client.protocol_version == MODERN
        assert client.server_capabilities.tools == types.ToolsCapability(list_changed=True)


async def test_sdk_default_does_not_advertise_list_changed_to_handshake_clients() -> None:
    """Why the server subclasses ``Server``: the SDK's handshake default says false."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    plain: Server[Any] = Server("plain", on_list_tools=list_tools)
    async with Client(plain, mode="legacy") as client:
        assert client.server_capabilities.tools == types.ToolsCapability(list_changed=False)


# -- tools/list --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_repeated_listing_is_the_same_until_the_registry_changes(
    server: MCPToolServer, registry: ToolRegistry, mode: str
) -> None:
    async with Client(server.server, mode=mode) as client, Client(server.server, mode=mode) as other:
        first = await client.list_tools()
        again = await client.list_tools()
        elsewhere = await other.list_tools()
        assert again == first and elsewhere == first
        await in_thread(registry.unregister, "add")
        after = await other.list_tools()
        assert [tool.name for tool in after.tools] == [
            tool.name for tool in first.tools if tool.name != "add"
        ]
        assert after.meta is not None and first.meta is not None
        assert after.meta[FINGERPRINT_META_KEY] != first.meta[FINGERPRINT_META_KEY]
        assert await client.list_tools() == after


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_list_tools_gives_every_spec(server: MCPToolServer, registry: ToolRegistry, mode: str) -> None:
    async with Client(server.server, mode=mode) as client:
        listed = (await client.list_tools()).tools
    expected = [
        {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"description": "The first.", "type": "integer"},
                    "b": {"description": "The second.", "type": "integer"},
                },
                "required": ["a", "b"],
            },
        },
        {
            "name": "greet",
            "description": "Greet someone.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"description": "Parameter name", "type": "string"}},
                "required": ["name"],
            },
        },
        {
            "name": "weather",
            "description": "Today's forecast for a city.",
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"description": "The city.", "type": "string"}},
                "required": ["city"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
                "required": ["city", "celsius"],
            },
        },
    ]
    assert [{k: v for k, v in dumped(tool).items() if k != "_meta"} for tool in listed] == expected
    assert [(tool.meta or {}).get("tool-loader/digest") for tool in listed] == [
        registry.snapshot().digest(tool.name) for tool in listed
    ]
    from_registry = {spec["name"]: spec["inputSchema"]["json"] for spec in registry.specs()}
    assert {tool["name"]: tool["inputSchema"] for tool in expected} == from_registry


def test_output_schema_without_object_root_is_dropped_for_handshake_clients() -> None:
    spec: ToolSpec = {
        "name": "count",
        "description": "Count.",
        "inputSchema": {"json": {"properties": {}}},
        "outputSchema": {"json": {"type": "integer"}},
    }
    assert dumped(to_mcp_tool(spec, protocol_version=LEGACY)) == {
        "name": "count",
        "description": "Count.",
        "inputSchema": {"type": "object", "properties": {}},
    }
    assert dumped(to_mcp_tool(spec, protocol_version=MODERN)) == {
        "name": "count",
        "description": "Count.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "integer"},
    }


# -- tools/call --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_call_maps_text_and_json(server: MCPToolServer, mode: str) -> None:
    async with Client(server.server, mode=mode) as client:
        text = await client.call_tool("greet", {"name": "Ada"})
        structured = await client.call_tool("weather", {"city": "Oslo"})
        number = await client.call_tool("add", {"a": 2, "b": 3})
    assert text.is_error is False
    assert text.content == [types.TextContent(type="text", text="hello Ada")]
    assert text.structured_content is None
    assert structured.is_error is False
    assert structured.content == [types.TextContent(type="text", text='{"city": "Oslo", "celsius": 21.5}')]
    assert structured.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert number.content == [types.TextContent(type="text", text="5")]
    # A bare number is structured content only where the protocol allows any JSON value.
    assert number.structured_content == (5 if mode == "auto" else None)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_invalid_input_is_a_tool_error(server: MCPToolServer, mode: str) -> None:
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("add", {"a": "seven"})
    problems = {
        "errors": [
            {"parameter": "a", "problem": "must be an integer"},
            {"parameter": "b", "problem": "missing required parameter"},
        ]
    }
    assert result.is_error is True
    assert result.content == [
        types.TextContent(
            type="text",
            text="Invalid input for tool 'add':\n- a: must be an integer\n- b: missing required parameter",
        ),
        types.TextContent(type="text", text=json.dumps(problems)),
    ]
    assert result.structured_content == problems


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_calling_a_removed_tool_names_the_tools_now_available(
    server: MCPToolServer, registry: ToolRegistry, mode: str
) -> None:
    async with Client(server.server, mode=mode) as client:
        assert (await client.call_tool("greet", {"name": "x"})).is_error is False
        await in_thread(registry.unregister, "greet")
        result = await client.call_tool("greet", {"name": "x"})
    assert result.is_error is True
    assert result.content == [
        types.TextContent(type="text", text="Unknown tool: greet. Available tools: add, weather")
    ]


def test_images_documents_and_errors_map_to_mcp_content() -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    result: ToolResult = {
        "toolUseId": "t1",
        "status": "success",
        "content": [
            {"text": "see attached"},
            {"image": {"format": "jpg", "source": {"bytes": png}}},
            {"document": {"format": "md", "name": "notes", "source": {"bytes": b"# Title\n"}}},
            {"document": {"format": "pdf", "name": "report 1", "source": {"bytes": b"%PDF-1.7"}}},
        ],
    }
    mapped = to_call_tool_result(result, None, protocol_version=MODERN)
    assert mapped.model_dump(by_alias=True, exclude_none=True) == {
        "content": [
            {"type": "text", "text": "see attached"},
            {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/jpeg"},
            {
                "type": "resource",
                "resource": {
                    "uri": "tool-loader://documents/notes.md",
                    "mimeType": "text/markdown",
                    "text": "# Title\n",
                },
            },
            {
                "type": "resource",
                "resource": {
                    "uri": "tool-loader://documents/report%201.pdf",
                    "mimeType": "application/pdf",
                    "blob": base64.b64encode(b"%PDF-1.7").decode(),
                },
            },
        ],
        "isError": False,
        "resultType": "complete",
    }
    failure: ToolResult = {
        "toolUseId": "t2",
        "status": "error",
        "content": [{"text": "Error: boom"}, {"json": {"code": 7}}],
    }
    assert to_call_tool_result(failure, None, protocol_version=LEGACY).model_dump(
        by_alias=True, exclude_none=True
    ) == {
        "content": [{"type": "text", "text": "Error: boom"}, {"type": "text", "text": '{"code": 7}'}],
        "structuredContent": {"code": 7},
        "isError": True,
        "resultType": "complete",
    }


async def test_a_blocking_sync_tool_does_not_hold_up_other_calls(registry: ToolRegistry) -> None:
    started = threading.Event()
    release = threading.Event()

    def slow() -> str:
        """Block until released."""
        started.set()
        release.wait(20)
        return "slow done"

    registry.register(FunctionTool(slow))
    server = MCPToolServer(registry)
    finished: list[str] = []
    async with Client(server.server, mode="auto") as client, anyio.create_task_group() as group:

        async def call_slow() -> None:
            result = await client.call_tool("slow", {})
            finished.append(text_of(result))

        group.start_soon(call_slow)
        await in_thread(started.wait, 20)
        fast = await client.call_tool("add", {"a": 1, "b": 1})
        finished.append(text_of(fast))
        release.set()
    assert finished == ["2", "slow done"]


# -- change announcements ------------------------------------------------------


async def test_every_change_set_reaches_every_client_once(
    server: MCPToolServer, registry: ToolRegistry
) -> None:
    async with (
        legacy_client(server) as (first, first_notes),
        legacy_client(server) as (second, second_notes),
        Client(server.server, mode="auto") as modern,
        modern.listen(tools_list_changed=True) as subscription,
    ):
        events: list[Any] = []

        async def collect() -> None:
            async for event in subscription:
                events.append(event)

        async with anyio.create_task_group() as group:
            group.start_soon(collect)

            def three_changes_one_commit() -> None:
                with registry.batch() as batch:
                    batch.register(FunctionTool(mul))
                    batch.unregister("greet")
                    batch.replace(FunctionTool(add))

            await in_thread(three_changes_one_commit)
            await until(lambda: first_notes.tools_changed() and second_notes.tools_changed() and events)
            assert [tool.name for tool in (await first.list_tools()).tools] == ["add", "mul", "weather"]
            assert [tool.name for tool in (await modern.list_tools()).tools] == ["add", "mul", "weather"]

            await in_thread(registry.unregister, "mul")
            await until(lambda: first_notes.tools_changed() == 2 and second_notes.tools_changed() == 2)
            await until(lambda: len(events) == 2)
            assert [tool.name for tool in (await second.list_tools()).tools] == ["add", "weather"]
            group.cancel_scope.cancel()
    assert events == [types_tools_list_changed(), types_tools_list_changed()]


async def test_a_listen_stream_outlives_another_clients_exit(
    server: MCPToolServer, registry: ToolRegistry
) -> None:
    events: list[Any] = []
    async with Client(server.server, mode="auto") as staying, staying.listen(tools_list_changed=True) as sub:
        async with Client(server.server, mode="auto") as leaving, leaving.listen(tools_list_changed=True):
            pass
        await in_thread(registry.unregister, "add")
        with anyio.fail_after(20):
            events.append(await sub.__anext__())
    assert events == [types_tools_list_changed()]


def types_tools_list_changed() -> Any:
    from mcp.client.subscriptions import ToolsListChanged

    return ToolsListChanged()


async def test_a_changed_tool_is_called_in_its_new_version(
    server: MCPToolServer, registry: ToolRegistry
) -> None:
    def greet_v2(name: str) -> str:
        """Greet someone, loudly."""
        return f"HELLO {name.upper()}"

    async with legacy_client(server) as (client, notes):
        assert text_of(await client.call_tool("greet", {"name": "ada"})) == "hello ada"
        await in_thread(registry.replace, FunctionTool(greet_v2, name="greet"))
        await until(notes.tools_changed)
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["greet"].description == "Greet someone, loudly."
        result = await client.call_tool("greet", {"name": "ada"})
    assert result.content == [types.TextContent(type="text", text="HELLO ADA")]


async def test_a_closed_legacy_session_is_forgotten_at_the_next_announcement(
    server: MCPToolServer, registry: ToolRegistry
) -> None:
    """The SDK has no public end-of-connection hook: a failed notification is how we learn of it."""
    async with legacy_client(server) as (_, notes):
        await until(lambda: server.handshake_sessions == 1)
    async with legacy_client(server) as (_, notes):
        await until(lambda: server.handshake_sessions == 2)
        await in_thread(registry.unregister, "add")
        await until(notes.tools_changed)
        await until(lambda: server.handshake_sessions == 1)


class StalledSession:
    """A handshake-era session whose connection hangs: a notification to it never completes."""

    async def send_tool_list_changed(self) -> None:
        await anyio.sleep_forever()

    async def send_ping(self) -> None:
        await anyio.sleep_forever()


async def test_a_stalled_handshake_session_holds_up_no_later_announcement(
    server: MCPToolServer, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead connection may take until NOTIFY_TIMEOUT to give up; the next change must not wait for it."""
    monkeypatch.setattr("loader.mcp.sessions.NOTIFY_TIMEOUT", 3600.0)
    server._legacy_sessions.add(StalledSession())  # type: ignore[arg-type]
    events: list[Any] = []
    async with Client(server.server, mode="auto") as modern, modern.listen(tools_list_changed=True) as sub:

        async def collect() -> None:
            async for event in sub:
                events.append(event)

        async with anyio.create_task_group() as group:
            group.start_soon(collect)
            await in_thread(registry.unregister, "add")
            await until(lambda: len(events) == 1)
            await in_thread(registry.unregister, "greet")
            await until(lambda: len(events) == 2)
            group.cancel_scope.cancel()


# -- protocol hygiene and fingerprints ---------------------------------------------


def test_non_finite_floats_become_null_in_text_and_structured_content() -> None:
    result: ToolResult = {
        "toolUseId": "t3",
        "status": "success",
        "content": [{"json": {"inf": float("inf"), "values": [1.5, float("nan"), float("-inf")]}}],
    }
    mapped = to_call_tool_result(result, None, protocol_version=MODERN)
    block = mapped.content[0]
    assert isinstance(block, types.TextContent)
    expected = {"inf": None, "values": [1.5, None, None]}
    assert json.loads(block.text) == expected
    assert "Infinity" not in block.text and "NaN" not in block.text
    assert mapped.structured_content == expected
    wire = mapped.model_dump_json(by_alias=True)
    assert json.loads(wire)["structuredContent"] == expected


def returns_infinity() -> float:
    """Divide by zero the IEEE way."""
    return float("inf")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_listing_and_call_carries_the_tool_set_fingerprint(
    server: MCPToolServer, registry: ToolRegistry, mode: str
) -> None:
    async with Client(server.server, mode=mode) as client:
        listed = await client.list_tools()
        assert listed.meta is not None
        before = listed.meta[FINGERPRINT_META_KEY]
        assert before == server.fingerprint() and len(before) == 64
        called = await client.call_tool("add", {"a": 1, "b": 2})
        assert called.meta is not None and called.meta[FINGERPRINT_META_KEY] == before
        await in_thread(registry.register, FunctionTool(returns_infinity))
        after = (await client.list_tools()).meta
        assert after is not None and after[FINGERPRINT_META_KEY] not in (before, None)
        infinite = await client.call_tool("returns_infinity", {})
        assert (
            infinite.meta is not None and infinite.meta[FINGERPRINT_META_KEY] == after[FINGERPRINT_META_KEY]
        )
        assert not infinite.is_error
