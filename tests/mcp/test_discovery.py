"""``--discovery search|hybrid``: a steady two-tool listing; tools found and called through it live."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from support import eventually, text_of, write

from loader.mcp import MCPToolServer
from loader.mcp.discovery import ALWAYS_LOAD_META_KEY, SEARCH_HINT_META_KEY, Discovery
from loader.reload.loader import ToolLoader


def tool_source(name: str, doc: str, options: str = "") -> str:
    return (
        "from loader import tool\n\n"
        f"@tool{options}\n"
        f"def {name}(city: str) -> str:\n"
        f'    """{doc}"""\n'
        f"    return '{name} ' + city\n"
    )


def _json(result: Any) -> Any:
    return json.loads(text_of(result))


def _served(loader: ToolLoader, name: str) -> None:
    """Wait until the record the server answers from holds ``name``."""
    eventually(lambda: name in loader.published.snapshot, message=f"{name} published")


def test_search_mode_finds_and_calls_a_tool_saved_after_the_client_listed(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "weather.py", tool_source("get_forecast", "The weather forecast for a city."))
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader, discovery=Discovery.SEARCH)

    async def scenario() -> None:
        async with Client(server.server) as client:
            first = (await client.list_tools()).model_dump(mode="json", by_alias=True, exclude_none=True)
            assert [t["name"] for t in first["tools"]] == ["search_tools", "call_tool"]
            write(tools_dir / "trains.py", tool_source("train_times", "Departures from a railway station."))
            await anyio.to_thread.run_sync(_served, loader, "train_times")
            found = _json(await client.call_tool("search_tools", {"query": "when does the next train leave"}))
            hit = found["tools"][0]
            assert hit["name"] == "train_times"
            assert hit["inputSchema"]["required"] == ["city"] and len(hit["digest"]) == 64
            called = await client.call_tool(
                "call_tool", {"name": "train_times", "arguments": {"city": "Ely"}}
            )
            assert not called.is_error and text_of(called) == "train_times Ely"
            unknown = await client.call_tool("call_tool", {"name": "train_time", "arguments": {}})
            assert unknown.is_error and "Unknown tool: train_time" in text_of(unknown)
            assert "train_times" in json.dumps(unknown.model_dump(mode="json"))
            stale = await client.call_tool(
                "call_tool", {"name": "train_times", "arguments": {"city": "Ely"}, "digest": "0" * 64}
            )
            assert stale.is_error
            bad = await client.call_tool("call_tool", {"name": "train_times", "arguments": {}})
            assert bad.is_error and "city" in text_of(bad)
            again = (await client.list_tools()).model_dump(mode="json", by_alias=True, exclude_none=True)
            assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)

    anyio.run(scenario)


def test_hybrid_lists_always_load_tools_and_the_full_listing_carries_hints(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(
        tools_dir / "pinned.py",
        tool_source("pinned", "Always here.", "(always_load=True, search_hint='pin')"),
    )
    write(tools_dir / "other.py", tool_source("other", "Found by search."))
    loader = make_loader(tools_dir)

    async def listed(mode: Discovery) -> list[dict[str, Any]]:
        server = MCPToolServer(loader.registry, loader=loader, discovery=mode)
        async with Client(server.server) as client:
            result = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]

    hybrid = anyio.run(listed, Discovery.HYBRID)
    assert [t["name"] for t in hybrid] == ["search_tools", "call_tool", "pinned"]
    full = {t["name"]: t for t in anyio.run(listed, Discovery.ALL)}
    assert full["pinned"]["_meta"][ALWAYS_LOAD_META_KEY] is True
    assert full["pinned"]["_meta"][SEARCH_HINT_META_KEY] == "pin"
    assert ALWAYS_LOAD_META_KEY not in full["other"]["_meta"]


def test_a_client_that_never_relists_calls_every_tool_created_after_it_connected(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader, discovery=Discovery.SEARCH)
    rounds = 100

    async def scenario() -> list[str]:
        answers = []
        async with Client(server.server) as client:
            await client.list_tools()
            for n in range(rounds):
                name = f"fresh_tool_{n}"
                write(tools_dir / f"{name}.py", tool_source(name, f"Fresh tool number {n}."))
                await anyio.to_thread.run_sync(_served, loader, name)
                called = await client.call_tool("call_tool", {"name": name, "arguments": {"city": "x"}})
                answers.append(text_of(called))
        return answers

    assert anyio.run(scenario) == [f"fresh_tool_{n} x" for n in range(rounds)]


def test_search_mode_announces_list_changed_only_when_its_listing_changes(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader, discovery=Discovery.HYBRID)
    notes: list[Any] = []

    async def note(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            notes.append(message)

    async def scenario() -> None:
        async with Client(server.server, mode="legacy", message_handler=note) as client:
            await client.list_tools()
            write(tools_dir / "plain.py", tool_source("plain", "Found by search."))
            await anyio.to_thread.run_sync(_served, loader, "plain")
            write(tools_dir / "pinned.py", tool_source("pinned", "Listed.", "(always_load=True)"))
            await anyio.to_thread.run_sync(_served, loader, "pinned")
            with anyio.fail_after(10):
                while not notes:
                    await anyio.sleep(0.01)
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["search_tools", "call_tool", "pinned"]

    anyio.run(scenario)
    assert len(notes) == 1  # for pinned.py; plain.py's reload left the listing as it was
