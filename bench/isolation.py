"""Benchmark 8: what process isolation and the sandbox cost, beside thread mode.

Four figures, each for ``isolation="thread"``, ``"process"`` and ``"sandbox"`` on
the same folder:

* warm call: ``ToolRegistry.invoke`` of a two-int tool, per call (median over
  batches of about 20 ms), after the tool has been called once;
* save to callable: an in-place save of one file in a folder of ten, until a
  call returns the new text (polling with ``time.sleep(0)``);
* crash recovery (worker modes only): from the start of a call that kills its
  worker (``os._exit``) until a call of another tool succeeds again;
* scan to callable: from creating a loader on a fresh folder of 20 files until
  every one of its tools has answered a call (worker start-up, the sandbox
  applied in each worker, imports and first calls).

The floor of a warm call in process mode is a bare round trip over the same kind
of pipe: a child process started as the workers are (``python -I``, its stdin
and stdout as ``multiprocessing.connection.Connection`` ends) reads one JSON
request, adds two ints and writes one JSON answer; nothing else (no ledger, no
lanes, no deadline, no result shaping). Process mode is held to a ratio of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .common import (
    BenchResult,
    Options,
    Table,
    Target,
    fmt_ms,
    fmt_ratio,
    fmt_us,
    per_call,
    save_in_place,
    scratch_dir,
    summarize,
    time_until,
)

NAME = "isolation"
CALL_LIMIT = 300e-6
PIPE_FACTOR = 2.0
"""Process mode's warm call at most this many times the bare pipe round trip (same run)."""
SAVE_LIMIT = 0.010
RECOVERY_LIMIT = 1.0
SAVE_TIMEOUT = 2.0
FOLDER_FILES = 10
SCAN_FILES = 20
SANDBOX_CALL_EXTRA = 1e-3
"""Sandbox target: a warm call within 1 ms of process mode's (p50, same run)."""
SANDBOX_SCAN_RATIO = 1.5
"""Sandbox target: scan to callable of the 20-file folder within 1.5x process mode's (p50)."""
WORKER_MODES = ("process", "sandbox")

ADD = '''from loader import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''

CRASH = '''import os

from loader import tool


@tool
def crash() -> str:
    """Kill this worker process."""
    os._exit(3)
