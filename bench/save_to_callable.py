"""Benchmark 1: from the start of a save until a call returns the new version.

For each save style, the main thread writes a new version (same size) of one
tool file in a folder of ten, then calls the tool until the new text comes back,
with ``time.sleep(0)`` between calls: an agent's main thread waits on I/O and
lets the loader's threads run, and this poll does the same for every system.
After each save every system settles (ours: ``wait_idle``) and then idles
``PEER_GAP`` seconds, so each save starts from the same quiet state.
Module executions per save are counted after the save has settled (ours:
``loader.module_executions``; peers: a counter the tool file bumps in
``bench_probe``). A save a peer has not picked up after ``TIMEOUT`` seconds
counts as "never"; a peer that misses the first ``GIVE_UP`` saves of a style in
a row is not asked again for that style.

The floor (``floor``, ``bench.common.FloorSystem``) is a minimal watchdog
observer that compiles and executes the saved file on its dispatch thread: what
any watched reload pays at least, without containment or bookkeeping. Ours is
held to a ratio of the floor's p50 in the same run. A second pass runs ours, the
floor and Strands again while spinning processes keep every core busy
(``background_load``): the tail under CPU load is held to Strands' under the
same load.

A further run of ours polls in a tight loop that never releases the GIL (a
stress case, no target): every hand-over between the watcher's, the loader's
and the import threads then waits for CPython's 5 ms switch interval, so the
gap between the two rows is what a CPU-bound thread costs a threaded loader.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .common import (
    SAVE_STYLES,
    SYSTEM_LABELS,
    BenchResult,
    Options,
    System,
    Table,
    Target,
    available,
    background_load,
    fmt_ms,
    fmt_ratio,
    install_probe,
    make_system,
    scratch_dir,
    summarize,
    time_until,
    tool_source,
)

NAME = "save_to_callable"
TIMEOUT = 0.75
GIVE_UP = 5
QUICK_TIMEOUT = 0.5
QUICK_GIVE_UP = 2
PEER_GAP = 0.1
"""Seconds every system is left idle after each save (late events count for that save; each
measured save starts from the same quiet state)."""
FOLDER_FILES = 10

P50_LIMIT = 0.0025
P99_LIMIT = 0.015
STRANDS_FACTOR = 0.7
FLOOR_FACTOR = 1.2
"""Ours' p50 at most this many times the floor's (same run)."""
STRANDS_P99_FACTOR = 0.8
"""Ours' p99 at most this many times Strands' p99 (same run), quiet and under load."""
LOADED = ("ours", "floor", "strands")
"""Systems measured again under background load."""


def _measure(
    system: System, folder: Path, style: str, reps: int, quick: bool, yield_gil: bool
) -> dict[str, Any]:
    save = SAVE_STYLES[style]
    path = folder / f"{system.key}_saved.py"
    latencies: list[float] = []
    executions: list[int] = []
    never = 0
    attempts = 0
    timeout, give_up = (QUICK_TIMEOUT, QUICK_GIVE_UP) if quick else (TIMEOUT, GIVE_UP)
    for index in range(reps):
        expected = f"{style}-{index}"
        source = tool_source(system.dialect, {"saved": repr(expected)}, probe=True)
        before = system.executions()
        start = time.perf_counter()
        save(path, source)
        took = time_until(lambda e=expected: system.call("saved") == e, start, timeout, yield_gil=yield_gil)  # type: ignore[misc]
        system.settle(PEER_GAP)
        executions.append(system.executions() - before)
        attempts += 1
        if took is None:
            never += 1
        else:
            latencies.append(took)
        if never == attempts == give_up:
            break
    return {
        "attempts": attempts,
        "never": never,
        "gave_up": attempts < reps,
        "latency_s": latencies,
        "summary_s": summarize(latencies),
        "executions_per_save": executions,
    }


def _run_system(key: str, reps: int, quick: bool, yield_gil: bool = False) -> dict[str, Any]:
    system = make_system(key)
    with scratch_dir(f"s2c-{key}") as base:
        folder = base / "tools"
        folder.mkdir()
        for i in range(FOLDER_FILES - 1):
            (folder / f"{key}_other{i}.py").write_text(tool_source(system.dialect, {f"other{i}": repr(i)}))
        initial = tool_source(system.dialect, {"saved": "'initial'"}, probe=True)
        (folder / f"{key}_saved.py").write_text(initial)
        system.start(folder)
        try:
            system.settle(PEER_GAP)
            if system.call("saved") != "initial":
                raise RuntimeError(f"{key}: the initial tool is not callable")
            return {style: _measure(system, folder, style, reps, quick, yield_gil) for style in SAVE_STYLES}
        finally:
            system.close()


def _available(key: str) -> bool:
    return key == "floor" or available(key)


def _p(data: dict[str, Any], key: str, style: str, q: str) -> float | None:
    entry = data.get(key)
    if entry is None:
        return None
    value = entry[style]["summary_s"][q]
    return None if value is None else float(value)


def _ratio_cell(data: dict[str, Any], key: str, style: str) -> str:
    """Ours' p50 over this row's p50; rows measured under load compare with ours under load."""
    if key.startswith("ours"):
        return ""
    ours = "ours_load" if key.endswith("_load") else "ours"
    return fmt_ratio(_p(data, ours, style, "p50"), _p(data, key, style, "p50"))


def _relative_targets(result: BenchResult, data: dict[str, Any], style: str) -> None:
    """The targets relative to the floor (p50) and to Strands (p99, quiet and under load)."""
    p50, floor = _p(data, "ours", style, "p50"), _p(data, "floor", style, "p50")
    result.targets.append(
        Target(
            f"{style}: p50 <= {FLOOR_FACTOR:g}x the floor's p50 (same run)",
            f"{fmt_ms(p50)} vs {fmt_ms(floor)} ms ({fmt_ratio(p50, floor)})",
            None if p50 is None or floor is None else p50 <= FLOOR_FACTOR * floor,
        )
    )
    for suffix, how in (("", "quiet"), ("_load", "under load")):
        p99, strands = _p(data, f"ours{suffix}", style, "p99"), _p(data, f"strands{suffix}", style, "p99")
        result.targets.append(
            Target(
                f"{style}: p99 <= {STRANDS_P99_FACTOR:g}x Strands' p99 ({how}, same run)",
                f"{fmt_ms(p99)} vs {fmt_ms(strands)} ms ({fmt_ratio(p99, strands)})",
                None if p99 is None or strands is None else p99 <= STRANDS_P99_FACTOR * strands,
            )
        )


def _picked(data: dict[str, Any]) -> str:
    text = f"{data['attempts'] - data['never']}/{data['attempts']}"
    if data["never"]:
        text += f" ({data['never']} never{', gave up' if data['gave_up'] else ''})"
    return text


def _execs(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{sum(values) / len(values):.2f} [{min(values)}-{max(values)}]"


def run(options: Options) -> BenchResult:
    """Measure every save style for ours and each installed peer."""
    install_probe()
    reps = options.count(100, 3)
    peer_reps = options.count(50, 3)
    result = BenchResult(NAME)
    systems = ["ours", "floor", "strands", "fastmcp"]
    data: dict[str, Any] = {}
    for key in systems:
        count = reps if key == "ours" else peer_reps
        data[key] = _run_system(key, count, options.quick, yield_gil=True) if _available(key) else None
    # quick (the suite's smoke run of this code): one spinning process, not one per core, and ours alone
    # under it, so the check of the loaded path does not take the cores from the tests running beside it
    with background_load(1 if options.quick else None) as hogs:
        for key in LOADED:
            count = reps if key == "ours" else peer_reps
            measured = _available(key) and not (options.quick and key != "ours")
            data[f"{key}_load"] = _run_system(key, count, options.quick, yield_gil=True) if measured else None
    # Stress case: ours again with a poll that never hands the GIL over.
    data["ours_tight"] = _run_system("ours", peer_reps, options.quick, yield_gil=False)
    timeout = QUICK_TIMEOUT if options.quick else TIMEOUT
    result.raw = {
        "reps": reps,
        "peer_reps": peer_reps,
        "timeout_s": timeout,
        "folder_files": FOLDER_FILES,
        "background_processes": hogs,
        "systems": data,
    }

    table = Table(
        "1. save to callable (ms)",
        ["save style / system", "p50", "p90", "p99", "picked up", "execs/save", "ours p50 / its p50"],
        note=(
            f"{reps} saves per style for ours, {peer_reps} for each peer, folder of {FOLDER_FILES} files; "
            "latency from the start of "
            f"the write until a call returns the new text (polling with time.sleep(0), 'never' = not "
            f"within {timeout:g} s). Versions keep the file size, like a one-character edit: peers then "
            "miss saves made in the same second as their last import (CPython's .pyc check is size + "
            "mtime in whole seconds). execs/save: mean [min-max] after settling; FastMCP re-imports on "
            "every request, so its executions count the polls. After each save every system settles "
            f"(ours: wait_idle) and then idles {PEER_GAP:g} s. 'floor': a bare watchdog observer that "
            "compiles and executes the saved file (no containment, no bookkeeping). 'under load': "
            f"measured again while {hogs} spinning processes keep every core busy (ours is compared "
            "with the peer under the same load). 'ours, tight poll' (stress case, no "
            "target) polls without releasing the GIL, so each of the loader's thread hand-overs waits "
            "for CPython's 5 ms switch interval."
        ),
    )
    ours = data["ours"]
    labels = {
        **SYSTEM_LABELS,
        "ours_tight": "ours, tight poll",
        **{f"{key}_load": f"{SYSTEM_LABELS[key]}, under load" for key in LOADED},
    }
    for style in SAVE_STYLES:
        for key in ["ours", "ours_tight", *systems[1:], *(f"{key}_load" for key in LOADED)]:
            label = f"{style} / {labels[key]}"
            entry = data[key]
            if entry is None:
                installed = _available(key.removesuffix("_load"))
                missing = "not measured (quick run)" if installed else "not installed"
                table.rows.append([label, missing, "", "", "", "", ""])
                continue
            cell = entry[style]
            summary = cell["summary_s"]
            ratio = _ratio_cell(data, key, style)
            table.rows.append(
                [
                    label,
                    fmt_ms(summary["p50"]) if summary["n"] else "never",
                    fmt_ms(summary["p90"]),
                    fmt_ms(summary["p99"]),
                    _picked(cell),
                    _execs(cell["executions_per_save"]),
                    ratio,
                ]
            )
    result.tables.append(table)

    for style in SAVE_STYLES:
        cell = ours[style]
        summary = cell["summary_s"]
        p50, p99 = summary["p50"], summary["p99"]
        complete = cell["never"] == 0
        fast = complete and p50 is not None and p50 <= P50_LIMIT
        result.targets.append(Target(f"{style}: p50 <= 2.5 ms", fmt_ms(p50) + " ms", fast))
        steady = complete and p99 is not None and p99 <= P99_LIMIT
        result.targets.append(Target(f"{style}: p99 <= 15 ms", fmt_ms(p99) + " ms", steady))
        executions = cell["executions_per_save"]
        result.targets.append(
            Target(
                f"{style}: one module execution per settled save",
                f"{sum(1 for e in executions if e == 1)}/{len(executions)} saves",
                bool(executions) and all(e == 1 for e in executions),
            )
        )
        _relative_targets(result, data, style)
        strands = data["strands"]
        strands_p50 = None if strands is None else strands[style]["summary_s"]["p50"]
        if strands_p50 is None:
            figure = "Strands not installed" if strands is None else "Strands never picks it up"
            result.targets.append(Target(f"{style}: p50 <= 0.7x Strands p50 (same run)", figure, None))
        else:
            result.targets.append(
                Target(
                    f"{style}: p50 <= 0.7x Strands p50 (same run)",
                    f"{fmt_ms(p50)} vs {fmt_ms(strands_p50)} ms ({fmt_ratio(p50, strands_p50)})",
                    p50 is not None and p50 <= STRANDS_FACTOR * strands_p50,
                )
            )
    return result
