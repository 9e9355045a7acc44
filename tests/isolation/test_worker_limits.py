"""What a worker process may take, and what it takes with it: process trees, process count,
memory, the pool's spares, and what it can see of its host.

Real worker processes, real signals, the real command for the host-secrets test.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from serving import serve_http, server_env
from support import FAST, MakeLoader, call_text, eventually, function_tool_source, write

from loader.isolation import WorkerOptions
from loader.isolation.backend import ProcessBackend
from loader.isolation.pool import WorkerPool
from loader.isolation.process import WorkerProcess
from loader.reload.config import LoaderConfig
from loader.types import ToolResult

PROCESS = replace(FAST, isolation="process")

TREE = '''
import ctypes, os, pathlib, resource, subprocess, sys, time
from loader import tool

@tool
def spawn(marker: str, overrun: bool = True) -> str:
    """Start a child in a session of its own, then overrun (or return)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    pathlib.Path(marker).write_text(str(child.pid))
    while overrun:
        pass
    return "started"

@tool
def bomb(marker: str) -> str:
    """A fork bomb, bounded at 2**10 processes in case nothing stops it."""
    ctypes.CDLL(None).prctl(15, b"tlbomb", 0, 0, 0)  # PR_SET_NAME: children inherit the name
    pathlib.Path(marker).touch()
    for _ in range(10):
        os.fork()
    time.sleep(600)
    return "survived"

@tool
def fork_loop(cap: int) -> str:
    """Fork one waiting child after another until forking fails, or ``cap`` in case nothing stops it."""
    ctypes.CDLL(None).prctl(15, b"tlforkloop", 0, 0, 0)  # PR_SET_NAME: children inherit the name
    count = 0
    try:
        while count < cap:
            if os.fork() == 0:
                time.sleep(600)
                os._exit(0)
            count += 1
    except OSError as exc:
        return f"fork failed after {count} children: {exc}"
    return f"forked {count} children"

@tool
def allocate(megabytes: int) -> str:
    """Allocate, and say how much."""
    block = bytearray(megabytes * 1024 * 1024)
    return f"allocated {len(block)}"

@tool
def data_limit() -> int:
    """This worker's RLIMIT_DATA soft limit (-1: none)."""
    return resource.getrlimit(resource.RLIMIT_DATA)[0]

@tool
def mine() -> int:
    """The worker's pid."""
    return os.getpid()
