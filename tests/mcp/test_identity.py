"""Tool identity on the wire, through the SDK's own client: digests on listings and results, stale calls refused.

Digests are recomputed here from what the client received, with the ``rfc8785``
package directly, the way any client may check them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
import rfc8785
from mcp import Client
from support import FAST, eventually, text_of, write

from loader.mcp import MCPToolServer
from loader.mcp.identity import RecentVersions
from loader.mcp.server import CallOutcome, CallRecord
from loader.mcp.wire import DIGEST_META_KEY, EXPECTED_DIGEST_META_KEY, FINGERPRINT_META_KEY
from loader.registry.tool_registry import ToolRegistry
from loader.reload.loader import ToolLoader
from loader.tools.function_tool import FunctionTool
from loader.types import AgentTool, ToolGenerator, ToolSpec, ToolUse

pytestmark = pytest.mark.anyio

RAN: list[str] = []


def forecast(city: str) -> str:
    """Today's forecast for a city.

    Args:
        city: The city.
    """
    RAN.append(city)
    return f"sunny in {city}"


def forecast_v2(place: str, days: int) -> str:
    """The forecast for a place, several days ahead.

    Args:
        place: Where.
        days: How many days.
    """
    RAN.append(place)
    return f"sunny in {place} for {days} days"


def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


def client_digest(tool: types.Tool) -> str:
    """What a client computes: sha256 of the entry it received, without ``_meta``, in RFC 8785 JSON."""
    entry = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    entry.pop("_meta", None)
    return hashlib.sha256(rfc8785.dumps(entry)).hexdigest()


def pin(digest: str) -> types.RequestParamsMeta:
    """The request ``_meta`` of a call made against the version whose digest the client saw."""
    return cast(types.RequestParamsMeta, {EXPECTED_DIGEST_META_KEY: digest})


def listed_digests(result: types.ListToolsResult) -> dict[str, str]:
    return {tool.name: (tool.meta or {})[DIGEST_META_KEY] for tool in result.tools}


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(FunctionTool(forecast))
    registry.register(FunctionTool(greet))
    return registry


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_listed_tool_carries_the_digest_a_client_computes(
    registry: ToolRegistry, mode: str
) -> None:
    server = MCPToolServer(registry)
    async with Client(server.server, mode=mode) as client:
        listed = await client.list_tools()
    digests = listed_digests(listed)
    assert digests == {tool.name: client_digest(tool) for tool in listed.tools}
    assert digests == {name: registry.snapshot().digest(name) for name in ("forecast", "greet")}
    assert len(set(digests.values())) == 2


class Annotated(AgentTool):
    """A tool whose spec carries ``_meta`` (as MCP lets a tool's entry do), answering with its ``_meta``."""

    def __init__(self, meta: dict[str, Any]) -> None:
        super().__init__()
        self.meta = meta

    @property
    def tool_name(self) -> str:
        return "annotated"

    @property
    def tool_spec(self) -> ToolSpec:
        spec = {
            "name": "annotated",
            "description": "Answers.",
            "inputSchema": {"json": {}},
            "_meta": self.meta,
        }
        return cast(ToolSpec, spec)

    @property
    def tool_type(self) -> str:
        return "test"

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        text = json.dumps(self.meta)
        yield {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": text}]}


async def test_a_change_to_a_tools_meta_alone_keeps_its_digest() -> None:
    """``_meta`` is not what a model is shown: a new version differing only there is the same tool."""
    registry = ToolRegistry()
    registry.register(Annotated({"example.com/ui": "v1"}))
    server = MCPToolServer(registry)
    async with Client(server.server) as client:
        before = listed_digests(await client.list_tools())["annotated"]
        await anyio.to_thread.run_sync(lambda: registry.replace(Annotated({"example.com/ui": "v2"})))
        answered = await client.call_tool("annotated", {}, meta=pin(before))
        after = listed_digests(await client.list_tools())["annotated"]
    assert not answered.is_error, text_of(answered)
    assert text_of(answered) == '{"example.com/ui": "v2"}'  # the new version answered, not refused as stale
    assert after == before == registry.snapshot().digest("annotated")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_result_names_the_version_that_answered(registry: ToolRegistry, mode: str) -> None:
    server = MCPToolServer(registry)
    async with Client(server.server, mode=mode) as client:
        before = listed_digests(await client.list_tools())
        called = await client.call_tool("forecast", {"city": "Oslo"})
        assert called.meta is not None and called.meta[DIGEST_META_KEY] == before["forecast"]
        await anyio.to_thread.run_sync(lambda: registry.replace(FunctionTool(forecast_v2, name="forecast")))
        after = listed_digests(await client.list_tools())
        assert after["forecast"] != before["forecast"] and after["greet"] == before["greet"]
        again = await client.call_tool("forecast", {"place": "Oslo", "days": 2})
        assert again.meta is not None and again.meta[DIGEST_META_KEY] == after["forecast"]
        unknown = await client.call_tool("nothing", {})
        assert unknown.is_error and unknown.meta is not None and DIGEST_META_KEY not in unknown.meta


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_shaped_by_an_old_version_is_refused_with_what_changed(
    registry: ToolRegistry, mode: str
) -> None:
    server = MCPToolServer(registry)
    records: list[CallRecord] = []
    server.subscribe_calls(records.append)
    RAN.clear()
    async with Client(server.server, mode=mode) as client:
        seen = listed_digests(await client.list_tools())["forecast"]
        pinned = await client.call_tool("forecast", {"city": "Oslo"}, meta=pin(seen))
        assert not pinned.is_error and RAN == ["Oslo"]
        # The tool changes; this client misses list_changed and calls as it saw the tool.
        await anyio.to_thread.run_sync(lambda: registry.replace(FunctionTool(forecast_v2, name="forecast")))
        refused = await client.call_tool("forecast", {"city": "Bergen"}, meta=pin(seen))
        assert refused.is_error and RAN == ["Oslo"]  # not run
        current = listed_digests(await client.list_tools())["forecast"]
        text = text_of(refused)
        assert "tool 'forecast' changed since you saw it" in text
        assert "BREAKING" in text and "'city'" in text and "'place'" in text and "description changed" in text
        assert current in text
        assert refused.meta is not None
        assert refused.meta[DIGEST_META_KEY] == current
        assert refused.meta[FINGERPRINT_META_KEY] == server.fingerprint()
        details = refused.structured_content
        assert isinstance(details, dict)
        assert details["tool"] == "forecast"
        assert details["expectedDigest"] == seen and details["currentDigest"] == current
        assert details["change"]["kind"] == "breaking"
        reasons = [item["reason"] for item in details["change"]["reasons"]]
        assert any("'city'" in reason for reason in reasons)
        assert any("'place'" in reason for reason in reasons)
        # Recovery within one turn: the refusal carries the definition the listing now gives.
        (listed,) = [tool for tool in (await client.list_tools()).tools if tool.name == "forecast"]
        entry = listed.model_dump(by_alias=True, exclude_none=True, mode="json")
        entry.pop("_meta")
        assert details["current"] == entry
        retried = await client.call_tool("forecast", {"place": "Bergen", "days": 1}, meta=pin(current))
        assert not retried.is_error and RAN == ["Oslo", "Bergen"]
        plain = await client.call_tool("forecast", {"place": "Bodø", "days": 3})  # no pin: runs as ever
        assert not plain.is_error and RAN == ["Oslo", "Bergen", "Bodø"]
    assert [record.outcome for record in records] == [
        CallOutcome.SUCCESS,
        CallOutcome.STALE,
        CallOutcome.SUCCESS,
        CallOutcome.SUCCESS,
    ]


async def test_a_digest_this_server_never_saw_is_refused_without_a_comparison(registry: ToolRegistry) -> None:
    server = MCPToolServer(registry)
    RAN.clear()
    async with Client(server.server) as client:
        refused = await client.call_tool("forecast", {"city": "Oslo"}, meta=pin("0" * 64))
    assert refused.is_error and RAN == []
    assert "does not know the version you saw (digest 000000000000)" in text_of(refused)
    details = refused.structured_content
    assert isinstance(details, dict) and details["change"] is None
    assert details["currentDigest"] == registry.snapshot().digest("forecast")


@pytest.mark.parametrize("expected", ["f" * 1_000_000, "g" * 64, "0" * 63, "A" * 64, ["f" * 100_000], 7])
async def test_an_expected_digest_that_is_no_digest_is_refused_and_not_echoed(
    registry: ToolRegistry, expected: object
) -> None:
    """A 1 MB ``expected-digest`` was echoed back twice (a 2 MB answer); now a malformed one is named, not copied."""
    server = MCPToolServer(registry)
    RAN.clear()
    async with Client(server.server) as client:
        meta = cast(types.RequestParamsMeta, {EXPECTED_DIGEST_META_KEY: expected})
        refused = await client.call_tool("forecast", {"city": "Oslo"}, meta=meta)
    assert refused.is_error and RAN == []
    assert "tool-loader/expected-digest" in text_of(refused)
    assert "64 lowercase hexadecimal characters" in text_of(refused)
    assert len(refused.model_dump_json()) < 4_000


FORECAST_FILE = '''
from loader import tool

@tool
def forecast({params}) -> str:
    """{doc}"""
    return "sunny"
'''


def test_a_client_that_missed_a_save_is_told_what_changed(tmp_path: Path) -> None:
    """Through a loader watching a real folder: an added optional parameter is additive."""
    folder = tmp_path / "tools"
    write(folder / "forecast.py", FORECAST_FILE.format(params="city: str", doc="Today's forecast."))
    loader = ToolLoader([folder], config=FAST)
    loader.scan()
    loader.start()
    try:
        server = MCPToolServer(loader.registry, loader=loader)

        async def scenario() -> tuple[types.CallToolResult, str]:
            async with Client(server.server) as client:
                seen = listed_digests(await client.list_tools())["forecast"]
                write(
                    folder / "forecast.py",
                    FORECAST_FILE.format(params="city: str, days: int = 1", doc="Today's forecast."),
                )
                await anyio.to_thread.run_sync(
                    lambda: eventually(lambda: loader.published.snapshot.digest("forecast") != seen)
                )
                refused = await client.call_tool("forecast", {"city": "Oslo"}, meta=pin(seen))
                return refused, listed_digests(await client.list_tools())["forecast"]

        refused, current = anyio.run(scenario)
    finally:
        loader.close()
    assert refused.is_error
    assert "additive: optional parameter 'days' added" in text_of(refused)
    details = refused.structured_content
    assert isinstance(details, dict) and details["currentDigest"] == current


def test_recent_versions_are_bounded_per_tool_and_in_all() -> None:
    versions = RecentVersions(per_tool=2, tools=2)
    spec: Any = {"name": "t", "description": "", "inputSchema": {"json": {}}}
    for digest in ("a", "b", "c"):
        versions.remember("t", digest, spec)
    assert not versions.knows("t", "a") and versions.knows("t", "b") and versions.knows("t", "c")
    versions.remember("u", "x", spec)
    versions.remember("t", "b", spec)  # t seen again: u is now the least recent
    versions.remember("v", "y", spec)
    assert versions.spec_of("u", "x") is None and versions.spec_of("t", "c") is spec
    assert len(versions) == 3
