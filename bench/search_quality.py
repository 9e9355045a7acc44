"""Benchmark 16: tool search: ranking quality, search latency over MCP, save to findable.

* recall@5 on two generated catalogues, each with 200 queries after one
  expected tool: the "hard" set (``bench/search_catalogue.py``, ~1,000 tool
  files, terse paraphrased queries; the ranking was tuned on this one) and the
  held-out set (``bench/search_heldout.py``, ~750 tool files of other services,
  queries worded as a user asks an agent; not tuned on), each for ours
  (``ToolLoader.search_tools``), plain BM25 (lower-cased words of the same text
  FastMCP indexes, no stemming, no field weights), and FastMCP's
  ``BM25SearchTransform`` through its in-process client;
* ``search_tools`` over MCP (``serve --discovery search``, the SDK's in-process
  client) at 10,000 tools: p50 and p99;
* save to findable: a new tool file written into the watched catalogue folder
  until ``search_tools`` returns it.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from . import search_catalogue, search_heldout
from .common import BenchResult, Options, Table, Target, available, fmt_ms, scratch_dir, summarize
from .search_catalogue import Query, catalogue, queries

NAME = "search_quality"
RECALL_TARGET = 0.80
MARGIN_TARGET = 0.08
P99_TARGET = 0.015
FINDABLE_TARGET = 0.300
ZEPPELIN = (
    "from loader import tool\n\n"
    "@tool\n"
    "def {name}(day: str) -> str:\n"
    '    """Book a zeppelin."""\n'
    "    return day\n"
)


def _recall(found: list[list[str]], wanted: list[Query]) -> float:
    return sum(q.expected in hits[:5] for q, hits in zip(wanted, found, strict=True)) / max(len(wanted), 1)


def _plain_bm25(loader: Any, wanted: list[Query]) -> list[list[str]]:
    """Okapi BM25 (k1 1.2, b 0.75) over ``[a-z0-9]+`` words of name, description and parameters."""
    docs: dict[str, Counter[str]] = {}
    for tool in loader.registry.snapshot().tools():
        spec = tool.tool_spec
        parts = [tool.tool_name, spec.get("description", "")]
        for name, prop in spec["inputSchema"]["json"].get("properties", {}).items():
            parts += [name, prop.get("description", "")]
        docs[tool.tool_name] = Counter(re.findall(r"[a-z0-9]+", " ".join(parts).lower()))
    count, average = len(docs), sum(sum(c.values()) for c in docs.values()) / max(len(docs), 1)
    df = Counter(term for c in docs.values() for term in c)
    found = []
    for query in wanted:
        scores: Counter[str] = Counter()
        for term in set(re.findall(r"[a-z0-9]+", query.text.lower())):
            idf = math.log(1 + (count - df[term] + 0.5) / (df[term] + 0.5))
            for name, words in docs.items():
                tf = words[term]
                if tf:
                    length = sum(words.values())
                    scores[name] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        found.append([name for name, _ in scores.most_common(5)])
    return found


def _fastmcp(loader: Any, wanted: list[Query]) -> list[list[str]]:
    """FastMCP's BM25 search transform on the same functions, through its own in-process client."""
    from fastmcp import Client, FastMCP
    from fastmcp.server.transforms.search import BM25SearchTransform

    server = FastMCP("bench")
    for tool in loader.registry.snapshot().tools():
        server.tool(tool.original_function)
    server.add_transform(BM25SearchTransform(max_results=5))

    async def run() -> list[list[str]]:
        async with Client(server) as client:
            out = []
            for query in wanted:
                result = await client.call_tool("search_tools", {"query": query.text})
                out.append([entry["name"] for entry in result.structured_content["result"]])
            return out

    return asyncio.run(run())


def _quality(folder: Path, size: int, query_count: int, source: Any = search_catalogue) -> dict[str, Any]:
    from loader import ToolLoader

    tools = source.catalogue(size)
    wanted = source.queries(tools, query_count)
    source.write_catalogue(folder, tools)
    with ToolLoader([folder]) as loader:
        ours = [[hit.name for hit in loader.search_tools(q.text, 5)] for q in wanted]
        data: dict[str, Any] = {
            "tools": len(loader.registry),
            "queries": len(wanted),
            "ours": _recall(ours, wanted),
            "plain_bm25": _recall(_plain_bm25(loader, wanted), wanted),
            "fastmcp": _recall(_fastmcp(loader, wanted), wanted) if available("fastmcp") else None,
            "misses": [q.text for q, hits in zip(wanted, ours, strict=True) if q.expected not in hits][:10],
        }
    return data