'''


@pytest.fixture
def tree_dir(tools_dir: Path) -> Path:
    write(tools_dir / "tree.py", TREE)
    write(tools_dir / "steady.py", function_tool_source("steady", "return 'steady'"))
    return tools_dir


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


def _named(comm: str) -> list[int]:
    """Live processes called ``comm``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    head, tail = handle.read().rsplit(")", 1)
            except OSError:
                continue
            if head.split("(", 1)[1] == comm and tail.split()[0] != "Z":
                found.append(int(entry))
    return found


# -- 5. a worker takes everything it started with it ---------------------------------------------
def test_an_overrunning_call_is_stopped_with_children_in_sessions_of_their_own(
    tree_dir: Path, make_loader: MakeLoader
) -> None:
    loader = make_loader(tree_dir, config=replace(PROCESS, call_timeout=3.0))
    marker = tree_dir.parent / "child-pid"
    result = loader.registry.invoke("spawn", {"marker": str(marker)})
    assert result["status"] == "error" and "did not finish within 3 s" in _text(result)
    child = int(marker.read_text())
    eventually(lambda: _gone(child), message="the child in its own session was stopped with its worker")


def test_closing_the_loader_stops_what_its_tools_left_running(
    tree_dir: Path, make_loader: MakeLoader
) -> None:
    loader = make_loader(tree_dir, config=PROCESS)
    marker = tree_dir.parent / "child-pid"
    assert call_text(loader, "spawn", {"marker": str(marker), "overrun": False}) == "started"
    child = int(marker.read_text())
    assert not _gone(child)
    loader.close()
    eventually(lambda: _gone(child), message="the child in its own session was stopped at close")


def test_a_fork_bomb_is_stopped_at_the_process_limit_and_nothing_of_it_survives(
    tree_dir: Path, make_loader: MakeLoader
) -> None:
    loader = make_loader(
        tree_dir, config=replace(PROCESS, workers=WorkerOptions(max_processes=32), call_timeout=60.0)
    )
    marker = tree_dir.parent / "bomb-started"
    peak = [0]
    done = threading.Event()

    def count() -> None:
        while not done.wait(0.01):
            peak[0] = max(peak[0], len(_named("tlbomb")))

    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    try:
        result = loader.registry.invoke("bomb", {"marker": str(marker)})
        assert marker.exists()
        assert result["status"] == "error"
        assert "started more than 32 processes" in _text(result), _text(result)
        eventually(lambda: _named("tlbomb") == [], message="every process of the bomb is gone")
    finally:
        done.set()
        counter.join(10)
    print(f"fork bomb: at most {peak[0]} of its processes seen at once (limit 32)")
    assert call_text(loader, "steady") == "steady"
    subprocess.run(
        [sys.executable, "-c", "pass"], check=True, timeout=30
    )  # the host can still start processes


def test_a_fork_loop_under_the_default_limit_loses_its_worker_and_the_loader_serves_on(
    tree_dir: Path, make_loader: MakeLoader
) -> None:
    loader = make_loader(tree_dir, config=replace(PROCESS, call_timeout=60.0))  # max_processes: the default
    cap = 1024  # four times the default: reached only if nothing stops the loop
    peak = [0]
    done = threading.Event()

    def count() -> None:
        while not done.wait(0.01):
            peak[0] = max(peak[0], len(_named("tlforkloop")))

    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    try:
        result = loader.registry.invoke("fork_loop", {"cap": cap})
        assert result["status"] == "error", _text(result)
        assert "started more than 256 processes" in _text(result), _text(result)
        eventually(lambda: _named("tlforkloop") == [], message="every process of the loop is gone")
    finally:
        done.set()
        counter.join(10)
    print(f"fork loop: at most {peak[0]} of its processes seen at once (default limit 256)")
    assert 0 < peak[0] < cap
    assert call_text(loader, "steady") == "steady"


def test_the_process_limit_is_256_by_default_and_0_turns_it_off() -> None:
    assert LoaderConfig().workers.max_processes == 256
    assert WorkerOptions(max_processes=0).max_processes is None
    with pytest.raises(ValueError, match="max_processes"):
        WorkerOptions(max_processes=-1)


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
    tree_dir: Path, make_loader: MakeLoader
) -> None:
    """An OOM killer's view: idle spares and a busy worker of another tool are SIGKILLed every 0.2 s."""
    write(tree_dir / "victim.py", VICTIM)
    loader = make_loader(tree_dir, config=PROCESS)
    backend = loader._backend
    assert isinstance(backend, ProcessBackend)
    pool = backend.pool
    marker = tree_dir.parent / "victim-pid"
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


# -- 8. a default memory cap per worker --------------------------------------------------------------
def test_workers_have_a_data_limit_by_default_that_refuses_a_large_allocation(
    tree_dir: Path, make_loader: MakeLoader
) -> None:
    assert LoaderConfig().workers.max_memory_mb == 2048
    loader = make_loader(tree_dir, config=PROCESS)
    assert json.loads(call_text(loader, "data_limit")) == 2048 * 1024 * 1024
    result = loader.registry.invoke("allocate", {"megabytes": 3072})
    assert result["status"] == "error" and "MemoryError" in _text(result)
    assert call_text(loader, "allocate", {"megabytes": 16}) == f"allocated {16 * 1024 * 1024}"


def test_a_memory_cap_of_0_means_none(tree_dir: Path, make_loader: MakeLoader) -> None:
    loader = make_loader(tree_dir, config=replace(PROCESS, workers=WorkerOptions(max_memory_mb=0)))
    assert json.loads(call_text(loader, "data_limit")) == resource.RLIM_INFINITY


# -- 9. the host's secrets ---------------------------------------------------------------------------
SNOOP = '''
import os, pathlib
from loader import tool