'''


_ECHO = """
import json, sys
from multiprocessing.connection import Connection
reader, writer = Connection(0, writable=False), Connection(1, readable=False)
while True:
    try:
        request = json.loads(reader.recv_bytes())
    except EOFError:
        break
    values = request["input"]
    answer = {"id": request["id"], "status": "success", "content": [{"text": str(values["a"] + values["b"])}]}
    writer.send_bytes(json.dumps(answer, separators=(",", ":")).encode())
"""


def _pipe_floor(batches: int) -> list[float]:
    """Per round trip: one JSON request to a child process over a pipe and its JSON answer."""
    child = subprocess.Popen(
        [sys.executable, "-I", "-c", _ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    reader = Connection(os.dup(child.stdout.fileno()), writable=False)
    writer = Connection(os.dup(child.stdin.fileno()), readable=False)
    child.stdin.close()
    child.stdout.close()
    counter = iter(range(1 << 62))

    def round_trip() -> object:
        request = {"id": next(counter), "tool": "add", "input": {"a": 1, "b": 2}}
        writer.send_bytes(json.dumps(request, separators=(",", ":")).encode())
        return json.loads(reader.recv_bytes())

    try:
        round_trip()
        return per_call(round_trip, batches)
    finally:
        writer.close()
        reader.close()
        child.wait(10)


def _saved(version: str) -> str:
    return (
        f'from loader import tool\n\n\n@tool\ndef saved() -> str:\n    """Saved."""\n    return {version!r}\n'
    )


def _loader(folder: Path, isolation: str) -> Any:
    from loader.reload.loader import LoaderConfig, ToolLoader

    loader = ToolLoader([folder], config=LoaderConfig(isolation=isolation))  # type: ignore[arg-type]
    loader.scan()
    loader.start()
    return loader


def _text(loader: Any, name: str, data: dict[str, Any] | None = None) -> str | None:
    result = loader.registry.invoke(name, data or {})
    if result.get("status") != "success":
        return None
    block = result["content"][0]
    return str(block.get("text", block.get("json")))


def _measure(isolation: str, reps: int, batches: int) -> dict[str, Any]:
    with scratch_dir(f"isolation-{isolation}") as base:
        folder = base / "tools"
        folder.mkdir()
        (folder / "add.py").write_text(ADD)
        (folder / "crash.py").write_text(CRASH)
        for i in range(FOLDER_FILES - 3):
            (folder / f"other{i}.py").write_text(_saved(f"other{i}").replace("saved", f"other{i}"))
        path = folder / "saved.py"
        path.write_text(_saved("v0"))
        loader = _loader(folder, isolation)
        try:
            registry = loader.registry
            if registry.invoke("add", {"a": 1, "b": 2}).get("status") != "success":
                raise RuntimeError(f"{isolation}: add is not callable")
            calls = per_call(lambda: registry.invoke("add", {"a": 1, "b": 2}), batches)

            saves: list[float] = []
            never = 0
            for index in range(1, reps + 1):
                expected = f"v{index}"
                loader.wait_idle(10.0)
                time.sleep(0.05)
                start = time.perf_counter()
                save_in_place(path, _saved(expected))
                took = time_until(
                    lambda e=expected: _text(loader, "saved") == e, start, SAVE_TIMEOUT, yield_gil=True
                )  # type: ignore[misc]
                if took is None:
                    never += 1
                else:
                    saves.append(took)

            recoveries: list[float] = []
            if isolation in WORKER_MODES:
                for _ in range(max(1, reps // 5)):  # 10 in a full run, 1 in a quick one
                    loader.wait_idle(10.0)
                    time.sleep(0.2)  # the spare is warm again
                    start = time.perf_counter()
                    if registry.invoke("crash", {}).get("status") != "error":
                        raise RuntimeError("the crashing tool did not report its crash")
                    took = time_until(
                        lambda: _text(loader, "add", {"a": 1, "b": 2}) is not None,
                        start,
                        10.0,
                        yield_gil=True,
                    )
                    if took is not None:
                        recoveries.append(took)
        finally:
            loader.close()
    scans = [_scan_to_callable(isolation, rep) for rep in range(max(1, reps // 10))]  # 5 full, 1 quick
    return {
        "scan_s": scans,
        "scan": summarize(scans),
        "call_s": calls,
        "call": summarize(calls),
        "save_s": saves,
        "save": summarize(saves),
        "save_never": never,
        "recovery_s": recoveries,
        "recovery": summarize(recoveries),
    }


def _scan_to_callable(isolation: str, rep: int) -> float:
    """Seconds from creating a loader on a fresh 20-file folder until each of its tools has answered."""
    from loader.reload.loader import LoaderConfig, ToolLoader

    with scratch_dir(f"isolation-scan-{isolation}-{rep}") as base:
        folder = base / "tools"
        folder.mkdir()
        names = [f"scan{i}" for i in range(SCAN_FILES)]
        for name in names:
            (folder / f"{name}.py").write_text(_saved(name).replace("saved", name))
        start = time.perf_counter()
        loader = ToolLoader([folder], config=LoaderConfig(isolation=isolation))  # type: ignore[arg-type]
        try:
            loader.scan()
            for name in names:
                if _text(loader, name) != name:
                    raise RuntimeError(f"{isolation}: {name} is not callable after the scan")
            return time.perf_counter() - start
        finally:
            loader.close()


def run(options: Options) -> BenchResult:
    """Both modes on the same folder shape; targets apply to process mode."""
    reps = options.count(50, 5)
    batches = options.count(30, 5)
    result = BenchResult(NAME)
    data = {mode: _measure(mode, reps, batches) for mode in ("thread", *WORKER_MODES)}
    pipe = _pipe_floor(batches)
    result.raw = {
        "reps": reps,
        "batches": batches,
        "folder_files": FOLDER_FILES,
        "modes": data,
        "pipe_round_trip_s": pipe,
        "pipe_round_trip": summarize(pipe),
    }
    table = Table(
        "8. process isolation and the sandbox vs thread mode",
        ["figure", "thread p50", "process p50", "process p90", "sandbox p50", "sandbox p90"],
        note=(
            f"warm call: ToolRegistry.invoke of add(a, b), per call, median of {batches} batches of ~20 ms; "
            f"save to callable: {reps} in-place saves in a folder of {FOLDER_FILES} files, until a call "
            "returns the new text; crash recovery: from the start of a call that runs os._exit until a "
            "call of another tool succeeds; scan to callable: a new loader on a fresh folder of "
            f"{SCAN_FILES} files until each tool has answered a call. pipe floor: a bare JSON request "
            "and answer between this process and a child over a pipe, per round trip (same batches)."
        ),
    )
    thread, process, sandbox = data["thread"], data["process"], data["sandbox"]
    table.rows.append(
        [
            "warm call (µs)",
            fmt_us(thread["call"]["p50"]),
            fmt_us(process["call"]["p50"]),
            fmt_us(process["call"]["p90"]),
            fmt_us(sandbox["call"]["p50"]),
            fmt_us(sandbox["call"]["p90"]),
        ]
    )
    floor = summarize(pipe)
    table.rows.append(
        [
            "pipe floor: bare JSON round trip (µs)",
            "-",
            fmt_us(floor["p50"]),
            fmt_us(floor["p90"]),
            fmt_us(floor["max"]),
        ]
    )
    table.rows.append(
        [
            "save to callable (ms)",
            fmt_ms(thread["save"]["p50"]),
            fmt_ms(process["save"]["p50"]),
            fmt_ms(process["save"]["p90"]),
            fmt_ms(sandbox["save"]["p50"]),
            fmt_ms(sandbox["save"]["p90"]),
        ]
    )
    table.rows.append(
        [
            "crash recovery (ms)",
            "- (the host dies)",
            fmt_ms(process["recovery"]["p50"]),
            fmt_ms(process["recovery"]["p90"]),
            fmt_ms(sandbox["recovery"]["p50"]),
            fmt_ms(sandbox["recovery"]["p90"]),
        ]
    )
    table.rows.append(
        [
            f"scan to callable, {SCAN_FILES} files (ms)",
            fmt_ms(thread["scan"]["p50"]),
            fmt_ms(process["scan"]["p50"]),
            fmt_ms(process["scan"]["p90"]),
            fmt_ms(sandbox["scan"]["p50"]),
            fmt_ms(sandbox["scan"]["p90"]),
        ]
    )
    result.tables.append(table)
    call_p50 = process["call"]["p50"]
    result.targets.append(
        Target(
            "process mode: warm call p50 <= 300 µs",
            fmt_us(call_p50) + " µs",
            call_p50 is not None and call_p50 <= CALL_LIMIT,
        )
    )
    pipe_p50 = floor["p50"]
    result.targets.append(
        Target(
            f"process mode: warm call p50 <= {PIPE_FACTOR:g}x a bare pipe round trip (same run)",
            f"{fmt_us(call_p50)} vs {fmt_us(pipe_p50)} µs ({fmt_ratio(call_p50, pipe_p50)})",
            None if call_p50 is None or pipe_p50 is None else call_p50 <= PIPE_FACTOR * pipe_p50,
        )
    )
    save_p50 = process["save"]["p50"]
    result.targets.append(
        Target(
            "process mode: save to callable p50 <= 10 ms",
            fmt_ms(save_p50) + f" ms ({process['save_never']} never)",
            save_p50 is not None and process["save_never"] == 0 and save_p50 <= SAVE_LIMIT,
        )
    )
    worst = process["recovery"]["max"]
    result.targets.append(
        Target(
            "process mode: crashed worker replaced and serving within 1 s",
            fmt_ms(worst) + " ms (worst)",
            worst is not None and worst <= RECOVERY_LIMIT,
        )
    )
    _sandbox_targets(result, process, sandbox)
    return result


def _sandbox_targets(result: BenchResult, process: dict[str, Any], sandbox: dict[str, Any]) -> None:
    """The sandbox against process mode, in the same run."""
    calls = (process["call"]["p50"], sandbox["call"]["p50"])
    extra = None if None in calls else calls[1] - calls[0]
    result.targets.append(
        Target(
            "sandbox: warm call p50 within 1 ms of process mode",
            ("-" if extra is None else f"{extra * 1e6:+.1f} µs")
            + f" ({fmt_us(calls[1])} vs {fmt_us(calls[0])} µs)",
            extra is not None and extra <= SANDBOX_CALL_EXTRA,
        )
    )
    scans = (process["scan"]["p50"], sandbox["scan"]["p50"])
    ratio = None if None in scans or not scans[0] else scans[1] / scans[0]
    result.targets.append(
        Target(
            f"sandbox: scan to callable ({SCAN_FILES} files) p50 within 1.5x process mode",
            ("-" if ratio is None else f"{ratio:.2f}x") + f" ({fmt_ms(scans[1])} vs {fmt_ms(scans[0])} ms)",
            ratio is not None and ratio <= SANDBOX_SCAN_RATIO,
        )
    )
