"""Benchmark 9: what OpenTelemetry costs a tool call, with and without it.

Each mode runs in a fresh interpreter:

* ``no API``: the ``opentelemetry`` package cannot be imported (as without the ``otel`` extra);
* ``API, no provider``: the API is imported (the MCP SDK always imports it), nothing configured;
* ``SDK, no exporter``: the SDK's tracer and meter providers set, with no span processor or
  metric reader (what recording itself costs, whatever the exporter);

and times, per call: the tracing hook alone (``tracing.start_call``, what the
runner asks before every call), ``ToolRegistry.invoke`` of a sync tool (run
inline) and ``ToolRegistry.ainvoke`` of an async tool (awaited on one loop).
Figures are medians over batches of calibrated size.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from .common import BenchResult, Options, Table, Target, aper_call, child_main, fmt_us, per_call, run_child

NAME = "tracing_overhead"
HOOK_LIMIT = 1e-6
MODES = ("no API", "API, no provider", "SDK, no exporter")


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


def _prepare(mode: str) -> None:
    if mode == "no API":
        sys.modules["opentelemetry"] = None  # type: ignore[assignment]  # any import of it now fails
        return
    from opentelemetry import metrics, trace

    if mode == "SDK, no exporter":
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider

        trace.set_tracer_provider(TracerProvider())
        metrics.set_meter_provider(MeterProvider())


def measure(payload: dict[str, Any]) -> dict[str, Any]:
    """In the child: time the hook and two registry calls in one mode."""
    _prepare(payload["mode"])
    from loader.calls import tracing
    from loader.registry.tool_registry import ToolRegistry
    from loader.tools.function_tool import FunctionTool

    registry = ToolRegistry()
    tool = FunctionTool(add)
    registry.register(tool)
    registry.register(FunctionTool(aadd))
    batches, seconds = int(payload["batches"]), float(payload["seconds"])
    ints = {"a": 1, "b": 2}

    def hook() -> None:
        trace = tracing.start_call(tool, "bench", 1)
        if trace is not None:
            trace.end({"status": "success", "content": []})

    figures = {
        "hook": per_call(hook, batches, seconds),
        "invoke": per_call(lambda: registry.invoke("add", ints), batches, seconds),
    }

    async def awaited() -> list[float]:
        return await aper_call(lambda: registry.ainvoke("aadd", ints), batches, seconds)

    figures["ainvoke"] = asyncio.run(awaited())
    return {"per_call_s": figures, "api_imported": "opentelemetry.trace" in sys.modules}


def run(options: Options) -> BenchResult:
    """One child per mode; a table of medians and the hook's target."""
    from .common import summarize

    payload = {"batches": options.count(15, 3), "seconds": 0.005 if options.quick else 0.02}
    children = {mode: run_child(NAME, {**payload, "mode": mode}) for mode in MODES}
    medians = {
        mode: {key: summarize(values)["p50"] for key, values in child["per_call_s"].items()}
        for mode, child in children.items()
    }
    result = BenchResult(NAME, raw={**payload, "children": children, "medians_s": medians})
    table = Table(
        "9. tracing overhead (µs per call, median)",
        ["mode", "tracing hook", "ToolRegistry.invoke (sync)", "calls/s", "ToolRegistry.ainvoke (async)"],
        note=(
            f"median over {payload['batches']} batches of calibrated size (~{payload['seconds'] * 1000:g} ms "
            "each), each mode in a fresh interpreter; the hook is what every call asks before running."
        ),
    )
    for mode in MODES:
        figures = medians[mode]
        invoke = figures["invoke"]
        rate = "-" if not invoke else f"{1 / float(invoke):,.0f}"
        table.rows.append([mode, fmt_us(figures["hook"]), fmt_us(invoke), rate, fmt_us(figures["ainvoke"])])
    result.tables.append(table)
    for mode in MODES[:2]:
        hook = float(medians[mode]["hook"] or 0)
        result.targets.append(
            Target(f"tracing hook <= 1 µs per call ({mode})", f"{fmt_us(hook)} µs", hook <= HOOK_LIMIT)
        )
    return result


if __name__ == "__main__":
    child_main(measure)