@tool
def snoop() -> str:
    """Everything this worker can find out about its host's environment and command line."""
    parent = os.getppid()  # the template workers are forked from; the loader is its parent
    try:
        above = pathlib.Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1]
    except OSError:
        above = str(parent)
    found = [repr(dict(os.environ))]
    for host in {parent, int(above)}:
        for what in ("environ", "cmdline"):
            try:
                found.append(pathlib.Path(f"/proc/{host}/{what}").read_bytes().decode(errors="replace"))
            except OSError as exc:
                found.append(f"{what}: {exc.strerror}")
    for text in list(found):  # follow every path found to a file, as an attacker would
        for word in text.replace("\\0", " ").replace("=", " ").split():
            if word.startswith("/") and os.path.isfile(word):
                try:
                    found.append(pathlib.Path(word).read_text(errors="replace"))
                except OSError:
                    pass
    return "\\n".join(found)
'''


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_process_mode_tool_cannot_read_the_hosts_environment_or_auth_token(
    tools_dir: Path, tmp_path: Path, anyio_backend: str
) -> None:
    write(tools_dir / "snoop.py", SNOOP)
    token_file = tmp_path / "secrets" / "tokens.txt"
    write(token_file, "the-bearer-token-of-this-server\n")
    env = server_env(DEMO_API_KEY="the-api-key-of-the-host")
    with serve_http(
        tools_dir,
        tmp_path,
        "--isolation",
        "process",
        "--auth-token-file",
        str(token_file),
        env=env,
        wait_ready=True,
    ) as served:
        headers = {"Authorization": "Bearer the-bearer-token-of-this-server"}
        transport = streamable_http_client(served.url, http_client=create_mcp_http_client(headers=headers))
        async with Client(transport, mode="legacy") as client:
            result = await client.call_tool("snoop", {})
    block = result.content[0]
    assert isinstance(block, types.TextContent) and result.is_error is not True
    seen = block.text
    assert "PATH" in seen  # the tool ran and read its own environment
    assert "the-api-key-of-the-host" not in seen
    assert str(token_file) not in seen
    assert "the-bearer-token-of-this-server" not in seen


def test_the_sweep_for_strays_leaves_a_starting_spare_alone(
    tree_dir: Path, make_loader: MakeLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sandbox mode sweeps idle workers for what their last call or build left running; a spare that has
    not said hello yet ran nothing of a tool, and its start's own processes (libseccomp is looked up
    with ``ldconfig -p``) are not strays. Killing them failed the spare's sandbox ("libseccomp is
    missing"): the spare exited with status 1, and a loaded docs run printed "idle worker died"."""
    from loader.isolation import backend as backend_module

    monkeypatch.setattr(backend_module, "_STRAYS_INTERVAL", 0.0005)
    sandbox = replace(FAST, isolation="sandbox", workers=WorkerOptions(spare_workers=4))
    for _ in range(3):
        loader = make_loader(tree_dir, config=sandbox, watch=False)
        backend = loader._backend
        assert isinstance(backend, ProcessBackend)
        pool = backend.pool
        with pool._lock:
            starting = list(pool._idle)

        eventually(partial(_started, pool, starting), message="the spares started")
        assert [w.exit_description() for w in starting if not w.alive()] == []
        assert call_text(loader, "steady") == "steady" and pool.replaced == 0
        loader.close()


def _started(pool: WorkerPool, workers: list[WorkerProcess]) -> bool:
    with pool._lock:
        return all(w.ready_now() or not w.alive() for w in workers)