def _latency_over_mcp(count: int, reps: int) -> dict[str, Any]:
    """``search_tools`` calls through the SDK's in-process client to a search-mode server."""
    from mcp import Client

    from loader import FunctionTool, ToolRegistry
    from loader.mcp import MCPToolServer
    from loader.mcp.discovery import Discovery

    base = catalogue()
    registry = ToolRegistry()
    with registry.batch() as batch:
        for n in range(count):
            item = base[n % len(base)]
            namespace: dict[str, Any] = {}
            exec(compile(item.source, item.name, "exec"), namespace)
            batch.register(FunctionTool(namespace[item.name].original_function, name=f"{item.name}_{n}"))
    server = MCPToolServer(registry, discovery=Discovery.SEARCH)
    texts = [q.text for q in queries(base, 200)]

    async def run() -> list[float]:
        async with Client(server.server) as client:
            await client.call_tool("search_tools", {"query": texts[0]})
            times = []
            for _ in range(reps):
                for text in texts:
                    started = time.perf_counter()
                    result = await client.call_tool("search_tools", {"query": text})
                    times.append(time.perf_counter() - started)
                    assert not result.is_error, result
            listing = await client.list_tools()
            times.append(len(json.dumps(listing.model_dump(mode="json", by_alias=True, exclude_none=True))))
            return times

    import anyio

    figures = anyio.run(run)
    return {"tools": count, "listing_chars": int(figures.pop()), "search_s": summarize(figures)}


def _findable(folder: Path, reps: int) -> dict[str, Any]:
    """Write a new tool file into the watched folder; time until ``search_tools`` returns it."""
    from loader import ToolLoader

    times, never = [], 0
    with ToolLoader([folder]) as loader:
        for n in range(reps):
            name = f"zeppelin_booking_{n}"
            source = ZEPPELIN.format(name=name)
            started = time.perf_counter()
            (folder / f"{name}.py").write_text(source)
            deadline = started + 10
            while all(hit.name != name for hit in loader.search_tools(f"zeppelin booking {n}", 5)):
                if time.perf_counter() > deadline:
                    never += 1
                    break
                time.sleep(0.001)
            else:
                times.append(time.perf_counter() - started)
    return {"save_s": summarize(times), "never": never}


def run(options: Options) -> BenchResult:
    """Quality at ~1,000 tools, latency at 10,000 (quick: 100 tools, 40 queries, 500 tools)."""
    size, query_count = (100, 40) if options.quick else (1000, 200)
    count, reps = (500, 1) if options.quick else (10_000, options.count(3, 1))
    result = BenchResult(NAME)
    with scratch_dir("search") as base:
        quality = _quality(base / "catalogue", size, query_count)
        heldout = _quality(base / "heldout", size, query_count, search_heldout)
        latency = _latency_over_mcp(count, reps)
        findable = _findable(base / "catalogue", options.count(20, 3))
    result.raw = {"quality": quality, "heldout": heldout, "latency": latency, "findable": findable}
    fast, held_fast = quality["fastmcp"], heldout["fastmcp"]
    table = Table(
        "16. tool search: recall@5, latency, save to findable",
        ["figure", "ours", "plain BM25", "FastMCP BM25 transform"],
        note=(
            f"hard set (tuned on): {quality['tools']} generated tools, {quality['queries']} paraphrased "
            f"queries; held-out set (not tuned on): {heldout['tools']} tools, {heldout['queries']} "
            "requests worded as a user asks an agent; one expected tool each; "
            f"latency: search_tools over MCP at {latency['tools']} tools, {reps} x 200 queries; "
            "findable: a new file saved into the watched catalogue."
        ),
    )
    for label, figures in (("recall@5, hard set (tuned on)", quality), ("recall@5, held-out set", heldout)):
        table.rows.append(
            [
                label,
                f"{figures['ours']:.3f}",
                f"{figures['plain_bm25']:.3f}",
                "-" if figures["fastmcp"] is None else f"{figures['fastmcp']:.3f}",
            ]
        )
    search = latency["search_s"]
    table.rows.append(["search p50 / p99 (ms)", f"{fmt_ms(search['p50'])} / {fmt_ms(search['p99'])}", "", ""])
    table.rows.append(["search-mode listing (chars)", str(latency["listing_chars"]), "", ""])
    save = findable["save_s"]
    table.rows.append(
        ["save to findable p50 / max (ms)", f"{fmt_ms(save['p50'])} / {fmt_ms(save['max'])}", "", ""]
    )
    result.tables.append(table)
    result.targets += [
        Target("recall@5 >= 0.80 (hard set)", f"{quality['ours']:.3f}", quality["ours"] >= RECALL_TARGET),
        Target(
            "recall@5 >= FastMCP's + 0.08 (hard set)",
            "-" if fast is None else f"{quality['ours'] - fast:+.3f}",
            None if fast is None else quality["ours"] - fast >= MARGIN_TARGET,
        ),
        Target("recall@5 >= 0.80 (held-out set)", f"{heldout['ours']:.3f}", heldout["ours"] >= RECALL_TARGET),
        Target(
            "recall@5 >= FastMCP's + 0.08 (held-out set)",
            "-" if held_fast is None else f"{heldout['ours'] - held_fast:+.3f}",
            None if held_fast is None else heldout["ours"] - held_fast >= MARGIN_TARGET,
        ),
        Target(
            f"search over MCP at {latency['tools']} tools p99 <= 15 ms",
            fmt_ms(search["p99"]),
            search["p99"] is not None and search["p99"] <= P99_TARGET,
        ),
        Target(
            "search-mode listing <= 6,000 chars",
            str(latency["listing_chars"]),
            latency["listing_chars"] <= 6000,
        ),
        Target(
            "save to findable <= 300 ms (max)",
            fmt_ms(save["max"]) + f" ({findable['never']} never)",
            save["max"] is not None and save["max"] <= FINDABLE_TARGET and findable["never"] == 0,
        ),
    ]
    return result
