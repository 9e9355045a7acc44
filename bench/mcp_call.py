"""Benchmark: the MCP ``tools/call`` round trip, ours versus the MCP SDK's own ``MCPServer``.

The same function, ``add(a: int, b: int) -> int`` with a docstring (and an async
variant ``aadd``), is served by:

* ours: a tool file in a folder loaded by ``ToolLoader`` (a real dynamic tool, as
  users get it), served by ``MCPToolServer``;
* the MCP SDK's ``MCPServer`` (mcp 2.x) with the function registered by ``@server.tool()``;
* FastMCP (``FastMCP`` with ``@server.tool``), when installed;
* the floor: the SDK's bare low-level ``Server`` whose ``tools/call`` handler calls
  the function with the request's arguments (the sync one on a worker thread, as
  both servers run it) and returns its text; no validation, no schemas, nothing
  else. Every server built on the SDK's ``Server`` pays at least this (the client,
  the transport, the SDK's request pipeline), so it shows how much of a ratio
  target is left for a server's own work.

Each round trip is ``await client.call_tool("add", {"a": 2, "b": 3})`` through the
SDKs' in-process clients over the in-memory transport (``mode="legacy"``: JSON-RPC
over memory streams, after the initialize handshake), so it includes the client's
request building and result parsing. Every result is checked to be ``"5"``: a
benchmark of an error path would lie.
"""

from __future__ import annotations

import asyncio
import textwrap
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .common import (
    BenchResult,
    Options,
    Table,
    Target,
    available,
    fmt_us,
    scratch_dir,
    summarize,
)

NAME = "mcp_call"
RATIO_LIMIT = 1.0
FLOOR_MARGIN_S = 60e-6
"""The round trip may exceed the bare SDK floor by this much: a server's own work (validation,
result conversion, the digest)."""
ARGS = {"a": 2, "b": 3}
EXPECTED = "5"
WARMUP = 20

SOURCE = textwrap.dedent(
    '''
    from loader import tool


    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return a + b


    @tool
    async def aadd(a: int, b: int) -> int:
        """Add two integers, asynchronously.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return a + b
    '''
)


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


async def aadd(a: int, b: int) -> int:
    """Add two integers, asynchronously.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def _check(result: Any, system: str, name: str) -> None:
    """Fail loudly unless a call returned the right answer (not an error result)."""
    content = getattr(result, "content", None)
    if content is None and isinstance(result, list):  # FastMCP's call_tool_mcp / older shapes
        content = result
    text = getattr(content[0], "text", None) if content else None
    failed = result.is_error if hasattr(result, "is_error") else getattr(result, "isError", False)
    if failed or text != EXPECTED:
        raise AssertionError(f"{system} {name}(2, 3) returned {result!r}, expected text {EXPECTED!r}")


async def _batches(call: Callable[[], Awaitable[Any]], batches: int, size: int) -> list[float]:
    """Seconds per round trip, one figure per batch of ``size`` sequential calls."""
    figures = []
    for _ in range(batches):
        started = time.perf_counter()
        for _ in range(size):
            await call()
        figures.append((time.perf_counter() - started) / size)
    return figures


async def _calibrate(call: Callable[[], Awaitable[Any]], batch_seconds: float) -> int:
    size = 4
    while True:
        started = time.perf_counter()
        for _ in range(size):
            await call()
        elapsed = time.perf_counter() - started
        if elapsed >= batch_seconds / 4 or size >= 1 << 16:
            return max(1, int(size * batch_seconds / max(elapsed, 1e-9)))
        size *= 2


async def _measure(client: Any, system: str, name: str, batches: int, size: int) -> dict[str, Any]:
    async def call() -> Any:
        return await client.call_tool(name, ARGS)

    for _ in range(WARMUP):
        _check(await call(), system, name)
    figures = await _batches(call, batches, size)
    _check(await call(), system, name)  # still right after the timed calls
    return {"seconds_per_call": figures, "summary_s": summarize(figures), "batch_size": size}


async def _ours(base: Any, batches: int, size: int) -> dict[str, Any]:
    from mcp import Client

    from loader.mcp import MCPToolServer
    from loader.reload.loader import LoaderConfig, ToolLoader

    folder = base / "tools"
    folder.mkdir(parents=True)
    (folder / "adder.py").write_text(SOURCE)
    loader = ToolLoader([folder], config=LoaderConfig())
    loader.scan()
    loader.start()
    try:
        names = set(loader.registry.names())
        assert {"add", "aadd"} <= names, f"ours loaded {sorted(names)}"
        server = MCPToolServer(loader.registry)
        out: dict[str, Any] = {}
        async with Client(server.server, mode="legacy") as client:
            for name in ("add", "aadd"):
                out[name] = await _measure(client, "ours", name, batches, size)
        return out
    finally:
        loader.close()


async def _sdk(batches: int, size: int) -> dict[str, Any]:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")
    server.tool()(add)
    server.tool()(aadd)
    out: dict[str, Any] = {}
    async with Client(server, mode="legacy") as client:
        for name in ("add", "aadd"):
            out[name] = await _measure(client, "MCPServer", name, batches, size)
    return out


def _floor_server() -> Any:
    """The SDK's low-level ``Server`` answering ``tools/call`` with the function's text and nothing else."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        tools = [types.Tool(name=name, input_schema={"type": "object"}) for name in ("add", "aadd")]
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: Any) -> dict[str, Any]:
        arguments = params.arguments or {}
        if params.name == "add":
            value = await anyio.to_thread.run_sync(lambda: add(**arguments))
        else:
            value = await aadd(**arguments)
        return {"content": [{"type": "text", "text": str(value)}], "isError": False}

    server = Server("floor", on_list_tools=list_tools)
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return server


