"""Benchmark 5: the cost of listing the tools (``tools/list``) versus the size of the folder.

* ours: ``registry.specs()``, and ``tools/list`` through our MCP server with the
  MCP SDK's in-process client (legacy handshake and the default ``auto`` mode);
* Strands: ``registry.get_all_tool_specs()`` (what its agent sends the model each turn);
* FastMCP: ``tools/list`` through its in-process client, with ``FileSystemProvider(reload=True)``,
  which re-imports the folder for each listing, and with ``reload=False`` (production mode).

Ours is timed twice: as a cache hit (the registry unchanged since the last
listing) and as the first listing after a reload (one file edited and applied
just before), since a listing cache that a reload empties would hide its cost in
the first figure. Module executions during the listings are counted for every system.
"""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Awaitable, Callable
from typing import Any

from .common import (
    BenchResult,
    FastMCPSystem,
    Options,
    OursSystem,
    StrandsSystem,
    Table,
    Target,
    aper_call,
    available,
    fmt_ms,
    fmt_us,
    install_probe,
    per_call,
    probe_count,
    scratch_dir,
    summarize,
    tool_source,
)

NAME = "listing"
REIMPORT_FACTOR = 100.0


def _folder_with(base: Any, key: str, count: int) -> Any:
    folder = base / key / "tools"
    folder.mkdir(parents=True)
    for i in range(count):
        source = tool_source(key, {f"l{i}": repr(i)}, probe=True)
        (folder / f"{key}_l{i}.py").write_text(source)
    return folder


async def _timed_calls(call: Callable[[], Awaitable[Any]], reps: int) -> list[float]:
    await call()
    figures = []
    for _ in range(reps):
        started = time.perf_counter()
        await call()
        figures.append(time.perf_counter() - started)
    return figures


def _entry(figures: list[float], count: int, executions: int, listings: int) -> dict[str, Any]:
    summary = summarize(figures)
    return {
        "seconds": figures,
        "summary_s": summary,
        "per_tool_s": None if summary["p50"] is None else summary["p50"] / count,
        "executions_per_listing": executions / max(listings, 1),
    }


def _ours(count: int, reps: int, base: Any) -> dict[str, Any]:
    system = OursSystem()
    system.start(_folder_with(base, "ours", count))
    out: dict[str, Any] = {}
    try:
        registry = system.loader.registry
        assert len(registry) == count, f"ours loaded {len(registry)} of {count} tools"
        before = system.executions()
        figures = per_call(registry.specs, reps)
        out["specs"] = _entry(figures, count, system.executions() - before, 1)
        try:
            from mcp import Client

            from loader.mcp import MCPToolServer
        except ImportError as exc:
            out["mcp_error"] = f"{type(exc).__name__}: {exc}"
            return out
        server = MCPToolServer(registry)
        handler = getattr(server, "_list_tools", None)
        if handler is not None:
            # The server's own share: the handler alone, without the SDK's transport and client.
            context = types.SimpleNamespace(protocol_version="2025-11-25")

            async def handle() -> list[float]:
                return await aper_call(lambda: handler(context, None), reps)

            before = system.executions()
            try:
                figures = asyncio.run(handle())
            except Exception as exc:  # a private handler whose shape changed: report, don't fail
                out["mcp_handler_error"] = f"{type(exc).__name__}: {exc}"
            else:
                out["mcp_handler"] = _entry(figures, count, system.executions() - before, 1)

        async def through_mcp(mode: str) -> list[float]:
            async with Client(server.server, mode=mode) as client:
                listed = await client.list_tools()
                assert len(listed.tools) == count, f"MCP listed {len(listed.tools)} of {count}"
                return await _timed_calls(client.list_tools, reps)

        for mode in ("legacy", "auto"):
            before = system.executions()
            figures = asyncio.run(through_mcp(mode))
            out[f"mcp_{mode}"] = _entry(figures, count, system.executions() - before, reps + 2)

        edited = next(iter(sorted(system.loader.paths[0].glob("ours_l*.py"))))

        async def after_reload() -> tuple[list[float], list[float]]:
            first: list[float] = []
            specs: list[float] = []
            async with Client(server.server, mode="legacy") as client:
                await client.list_tools()
                for index in range(reps):
                    edited.write_text(tool_source("ours", {"l0": repr(f"edit {index}")}, probe=True))
                    system.loader.wait_idle(10.0)  # the edit is applied: a new registry generation
                    started = time.perf_counter()
                    await client.list_tools()
                    first.append(time.perf_counter() - started)
                    edited.write_text(tool_source("ours", {"l0": repr(f"again {index}")}, probe=True))
                    system.loader.wait_idle(10.0)
                    started = time.perf_counter()
                    registry.specs()
                    specs.append(time.perf_counter() - started)
            return first, specs

        first, specs_after = asyncio.run(after_reload())
        out["mcp_after_reload"] = _entry(first, count, 0, reps)
        out["specs_after_reload"] = _entry(specs_after, count, 0, reps)
    finally:
        system.close()
    return out


def _strands(count: int, reps: int, base: Any) -> dict[str, Any]:
    system = StrandsSystem(watch=False)
    system.start(_folder_with(base, "strands", count))
    try:
        assert len(system.registry.registry) == count
        before = probe_count()
        figures = per_call(system.registry.get_all_tool_specs, reps)
        return {"specs": _entry(figures, count, probe_count() - before, 1)}
    finally:
        system.close()


