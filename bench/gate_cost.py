"""Benchmark 8: what examples as a gate add to save → callable.

The same tool, with five fast examples, is saved ``reps`` times into a loader
with the gate off and into one with the gate on (``LoaderConfig(gate=True)``);
each save is timed from the start of the write until a call returns the new
text, as in benchmark 1 (in-place saves, polling with ``time.sleep(0)``). The
target is on the difference of the two medians.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .common import (
    BenchResult,
    Options,
    OursSystem,
    Table,
    Target,
    fmt_ms,
    save_in_place,
    scratch_dir,
    summarize,
    time_until,
)

NAME = "gate_cost"
EXAMPLES = 5
TIMEOUT = 0.75
GAP = 0.1
"""Seconds of quiet after each settled save, as in benchmark 1."""
LIMIT = 0.005


def _source(text: str) -> str:
    examples = ", ".join(
        f'{{"description": "example {i}", "params": {{"n": {i}}}, "expected_output": {text!r}}}'
        for i in range(EXAMPLES)
    )
    return (
        "from loader import tool\n\n\n"
        f"@tool(examples=[{examples}])\n"
        "def saved(n: int = 0) -> str:\n"
        '    """Return the version text."""\n'
        f"    return {text!r}\n"
    )


def _measure(gate: bool, reps: int) -> dict[str, Any]:
    from loader.reload.loader import LoaderConfig

    system = OursSystem(replace(LoaderConfig(), gate=gate))
    latencies: list[float] = []
    never = 0
    with scratch_dir(f"gate-{'on' if gate else 'off'}") as base:
        folder = base / "tools"
        folder.mkdir()
        path: Path = folder / "saved.py"
        path.write_text(_source("initial"))
        system.start(folder)
        try:
            system.settle(GAP)
            if system.call("saved") != "initial":
                raise RuntimeError("the initial tool is not callable")
            for index in range(reps):
                expected = f"v{index:04d}"
                start = time.perf_counter()
                save_in_place(path, _source(expected))
                took = time_until(
                    lambda e=expected: system.call("saved") == e, start, TIMEOUT, yield_gil=True
                )  # type: ignore[misc]
                system.settle(GAP)
                if took is None:
                    never += 1
                else:
                    latencies.append(took)
        finally:
            system.close()
    return {"latency_s": latencies, "never": never, "summary_s": summarize(latencies)}


def run(options: Options) -> BenchResult:
    """Save → callable with the gate off and on, for a tool with five fast examples."""
    reps = options.count(100, 5)
    result = BenchResult(NAME)
    data = {"off": _measure(False, reps), "on": _measure(True, reps)}
    result.raw = {"reps": reps, "examples": EXAMPLES, "systems": data}
    table = Table(
        "8. examples as a gate: save to callable (ms)",
        ["gate", "p50", "p90", "p99", "never"],
        note=(
            f"{reps} in-place saves of one tool with {EXAMPLES} examples, gate off and on; latency from the "
            f"start of the write until a call returns the new text (never = not within {TIMEOUT:g} s)."
        ),
    )
    for key in ("off", "on"):
        summary = data[key]["summary_s"]
        table.rows.append(
            [
                key,
                fmt_ms(summary["p50"]),
                fmt_ms(summary["p90"]),
                fmt_ms(summary["p99"]),
                str(data[key]["never"]),
            ]
        )
    result.tables.append(table)
    off, on = data["off"]["summary_s"]["p50"], data["on"]["summary_s"]["p50"]
    if off is None or on is None:
        result.targets.append(Target("gate adds <= 5 ms p50", "not measured", None))
    else:
        added = on - off
        complete = data["on"]["never"] == 0
        result.targets.append(
            Target("gate adds <= 5 ms p50", f"{fmt_ms(added)} ms", complete and added <= LIMIT)
        )
    return result