async def _floor(batches: int, size: int) -> dict[str, Any]:
    from mcp import Client

    out: dict[str, Any] = {}
    async with Client(_floor_server(), mode="legacy") as client:
        for name in ("add", "aadd"):
            out[name] = await _measure(client, "floor", name, batches, size)
    return out


async def _fastmcp(batches: int, size: int) -> dict[str, Any]:
    from fastmcp import Client, FastMCP

    server = FastMCP("bench")
    server.tool(add)
    server.tool(aadd)
    out: dict[str, Any] = {}
    async with Client(server) as client:
        for name in ("add", "aadd"):
            out[name] = await _measure(client, "FastMCP", name, batches, size)
    return out


async def _size(batch_seconds: float) -> int:
    """One batch size for every system, calibrated on the SDK's server (so all time the same N calls)."""
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("calibrate")
    server.tool()(add)
    async with Client(server, mode="legacy") as client:

        async def call() -> Any:
            return await client.call_tool("add", ARGS)

        for _ in range(WARMUP):
            _check(await call(), "MCPServer", "add")
        return await _calibrate(call, batch_seconds)


def run(options: Options) -> BenchResult:
    """Time sequential ``tools/call`` round trips of the same function on each server, in one run."""
    batches = options.count(7, 3)
    batch_seconds = 0.02 if options.quick else 0.4
    size = asyncio.run(_size(batch_seconds))
    raw: dict[str, Any] = {}
    with scratch_dir("mcp-call") as base:
        # Alternate the systems' order across two rounds so drift in the machine hits all alike.
        rounds: list[dict[str, Any]] = []
        for order in (("ours", "sdk", "floor"), ("floor", "sdk", "ours")):
            cell: dict[str, Any] = {}
            for key in order:
                if key == "ours":
                    cell[key] = asyncio.run(_ours(base / f"r{len(rounds)}", batches, size))
                elif key == "sdk":
                    cell[key] = asyncio.run(_sdk(batches, size))
                else:
                    cell[key] = asyncio.run(_floor(batches, size))
            rounds.append(cell)
        for key in ("ours", "sdk", "floor"):
            raw[key] = {}
            for name in ("add", "aadd"):
                figures = [f for cell in rounds for f in cell[key][name]["seconds_per_call"]]
                raw[key][name] = {
                    "seconds_per_call": figures,
                    "summary_s": summarize(figures),
                    "batch_size": size,
                }
    if available("fastmcp"):
        try:
            raw["fastmcp"] = asyncio.run(_fastmcp(batches, size))
        except AssertionError:  # a wrong answer is a failure, not a skip
            raise
        except Exception as exc:  # a FastMCP API change: report, don't fail
            raw["fastmcp"] = {"error": f"{type(exc).__name__}: {exc}"}
    else:
        raw["fastmcp"] = None
    result = BenchResult(NAME, raw={"batches": 2 * batches, "batch_size": size, "results": raw})

    fast_note = (
        "FastMCP: FastMCP(...) with @server.tool, its own in-process Client, one round of batches."
        if raw["fastmcp"] is not None and "error" not in raw["fastmcp"]
        else "FastMCP: skipped ("
        + ("not installed" if raw["fastmcp"] is None else raw["fastmcp"]["error"])
        + ")."
    )
    table = Table(
        "MCP tools/call round trip, same function",
        ["system / tool", "p50 µs", "min µs", "p90 µs", "spread µs (min-max)", "ours / MCPServer"],
        note=(
            "One figure = await client.call_tool('add', {'a': 2, 'b': 3}) -> server -> result parsed by "
            "the client, over the MCP SDK's in-memory transport (Client(server, mode='legacy'): "
            "JSON-RPC over memory streams, after initialize), sequential calls, time per call averaged "
            "over a batch of "
            f"{size} calls; {2 * batches} batches per row (two rounds, ours, MCPServer and the floor in "
            f"alternating order), after {WARMUP} warm-up calls each; every result checked to be '5'. "
            "ours = add in a tool file loaded by ToolLoader, served by MCPToolServer; MCPServer = the SDK's "
            "mcp.server.mcpserver.MCPServer with @server.tool(); aadd = the same as async def; floor = the "
            "SDK's bare low-level Server calling the function and returning its text (sync on a worker "
            "thread), no validation or schemas: what any server built on the SDK pays. " + fast_note
        ),
    )
    labels = {"ours": "ours", "sdk": "MCPServer", "floor": "floor (bare SDK Server)", "fastmcp": "FastMCP"}
    for name in ("add", "aadd"):
        sdk_p50 = raw["sdk"][name]["summary_s"]["p50"]
        for key in ("ours", "sdk", "floor", "fastmcp"):
            entry = (raw.get(key) or {}).get(name)
            if entry is None:
                continue
            s = entry["summary_s"]
            ratio = f"{s['p50'] / sdk_p50:.2f}x" if key != "sdk" else ""
            table.rows.append(
                [
                    f"{labels[key]} / {name}",
                    fmt_us(s["p50"]),
                    fmt_us(s["min"]),
                    fmt_us(s["p90"]),
                    f"{fmt_us(s['min'])}-{fmt_us(s['max'])}",
                    ratio,
                ]
            )
    result.tables.append(table)

    for name, label in (("add", "sync"), ("aadd", "async")):
        ours_p50 = raw["ours"][name]["summary_s"]["p50"]
        sdk_p50 = raw["sdk"][name]["summary_s"]["p50"]
        ratio = ours_p50 / sdk_p50
        floor_p50 = raw["floor"][name]["summary_s"]["p50"]
        result.targets.append(
            Target(
                f"tools/call round trip <= {RATIO_LIMIT}x MCPServer (same run, {label} {name})",
                f"{fmt_us(ours_p50)} vs {fmt_us(sdk_p50)} µs p50 ({ratio:.2f}x)",
                ratio <= RATIO_LIMIT,
            )
        )
        result.targets.append(
            Target(
                f"tools/call round trip within {FLOOR_MARGIN_S * 1e6:.0f} µs of the bare SDK floor "
                f"(same run, {label} {name})",
                f"{fmt_us(ours_p50)} vs {fmt_us(floor_p50)} µs p50 (+{fmt_us(ours_p50 - floor_p50)} µs)",
                ours_p50 - floor_p50 <= FLOOR_MARGIN_S,
            )
        )
    return result
