"""Benchmark 13: how long a replica takes to go away on SIGTERM, and what its calls in flight get.

``tool-loader serve --transport http --stateless`` runs as a subprocess in
each isolation mode, with a tool that sleeps as long as it is asked. Three
cases: no call in flight; three calls in flight that finish within the
shutdown grace; two calls that outlast a 1 s grace. The figures are the time
from SIGTERM to the process's exit, the drain the server reported ("drained
in ... s"), and how many calls got a result and how many an error result.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

from .common import BenchResult, Options, Table, Target, scratch_dir

NAME = "drain"
EXIT_LIMIT_S = 1.5
"""From the drain's end to the process's exit: answers flushed, loader closed, interpreter gone."""

_TOOL = '''
import time
from loader import tool

@tool
def slow(seconds: float) -> str:
    """Sleep a while, then say so."""
    time.sleep(seconds)
    return f"slept {seconds}"
'''


def _case(folder: Any, isolation: str, calls: int, seconds: float, grace: float | None) -> dict[str, Any]:
    command = [sys.executable, "-m", "loader", "serve", str(folder), "--transport", "http", "--port", "0"]
    command += ["--stateless", "--isolation", isolation, "--no-history"]
    if grace is not None:
        command += ["--shutdown-grace", str(grace)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    url: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            found = re.search(r"serving .* at (http://\S+)$", line)
            if found:
                url.append(found.group(1))

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 60
    while not url:
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise RuntimeError("serve did not start: " + "\n".join(lines[-10:]))
        time.sleep(0.05)
    answers: list[dict[str, Any]] = []
    callers = [threading.Thread(target=_call, args=(url[0], seconds, answers)) for _ in range(calls)]
    for caller in callers:
        caller.start()
    started = time.monotonic()
    time.sleep(0.5 if calls else 0.0)  # the calls have reached the server
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    status = process.wait(120)
    exited = time.monotonic() - signalled
    for caller in callers:
        caller.join(60)
    drained = next((line for line in lines if line.startswith("drained in")), "")
    found = re.search(r"drained in ([\d.]+) s", drained)
    return {
        "isolation": isolation,
        "calls": calls,
        "call_seconds": seconds,
        "grace_s": grace,
        "remaining_s": max(0.0, seconds - (signalled - started)) if calls else 0.0,
        "exit_s": exited,
        "exit_status": status,
        "drain_s": float(found.group(1)) if found else None,
        "results": sum(not answer.get("isError", True) for answer in answers),
        "error_results": sum(bool(answer.get("isError")) for answer in answers),
    }


def _call(url: str, seconds: float, answers: list[dict[str, Any]]) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {"seconds": seconds}},
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            text = response.read().decode()
    except OSError:
        answers.append({})
        return
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")] or [text]
    messages = [json.loads(item) for item in data if item.strip()]
    answers.append(dict(messages[-1].get("result", {})) if messages else {})


def run(options: Options) -> BenchResult:
    """SIGTERM to exit with no call, with calls that finish, with calls that outlast the grace."""
    seconds = 1.0 if options.quick else 3.0
    result = BenchResult(NAME)
    cases: list[dict[str, Any]] = []
    with scratch_dir("drain") as base:
        folder = base / "tools"
        folder.mkdir()
        (folder / "slow.py").write_text(_TOOL)
        for isolation in ("process",) if options.quick else ("thread", "process"):
            cases.append(_case(folder, isolation, 0, 0.0, None))
            cases.append(_case(folder, isolation, 3, seconds, None))
            cases.append(_case(folder, isolation, 2, 60.0, 1.0))
    result.raw = {"cases": cases}
    table = Table(
        "13. SIGTERM with calls in flight: drain and exit (s)",
        ["isolation", "calls in flight", "grace", "drain", "SIGTERM to exit", "results", "error results"],
        note=(
            f"serve --stateless; calls of a tool sleeping {seconds:g} s (or 60 s against a 1 s grace), "
            "SIGTERM 0.5 s after they were sent; exit status 0 in every case unless marked."
        ),
    )
    for case in cases:
        table.rows.append(
            [
                case["isolation"],
                f"{case['calls']} x {case['call_seconds']:g} s" if case["calls"] else "none",
                "default" if case["grace_s"] is None else f"{case['grace_s']:g} s",
                "-" if case["drain_s"] is None else f"{case['drain_s']:.1f}",
                f"{case['exit_s']:.2f}"
                + ("" if case["exit_status"] == 0 else f" (status {case['exit_status']})"),
                str(case["results"]),
                str(case["error_results"]),
            ]
        )
    result.tables.append(table)
    after = max(case["exit_s"] - (case["drain_s"] or 0.0) for case in cases)
    answered = all(case["results"] + case["error_results"] == case["calls"] for case in cases)
    result.targets.append(
        Target(
            f"every call answered; exit 0 within {EXIT_LIMIT_S:g} s of the drain's end",
            f"{after:.2f} s" + ("" if answered else "; a call got no answer"),
            answered and all(case["exit_status"] == 0 for case in cases) and after <= EXIT_LIMIT_S,
        )
    )
    return result
