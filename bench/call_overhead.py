"""Benchmark 6: what a tool call costs over calling the plain function.

The same functions are wrapped by each system: ``add(a: int, b: int)`` (sync and
async) and ``total(order: Order)`` with a nested pydantic model. Calls go through
ours (``FunctionTool.invoke``, ``ToolRegistry.invoke``, ``stream`` drained),
Strands (``DecoratedFunctionTool.stream`` drained) and FastMCP (``FunctionTool.run``).
Each figure is the median over batches of the per-call time (batch sizes
calibrated to about 20 ms); the overhead subtracts the plain function's figure
(``add(1, 2)``, ``await aadd(1, 2)`` or ``total(order)`` with a ready model).

Rows compare like with like: "inline" rows run the sync tool on the caller's
thread (only ours offers that: both peers always hand a sync tool to a worker
thread), "hop" rows run it on a worker thread so the caller's event loop is not
blocked (ours: ``await asyncio.to_thread(tool.invoke, ...)``; Strands'
``stream`` and FastMCP's ``run`` do the same inside).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from .common import (
    BenchResult,
    Options,
    Table,
    Target,
    aper_call_alternating,
    available,
    fmt_us,
    per_call,
    summarize,
)

NAME = "call_overhead"
INVOKE_LIMIT = 10e-6
INLINE_LIMIT = 1.5e-6


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


class Item(BaseModel):
    """One order line."""

    sku: str
    qty: int


class Order(BaseModel):
    """An order with nested lines."""

    id: int
    items: list[Item]
    note: str | None = None


def total(order: Order) -> int:
    """The number of items in an order.

    Args:
        order: The order to count.
    """
    return sum(item.qty for item in order.items)


INTS = {"a": 1, "b": 2}
ORDER = {"order": {"id": 7, "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 3}], "note": "gift"}}
ORDER_MODEL = Order.model_validate(ORDER["order"])


def _drain(tool: Any, name: str, data: dict[str, Any]) -> Callable[[], Any]:
    tool_use = {"toolUseId": "bench", "name": name, "input": data}

    async def drain() -> None:
        async for _event in tool.stream(tool_use, {}):
            pass

    return drain


def _rows() -> tuple[list[tuple[str, str, str, Callable[[], Any]]], list[str]]:
    """(group, label, baseline label, callable) per row; callables returning awaitables run on a loop."""
    from loader import tool as ours_tool
    from loader.registry.tool_registry import ToolRegistry

    ours_add, ours_aadd, ours_total = ours_tool(add), ours_tool(aadd), ours_tool(total)
    registry = ToolRegistry()
    for item in (ours_add, ours_aadd, ours_total):
        registry.register(item)
    assert ours_add.invoke(INTS)["status"] == "success"
    assert ours_total.invoke(ORDER)["status"] == "success", ours_total.invoke(ORDER)

    async def plain_async() -> int:
        return await aadd(1, 2)

    async def plain_hop() -> int:
        return await asyncio.to_thread(add, 1, 2)

    async def ours_hop() -> Any:
        return await asyncio.to_thread(ours_add.invoke, INTS)

    async def ours_registry_hop() -> Any:
        return await asyncio.to_thread(registry.invoke, "add", INTS)

    rows: list[tuple[str, str, str, Callable[[], Any]]] = [
        ("2 ints", "plain add(1, 2)", "", lambda: add(1, 2)),
        ("2 ints", "plain await aadd(1, 2)", "", plain_async),
        ("2 ints", "ours FunctionTool.invoke", "plain add(1, 2)", lambda: ours_add.invoke(INTS)),
        ("2 ints", "ours ToolRegistry.invoke", "plain add(1, 2)", lambda: registry.invoke("add", INTS)),
        ("2 ints", "ours stream, sync tool", "plain add(1, 2)", _drain(ours_add, "add", INTS)),
        ("2 ints", "ours stream, async tool", "plain await aadd(1, 2)", _drain(ours_aadd, "aadd", INTS)),
        ("2 ints", "hop: plain to_thread(add)", "plain add(1, 2)", plain_hop),
        ("2 ints", "hop: ours to_thread(FunctionTool.invoke)", "plain add(1, 2)", ours_hop),
        ("2 ints", "hop: ours to_thread(ToolRegistry.invoke)", "plain add(1, 2)", ours_registry_hop),
        ("nested model", "plain total(order)", "", lambda: total(ORDER_MODEL)),
        ("nested model", "ours FunctionTool.invoke", "plain total(order)", lambda: ours_total.invoke(ORDER)),
        (
            "nested model",
            "ours ToolRegistry.invoke",
            "plain total(order)",
            lambda: registry.invoke("total", ORDER),
        ),
        ("nested model", "ours stream, sync tool", "plain total(order)", _drain(ours_total, "total", ORDER)),
    ]
    missing = []
    if available("strands"):
        from strands import tool as strands_tool

        s_add, s_aadd, s_total = strands_tool(add), strands_tool(aadd), strands_tool(total)
        rows += [
            ("2 ints", "hop: Strands stream, sync tool", "plain add(1, 2)", _drain(s_add, "add", INTS)),
            ("2 ints", "Strands stream, async tool", "plain await aadd(1, 2)", _drain(s_aadd, "aadd", INTS)),
            (
                "nested model",
                "hop: Strands stream, sync tool",
                "plain total(order)",
                _drain(s_total, "total", ORDER),
            ),
        ]
    else:
        missing.append("Strands")
    if available("fastmcp"):
        from fastmcp.tools.function_tool import FunctionTool as FastTool

        f_add, f_aadd, f_total = (FastTool.from_function(f) for f in (add, aadd, total))
        rows += [
            ("2 ints", "hop: FastMCP run, sync tool", "plain add(1, 2)", lambda: f_add.run(INTS)),
            ("2 ints", "FastMCP run, async tool", "plain await aadd(1, 2)", lambda: f_aadd.run(INTS)),
            ("nested model", "hop: FastMCP run, sync tool", "plain total(order)", lambda: f_total.run(ORDER)),
        ]
    else:
        missing.append("FastMCP")
    return rows, missing


def run(options: Options) -> BenchResult:
    """Time every row, sync rows directly and async rows on one event loop."""
    batches = options.count(15, 3)
    seconds = 0.005 if options.quick else 0.02
    rows, missing = _rows()
    figures: dict[str, list[float]] = {}
    awaited: list[tuple[str, Callable[[], Any]]] = []
    for group, label, _base, function in rows:
        key = f"{group}|{label}"
        # FastMCP's bound ``run`` returns a coroutine without being a coroutine function.
        if asyncio.iscoroutinefunction(function) or "FastMCP" in label:
            awaited.append((key, function))
        else:
            figures[key] = per_call(function, batches, seconds)

    async def timed() -> None:  # in turn: the thread hop target compares two of these rows
        figures.update(await aper_call_alternating(dict(awaited), batches, seconds))

    asyncio.run(timed())

    medians = {key: summarize(values)["p50"] for key, values in figures.items()}
    result = BenchResult(NAME, raw={"batches": batches, "batch_seconds": seconds, "per_call_s": figures})
    table = Table(
        "6. call overhead (µs per call)",
        ["input / call", "median", "min", "overhead"],
        note=(
            f"median and min over {batches} batches of calibrated size (~{seconds * 1000:g} ms each); "
            "overhead = median minus the plain function's median (sync or async, same input). "
            "'hop' rows run the sync tool on a worker thread (the peers always do); the others inline."
            + (f" Not installed: {', '.join(missing)}." if missing else "")
        ),
    )
    overheads: dict[str, float] = {}
    for group, label, base, _function in rows:
        key = f"{group}|{label}"
        stats = summarize(figures[key])
        overhead = None
        if base:
            overhead = float(stats["p50"] or 0) - float(medians[f"{group}|{base}"] or 0)
            overheads[key] = overhead
        cells = [fmt_us(stats["p50"]), fmt_us(stats["min"]), fmt_us(overhead)]
        table.rows.append([f"{group} / {label}", *cells])
    result.tables.append(table)
    result.raw["overhead_s"] = overheads
    inline = overheads["2 ints|ours FunctionTool.invoke"]
    result.targets.append(
        Target(
            "inline sync call: FunctionTool.invoke <= 1.5 µs over the plain function (2 ints)",
            f"{fmt_us(inline)} µs",
            inline <= INLINE_LIMIT,
        )
    )
    strands_hop = medians.get("2 ints|hop: Strands stream, sync tool")
    ours_hop_s = medians["2 ints|hop: ours to_thread(FunctionTool.invoke)"]
    result.targets.append(
        Target(
            "sync call without blocking the loop (thread hop) <= Strands stream (same run)",
            "-" if strands_hop is None else f"{fmt_us(ours_hop_s)} vs {fmt_us(strands_hop)} µs",
            None if strands_hop is None or ours_hop_s is None else ours_hop_s <= strands_hop,
        )
    )
    for group in ("2 ints", "nested model"):
        for label in ("ours FunctionTool.invoke", "ours ToolRegistry.invoke"):
            overhead = overheads[f"{group}|{label}"]
            result.targets.append(
                Target(
                    f"{label} overhead <= 10 µs ({group})",
                    f"{fmt_us(overhead)} µs",
                    overhead <= INVOKE_LIMIT,
                )
            )
    return result
