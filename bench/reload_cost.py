"""Benchmark 4: the cost of reloading one edited file, versus the size of the folder.

One file is edited in place in folders of 10, 100 and 1,000 tool files (and
10,000 and 20,000 for ours); we take the time from the start of the write until
a call returns the new text (p50 and p99; the poll yields the GIL, as in
benchmark 1), and for ours also the loader's own batch time (the scheduler's
``apply`` of the batch that held the edit), one pass of its safety-net
rescanner (off the apply thread) and, for comparison, a full stat walk of the
folder (what ``wait_idle`` does). Each edit changes the file's size, so the
peers' ``.pyc`` checks always see it (benchmark 2 covers same-size edits).
After each edit every system settles and idles ``PEER_GAP`` seconds, as in benchmark 1.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .common import (
    SYSTEM_LABELS,
    BenchResult,
    Options,
    System,
    Table,
    Target,
    available,
    fmt_ms,
    fmt_us,
    make_system,
    per_call,
    scratch_dir,
    summarize,
    time_until,
    tool_source,
)

NAME = "reload_cost"
SYSTEMS = ("ours", "strands", "fastmcp")
TIMEOUT = 3.0
PEER_GAP = 0.1
GROWTH_LIMIT = 1.2
OURS_ONLY_FROM = 10000
OURS_EDITS = 150
"""Edits per cell for ours: enough that p99 is not just the single slowest edit (with 40 it was)."""
P99_LIMITS = {10000: 0.015, 20000: 0.030}
"""Save → callable p99 targets at large folder sizes (seconds)."""
"""Peers are not run on folders this large (minutes per cell)."""


class _Timed:
    """Wraps a scheduler callable to record how long each call took (the loader is not changed)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.durations: list[float] = []

    def __call__(self, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.target(*args)
        finally:
            self.durations.append(time.perf_counter() - started)


def _instrument(system: System) -> tuple[_Timed | None, _Timed | None]:
    scheduler = getattr(getattr(system, "loader", None), "_scheduler", None)
    if scheduler is None or not hasattr(scheduler, "_apply"):
        return None, None
    apply = _Timed(scheduler._apply)
    scheduler._apply = apply
    tick = None
    if getattr(scheduler, "_tick", None) is not None:
        tick = _Timed(scheduler._tick)
        scheduler._tick = tick
    return apply, tick


def _measure(key: str, count: int, reps: int) -> dict[str, Any]:
    system = make_system(key)
    with scratch_dir(f"reload{count}-{key}") as base:
        folder = base / "tools"
        folder.mkdir()
        for i in range(count - 1):
            (folder / f"{key}_r{i}.py").write_text(tool_source(system.dialect, {f"r{i}": repr(i)}))
        path: Path = folder / f"{key}_edited.py"
        path.write_text(tool_source(system.dialect, {"edited": "'v'"}))
        started = time.perf_counter()
        system.start(folder)
        load_s = time.perf_counter() - started
        apply, tick = _instrument(system)
        latencies: list[float] = []
        rescans: list[float] = []
        passes: list[float] = []
        batches: list[float] = []
        never = 0
        try:
            system.settle(PEER_GAP)
            for index in range(reps):
                expected = f"v{index}" + "x" * index
                source = tool_source(system.dialect, {"edited": repr(expected)})
                first_batch = len(apply.durations) if apply else 0
                start = time.perf_counter()
                path.write_text(source)
                took = time_until(
                    lambda e=expected: system.call("edited") == e, start, TIMEOUT, yield_gil=True
                )  # type: ignore[misc]
                system.settle(PEER_GAP)
                if took is None:
                    never += 1
                else:
                    latencies.append(took)
                if apply is not None:
                    batches.append(sum(apply.durations[first_batch:]))
            if apply is not None:
                from loader.reload.rescan import Rescanner

                scanner = Rescanner([folder.resolve()], lambda paths: False)
                scanner.scan_once()  # the baseline
                for _ in range(8):
                    scanner.scan_once()
                    passes.append(scanner.last.seconds)
                for _ in range(5):
                    began = time.perf_counter()
                    system.loader.wait_idle(10.0)  # type: ignore[attr-defined]  # one stat pass over every file
                    rescans.append(time.perf_counter() - began)
        finally:
            system.close()
    return {
        "rescan_s": rescans,
        "rescan_summary_s": summarize(rescans),
        "rescan_pass_s": passes,
        "rescan_pass_summary_s": summarize(passes),
        "files": count,
        "reps": reps,
        "never": never,
        "initial_load_s": load_s,
        "latency_s": latencies,
        "summary_s": summarize(latencies),
        "batch_s": batches,
        "batch_summary_s": summarize(batches),
        "tick_s": None if tick is None else tick.durations,
        "tick_summary_s": None if tick is None else summarize(tick.durations),
    }


COMMIT_GROWTH_LIMIT = 2.0


def _registry_commits(sizes: list[int], batches: int) -> dict[str, Any]:
    """Seconds per registry commit that replaces one tool, with ``size`` tools registered."""
    from loader import tool as make_tool
    from loader.registry.tool_registry import ToolRegistry

    def make(index: int, version: str) -> Any:
        def body() -> str:
            return version

        body.__doc__ = f"Tool {index}."
        return make_tool(name=f"c{index}")(body)

    figures: dict[str, Any] = {}
    for size in sizes:
        registry = ToolRegistry()
        with registry.batch() as batch:
            for index in range(size):
                batch.register(make(index, "a"))
        versions = [make(0, "a"), make(0, "b")]
        flip = [0]

        def commit(
            reg: ToolRegistry = registry, tools: list[Any] = versions, state: list[int] = flip
        ) -> None:
            state[0] ^= 1
            reg.replace(tools[state[0]])

        per = per_call(commit, batches, 0.01)
        figures[str(size)] = {"seconds": per, "summary_s": summarize(per)}
    return figures


def run(options: Options) -> BenchResult:
    """Edit one file repeatedly in folders of growing size."""
    sizes = [10, 50] if options.quick else [10, 100, 1000, 10000, 20000]
    reps = options.count(OURS_EDITS, 3)
    peer_reps = options.count(20, 3)
    raw: dict[str, Any] = {key: {} for key in SYSTEMS}
    for key in SYSTEMS:
        for count in sizes:
            if not available(key) or (key != "ours" and count >= OURS_ONLY_FROM):
                raw[key][str(count)] = None
                continue
            # FastMCP re-imports the whole folder on every request: few edits at 1,000 files.
            system_reps = reps if key == "ours" else peer_reps
            if key == "fastmcp" and count >= 1000:
                system_reps = min(system_reps, 5)
            raw[key][str(count)] = _measure(key, count, system_reps)

    commit_sizes = [10, 1000] if options.quick else [10, 1000, 10000, 20000]
    commits = _registry_commits(commit_sizes, options.count(15, 3))
    result = BenchResult(
        NAME,
        raw={
            "sizes": sizes,
            "reps": reps,
            "peer_reps": peer_reps,
            "systems": raw,
            "registry_commit": commits,
        },
    )
    smallest = str(sizes[0])
    table = Table(
        "4. reload cost of one edited file versus folder size (ms)",
        [
            "files / system",
            "save→callable p50",
            "p99",
            "picked up",
            "batch p50",
            "rescan pass p50",
            "full stat walk p50",
            "p50 / p99 vs smallest",
        ],
        note=(
            f"{reps} in-place edits per cell for ours (so p99 is not the one slowest edit), "
            f"{peer_reps} for peers (FastMCP: 5 at 1,000 files; "
            f"peers not run from {OURS_ONLY_FROM:,} files); save→callable as in benchmark 1 (polling with "
            "time.sleep(0)); batch = the loader's apply of the batch holding the edit; rescan pass = "
            "one pass of the safety net (folder mtimes + 1/8 of the files, on its own thread); "
            "full stat walk = an idle wait_idle()."
        ),
    )
    for count in sizes:
        for key in SYSTEMS:
            data = raw[key][str(count)]
            label = f"{count} / {SYSTEM_LABELS[key]}"
            if data is None:
                table.rows.append([label, "not run", "", "", "", "", "", ""])
                continue
            summary = data["summary_s"]
            base = raw[key][smallest]["summary_s"]
            growth = "-"
            if base["p50"] and summary["p50"] is not None and base["p99"] and summary["p99"] is not None:
                growth = f"{summary['p50'] / base['p50']:.2f}x / {summary['p99'] / base['p99']:.2f}x"
            passes = data.get("rescan_pass_summary_s") or {}
            table.rows.append(
                [
                    label,
                    fmt_ms(summary["p50"]),
                    fmt_ms(summary["p99"]),
                    f"{data['reps'] - data['never']}/{data['reps']}",
                    fmt_ms(data["batch_summary_s"]["p50"]) if data["batch_s"] else "",
                    fmt_ms(passes.get("p50")) if data.get("rescan_pass_s") else "",
                    fmt_ms(data["rescan_summary_s"]["p50"]) if data["rescan_s"] else "",
                    growth,
                ]
            )
    result.tables.append(table)

    commit_table = Table(
        "4b. one registry commit (replace one tool) against tools registered (µs)",
        ["tools registered", "median", "min", "max", "vs smallest"],
        note="median, min and max over calibrated batches of commits (each commit: one generation, one "
        "change set, the displaced tool's cleanup); the registry's maps are persistent, so a commit "
        "costs what it changed.",
    )
    first = commits[str(commit_sizes[0])]["summary_s"]["p50"]
    for size in commit_sizes:
        stats = commits[str(size)]["summary_s"]
        commit_table.rows.append(
            [
                f"{size:,}",
                fmt_us(stats["p50"]),
                fmt_us(stats["min"]),
                fmt_us(stats["max"]),
                f"{stats['p50'] / first:.2f}x",
            ]
        )
    result.tables.append(commit_table)
    biggest = commits[str(commit_sizes[-1])]["summary_s"]["p50"]
    result.targets.append(
        Target(
            f"registry commit at {commit_sizes[-1]:,} tools <= {COMMIT_GROWTH_LIMIT:g}x at {commit_sizes[0]} "
            "(O(changed tools))",
            f"{fmt_us(biggest)} vs {fmt_us(first)} µs ({biggest / first:.2f}x)",
            biggest <= COMMIT_GROWTH_LIMIT * first,
        )
    )
    for count, limit in P99_LIMITS.items():
        cell = raw["ours"].get(str(count))
        if cell is not None:
            p99 = cell["summary_s"]["p99"]
            result.targets.append(
                Target(
                    f"save → callable p99 <= {limit * 1000:g} ms at {count:,} files",
                    f"{fmt_ms(p99)} ms",
                    p99 is not None and p99 <= limit and cell["never"] == 0,
                )
            )
    largest = str(min(sizes[-1], 10000))
    small, large = raw["ours"][smallest]["summary_s"], raw["ours"][largest]["summary_s"]
    for quantile in ("p50", "p99"):
        ratio = None if not small[quantile] or large[quantile] is None else large[quantile] / small[quantile]
        result.targets.append(
            Target(
                f"reload {quantile} at {largest} files within {GROWTH_LIMIT}x of {smallest} files",
                "-"
                if ratio is None
                else f"{fmt_ms(large[quantile])} vs {fmt_ms(small[quantile])} ms ({ratio:.2f}x)",
                None if ratio is None else ratio <= GROWTH_LIMIT,
            )
        )
    big = raw["ours"][largest]
    if big.get("rescan_pass_s") and big["rescan_s"]:
        part, whole = big["rescan_pass_summary_s"]["p50"], big["rescan_summary_s"]["p50"]
        result.targets.append(
            Target(
                f"safety-net pass at {largest} files does less work than a full stat walk",
                f"{fmt_ms(part)} vs {fmt_ms(whole)} ms ({part / whole:.2f}x)",
                part < whole,
            )
        )
    return result