def _fastmcp(count: int, reps: int, base: Any, *, reload: bool = True) -> dict[str, Any]:
    from fastmcp import Client, FastMCP

    system = FastMCPSystem(reload=reload)
    system.start(_folder_with(base / ("reload" if reload else "production"), "fastmcp", count))
    server = FastMCP("bench", providers=[system.provider])

    async def listings() -> list[float]:
        async with Client(server) as client:
            listed = await client.list_tools()
            assert len(listed) == count, f"FastMCP listed {len(listed)} of {count}"
            return await _timed_calls(client.list_tools, reps)

    try:
        before = probe_count()
        figures = asyncio.run(listings())
        return {
            "mcp" if reload else "mcp_production": _entry(figures, count, probe_count() - before, reps + 2)
        }
    finally:
        system.close()


ROWS = (
    ("ours", "specs", "ours registry.specs(), cache hit"),
    ("ours", "specs_after_reload", "ours registry.specs(), first after a reload"),
    ("ours", "mcp_handler", "ours MCP handler only (server side)"),
    ("ours", "mcp_legacy", "ours MCP tools/list (legacy), cache hit"),
    ("ours", "mcp_auto", "ours MCP tools/list (auto), cache hit"),
    ("ours", "mcp_after_reload", "ours MCP tools/list (legacy), first after a reload"),
    ("strands", "specs", "Strands get_all_tool_specs()"),
    ("fastmcp", "mcp", "FastMCP tools/list (reload=True)"),
    ("fastmcp_production", "mcp_production", "FastMCP tools/list (reload=False)"),
)


def run(options: Options) -> BenchResult:
    """List the tools of folders of growing size, many times each."""
    install_probe()
    sizes = [10, 50] if options.quick else [10, 100, 1000]
    reps = options.count(30, 3)
    raw: dict[str, Any] = {}
    for count in sizes:
        cell: dict[str, Any] = {}
        with scratch_dir(f"listing{count}") as base:
            cell["ours"] = _ours(count, reps, base)
            cell["strands"] = _strands(count, reps, base) if available("strands") else None
            fast_reps = reps if count < 1000 else min(reps, 3)
            cell["fastmcp"] = _fastmcp(count, fast_reps, base) if available("fastmcp") else None
            cell["fastmcp_production"] = (
                _fastmcp(count, reps, base, reload=False) if available("fastmcp") else None
            )
        raw[str(count)] = cell
    result = BenchResult(NAME, raw={"sizes": sizes, "reps": reps, "results": raw})

    table = Table(
        "5. listing cost versus folder size",
        [
            "files / listing",
            "p50 ms",
            "spread ms (min-max)",
            "per tool µs",
            "execs/listing",
            "FastMCP p50 / this",
        ],
        note=(
            f"{reps} listings per cell (FastMCP: 3 at 1,000 files); registry calls timed in calibrated "
            "batches (p50 of the batches' per-call time), MCP calls one by one through the SDKs' in-process "
            "clients (so they include the client's parsing of the result); 'handler only' is our server's "
            "tools/list handler without transport or client; 'first after a reload' = one listing "
            "right after an edit was applied (a new registry generation), one edit per sample."
        ),
    )
    for count in sizes:
        cell = raw[str(count)]
        fast = cell["fastmcp"]["mcp"]["summary_s"]["p50"] if cell["fastmcp"] else None
        for system, key, label in ROWS:
            entry = (cell[system] or {}).get(key)
            if cell[system] is None:
                table.rows.append([f"{count} / {label}", "not installed", "", "", "", ""])
                continue
            if entry is None:
                table.rows.append([f"{count} / {label}", "n/a", "", "", "", ""])
                continue
            p50 = entry["summary_s"]["p50"]
            ratio = "" if fast is None or system == "fastmcp" else f"{fast / p50:.0f}x"
            table.rows.append(
                [
                    f"{count} / {label}",
                    fmt_ms(p50, 3),
                    f"{fmt_ms(entry['summary_s']['min'], 3)}-{fmt_ms(entry['summary_s']['max'], 3)}",
                    fmt_us(entry["per_tool_s"]),
                    f"{entry['executions_per_listing']:.0f}",
                    ratio,
                ]
            )
    result.tables.append(table)

    smallest, largest = raw[str(sizes[0])]["ours"], raw[str(sizes[-1])]["ours"]
    key = "mcp_legacy" if "mcp_legacy" in largest else "specs"
    small, large = smallest[key], largest[key]
    executions = sum(raw[str(c)]["ours"][k]["executions_per_listing"] for c in sizes for k in ("specs", key))
    growth = large["per_tool_s"] / small["per_tool_s"]
    result.targets.append(
        Target(
            "tools/list does no loading and its per-tool cost does not grow with the folder",
            f"{executions:.0f} executions; per tool {fmt_us(small['per_tool_s'])} µs at {sizes[0]} files, "
            f"{fmt_us(large['per_tool_s'])} µs at {sizes[-1]} ({growth:.2f}x)",
            executions == 0 and growth <= 1.0,
        )
    )
    fast_cell = raw[str(sizes[-1])]["fastmcp"]
    if sizes[-1] < 1000 or fast_cell is None:
        result.targets.append(Target("at 1,000 files >= 100x cheaper than a re-importing listing", "-", None))
    else:
        factor = fast_cell["mcp"]["summary_s"]["p50"] / large["summary_s"]["p50"]
        result.targets.append(
            Target(
                "at 1,000 files >= 100x cheaper than a re-importing listing (FastMCP reload)",
                f"{fmt_ms(large['summary_s']['p50'], 3)} vs "
                f"{fmt_ms(fast_cell['mcp']['summary_s']['p50'])} ms ({factor:.0f}x)",
                factor >= REIMPORT_FACTOR,
            )
        )
    return result
