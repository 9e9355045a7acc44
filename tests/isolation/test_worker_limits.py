"""What a worker process may take, and what it takes with it: the pool's spares.

Real worker processes, real signals.
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path

from support import FAST, MakeLoader, call_text, eventually, function_tool_source, write

from loader.isolation.backend import ProcessBackend
from loader.types import ToolResult

PROCESS = replace(FAST, isolation="process")

STEADY = function_tool_source("steady", "return 'steady'")


def _text(result: ToolResult) -> str:
    return str(result["content"][0].get("text"))


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie counts: it runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _all_gone(pids: list[int]) -> bool:
    return all(_gone(pid) for pid in pids if pid > 0)


# -- 6. a dead spare is replaced, never handed out ------------------------------------------------
VICTIM = '''
import os, pathlib, time
from loader import tool

@tool
def victim(marker: str) -> str:
    """Say which worker runs this call while it runs (the marker is gone before the call ends)."""
    path = pathlib.Path(marker)
    path.write_text(str(os.getpid()))
    try:
        time.sleep(0.1)
    finally:
        path.unlink()
    return "done"
'''


def test_workers_killed_from_outside_never_fail_calls_of_other_tools(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """An OOM killer's view: idle spares and a busy worker of another tool are SIGKILLed every 0.2 s."""
    write(tools_dir / "victim.py", VICTIM)
    write(tools_dir / "steady.py", STEADY)
    loader = make_loader(tools_dir, config=PROCESS)
    backend = loader._backend
    assert isinstance(backend, ProcessBackend)
    pool = backend.pool
    marker = tools_dir.parent / "victim-pid"
    stop = threading.Event()
    kills = [0]

    def killer() -> None:
        while not stop.wait(0.2):
            with pool._lock:  # only workers idle now, or running the victim (none changes hands meanwhile)
                pids = [w.pid for w in pool._idle]
                try:
                    pids.append(int(marker.read_text() or 0))
                except (OSError, ValueError):
                    pass
                for pid in pids:
                    if pid > 0:
                        try:
                            os.kill(pid, signal.SIGKILL)
                            kills[0] += 1
                        except OSError:
                            pass
                # A signal lands a moment after kill() returns: only hand the pool back once it has.
                eventually(partial(_all_gone, pids), message="the killed workers died")

    def victim() -> None:
        while not stop.is_set():
            loader.registry.invoke("victim", {"marker": str(marker)})

    threads = [threading.Thread(target=killer, daemon=True), threading.Thread(target=victim, daemon=True)]
    for thread in threads:
        thread.start()
    failures: list[str] = []
    calls = 0
    try:
        while kills[0] < 30:
            calls += 1
            result = loader.registry.invoke("steady", {})
            if result["status"] != "success":
                failures.append(_text(result))
            stop.wait(0.05)  # an agent's pace: idle workers are there to be killed
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    print(f"{calls} calls of steady while {kills[0]} workers were killed")
    assert failures == []
    assert call_text(loader, "steady") == "steady"
