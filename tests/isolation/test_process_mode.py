"""Process isolation: a tool's crash, hang or greed harms only its worker process.

Real worker processes, the real filesystem and the real watchdog observer.
Each fault is first shown to hurt the host in thread mode where that can be
shown without killing the test run (the crash reproductions run the real
command in a child process).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from support import FAST, call_text, child_pids, eventually, function_tool_source, run_cli, write

from loader.isolation import WorkerOptions
from loader.isolation.messages import WorkerSettings
from loader.reload.loader import ToolLoader
from loader.status import FileState, FileStatus
from loader.types import ToolResult

PROCESS = replace(FAST, isolation="process")

FAULTS = """
import ctypes, os, pathlib, re, subprocess, sys, time
from loader import tool

@tool
def fault(how: str, size_mb: int = 0, marker: str = "") -> str:
    '''Misbehave on purpose (touching ``marker`` first, if given).'''
    if marker:
        pathlib.Path(marker).touch()
    if how == "exit":
        os._exit(3)
    if how == "fork_then_exit":  # the forked child keeps the worker's end of the pipe open
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        os._exit(3)
    if how == "segfault":
        ctypes.string_at(0)
    if how == "system_exit":
        raise SystemExit(4)
    if how == "keyboard_interrupt":
        raise KeyboardInterrupt
    if how == "loop":
        while True:
            pass
    if how == "child_then_loop":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pathlib.Path(marker).write_text(str(child.pid))
        while True:
            pass
    if how == "regex":
        re.match(r"(a+)+$", "a" * 40 + "b")
    if how == "memory":
        block = bytearray(size_mb * 1024 * 1024)
        return f"allocated {len(block)}"
    return "fine"
"""


def _text(result: ToolResult) -> str:
    return str(result["content"][0].get("text"))


@pytest.fixture
def faults_dir(tools_dir: Path) -> Path:
    write(tools_dir / "faults.py", FAULTS)
    write(tools_dir / "steady.py", function_tool_source("steady", "return 'steady'"))
    return tools_dir


# -- crashes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["exit", "segfault"])
def test_a_crash_in_thread_mode_takes_the_whole_command_down(faults_dir: Path, how: str) -> None:
    """The fault, reproduced: in-process, one call kills the host (no result, no error)."""
    done = run_cli("call", "fault", f"how={how}", "--dir", str(faults_dir), cwd=faults_dir.parent)
    assert done.returncode not in (0, 1)
    assert "Error" not in done.stdout


@pytest.mark.parametrize(("how", "words"), [("exit", "exited with status 3"), ("segfault", "SIGSEGV")])
def test_a_crash_in_process_mode_is_an_error_result_of_that_call(
    faults_dir: Path, how: str, words: str
) -> None:
    done = run_cli(
        "call",
        "fault",
        f"how={how}",
        "--dir",
        str(faults_dir),
        "--isolation",
        "process",
        cwd=faults_dir.parent,
    )
    assert done.returncode == 1
    assert "crashed its worker process" in done.stdout and words in done.stdout


@pytest.mark.parametrize("how", ["exit", "segfault"])
def test_crashed_worker_is_replaced_and_every_tool_keeps_answering(
    faults_dir: Path, make_loader: Callable[..., ToolLoader], how: str
) -> None:
    ld = make_loader(faults_dir, config=PROCESS)
    assert call_text(ld, "steady") == "steady"
    before = child_pids()
    result = ld.registry.invoke("fault", {"how": how})
    assert result["status"] == "error" and "crashed its worker process" in _text(result)
    assert call_text(ld, "steady") == "steady"
    assert call_text(ld, "fault", {"how": "fine"}) == "fine"
    eventually(lambda: len(before - child_pids()) == 1, message="exactly the crashed worker is gone")


def test_a_worker_that_dies_while_a_forked_child_holds_its_pipe_is_a_crash_not_a_timeout(
    faults_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """The pipe stays open after the worker exits: the wait for its answer looks at the process too."""
    ld = make_loader(faults_dir, config=replace(PROCESS, call_timeout=60.0))
    started = time.monotonic()
    result = ld.registry.invoke("fault", {"how": "fork_then_exit"})
    assert result["status"] == "error"
    assert "crashed its worker process" in _text(result) and "exited with status 3" in _text(result)
    assert time.monotonic() - started < 30, "the call waited for its timeout"
    assert call_text(ld, "fault", {"how": "fine"}) == "fine"


@pytest.mark.parametrize(
    ("how", "expected"), [("system_exit", "SystemExit"), ("keyboard_interrupt", "KeyboardInterrupt")]
)
def test_system_exit_and_keyboard_interrupt_are_error_results_and_the_worker_stays(
    faults_dir: Path, make_loader: Callable[..., ToolLoader], how: str, expected: str
) -> None:
    ld = make_loader(faults_dir, config=PROCESS)
    assert call_text(ld, "fault", {"how": "fine"}) == "fine"
    workers = child_pids()
    result = ld.registry.invoke("fault", {"how": how})
    assert result["status"] == "error" and _text(result).startswith(f"Error: {expected}")
    assert call_text(ld, "steady") == "steady"
    assert workers <= child_pids()


# -- hangs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["loop", "regex"])
def test_a_stuck_call_times_out_while_other_calls_are_answered(
    faults_dir: Path, make_loader: Callable[..., ToolLoader], how: str
) -> None:
    """An endless loop, or C code holding the GIL (a catastrophic regex), in one call."""
    ld = make_loader(faults_dir, config=replace(PROCESS, call_timeout=8.0))
    assert call_text(ld, "steady") == "steady"
    marker = faults_dir.parent / f"{how}-started"
    stuck: list[ToolResult] = []
    caller = threading.Thread(
        target=lambda: stuck.append(ld.registry.invoke("fault", {"how": how, "marker": str(marker)}))
    )
    caller.start()
    eventually(marker.exists, message="the stuck call is running in its worker")
    assert call_text(ld, "steady") == "steady"
    assert stuck == []  # answered while the other call was still stuck
    caller.join(30)
    assert stuck[0]["status"] == "error" and re.search(r"did not finish within (the )?8 s", _text(stuck[0]))
    assert call_text(ld, "fault", {"how": "fine"}) == "fine"


def test_a_gil_holding_import_does_not_stop_calls_and_is_stopped_at_its_deadline(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    marker = tools_dir.parent / "regex-started"
    write(tools_dir / "steady.py", function_tool_source("steady", "return 'steady'"))
    config = replace(PROCESS, import_timeout=8.0)
    ld = make_loader(tools_dir, config=config)
    assert call_text(ld, "steady") == "steady"
    threads = threading.active_count()
    slow = write(
        tools_dir / "slow.py",
        f"import pathlib, re\npathlib.Path({str(marker)!r}).touch()\nre.match(r'(a+)+$', 'a' * 40 + 'b')\n",
    )
    eventually(lambda: marker.exists(), message="the import is holding the GIL in the import worker")
    assert call_text(ld, "steady") == "steady"
    assert ld.file_status(slow) is None  # answered while the import was still running
    status = eventually(lambda: (s := ld.file_status(slow)) and s.state is FileState.STUCK and s, timeout=30)
    assert status.error is not None and status.error.line == 3
    write(tools_dir / "later.py", function_tool_source("later", "return 'later'"))
    eventually(lambda: "later" in ld.registry and call_text(ld, "later") == "later")
    assert threading.active_count() <= threads


def test_stuck_imports_kill_their_worker_instead_of_leaking_threads(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "steady.py", function_tool_source("steady", "return 'steady'"))
    ld = make_loader(tools_dir, config=replace(PROCESS, import_timeout=2.0))  # steady.py must beat it
    assert call_text(ld, "steady") == "steady"
    threads = threading.active_count()
    stuck = tools_dir / "stuck.py"

    def stuck_in_round(round_: int) -> bool:
        s = ld.file_status(stuck)
        return (
            s is not None
            and s.state is FileState.STUCK
            and s.content_hash is None
            and ld.wait_idle(10)
            and f"ROUND = {round_}" in stuck.read_text()
        )

    for round_ in range(3):
        stuck.write_text(f"ROUND = {round_}\nwhile True:\n    pass\n")
        eventually(functools.partial(stuck_in_round, round_))
    status = ld.file_status(stuck)
    assert status is not None and status.error is not None and status.error.line in (2, 3)
    assert threading.active_count() <= threads
    assert len(child_pids()) <= 4  # the import worker, a spare, a warm call worker (+ one starting)
    assert call_text(ld, "steady") == "steady"


# -- imports that crash --------------------------------------------------------------------------
def test_a_crash_at_import_keeps_the_last_good_version_serving(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    path = write(tools_dir / "brittle.py", function_tool_source("brittle", "return 'good'"))
    ld = make_loader(tools_dir, config=PROCESS)
    assert call_text(ld, "brittle") == "good"
    path.write_text("import ctypes\nctypes.string_at(0)\n")
    status = eventually(lambda: (s := ld.file_status(path)) and s.state is FileState.FAILED and s)
    assert status.error is not None and status.error.exc_type == "WorkerCrashed"
    assert "SIGSEGV" in status.error.message
    assert status.tools == ("brittle",)
    assert call_text(ld, "brittle") == "good"
    path.write_text(function_tool_source("brittle", "return 'mended'"))
    eventually(lambda: call_text(ld, "brittle") == "mended")


def test_a_helper_that_breaks_after_a_crash_still_serves_its_last_good_version(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """After the import worker is replaced, dependents still re-import against the helper's last good module."""
    helper = write(tools_dir / "helper.py", "WORD = 'good'\n")
    user = write(
        tools_dir / "user.py", "import helper\n" + function_tool_source("user", "return helper.WORD")
    )
    ld = make_loader(tools_dir, config=PROCESS)
    assert call_text(ld, "user") == "good"
    write(tools_dir / "crasher.py", "import os\nos._exit(1)\n")
    eventually(lambda: (s := ld.file_status(tools_dir / "crasher.py")) and s.state is FileState.FAILED)
    helper.write_text("WORD = 'broken\n")
    eventually(lambda: (s := ld.file_status(helper)) and s.state is FileState.FAILED)
    before = ld.file_status(user)
    assert before is not None
    user.write_text(user.read_text() + "\n# touched\n")
    status = eventually(lambda: (s := ld.file_status(user)) and s.content_hash != before.content_hash and s)
    assert status.state is FileState.LOADED  # re-imported against the helper's last good module
    assert call_text(ld, "user") == "good"


# -- memory --------------------------------------------------------------------------------------
def test_memory_exhaustion_is_an_error_result_and_other_tools_keep_answering(
    faults_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    ld = make_loader(faults_dir, config=replace(PROCESS, workers=WorkerOptions(max_memory_mb=512)))
    assert call_text(ld, "fault", {"how": "memory", "size_mb": 16}) == f"allocated {16 * 1024 * 1024}"
    result = ld.registry.invoke("fault", {"how": "memory", "size_mb": 4096})
    assert result["status"] == "error" and "MemoryError" in _text(result)
    assert call_text(ld, "steady") == "steady"
    assert call_text(ld, "fault", {"how": "memory", "size_mb": 16}) == f"allocated {16 * 1024 * 1024}"


# -- environment and working directory -------------------------------------------------------------
ENV_TOOL = """
import json, os
from loader import tool

@tool
def where() -> str:
    '''Report the worker's environment names and working directory.'''
    return json.dumps({"env": sorted(os.environ), "cwd": os.getcwd()})
"""


def test_workers_get_an_environment_allowlist_and_run_in_the_folders_parent(
    tools_dir: Path, make_loader: Callable[..., ToolLoader], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-tools")
    monkeypatch.setenv("GITHUB_TOKEN", "not-for-tools")
    monkeypatch.setenv("TOOL_TEST_SETTING", "wanted")
    monkeypatch.setenv("LC_TOOL_TEST", "C")
    write(tools_dir / "where.py", ENV_TOOL)
    ld = make_loader(tools_dir, config=replace(PROCESS, workers=WorkerOptions(worker_env=("TOOL_TEST_*",))))
    seen = json.loads(call_text(ld, "where"))
    assert "AWS_SECRET_ACCESS_KEY" not in seen["env"] and "GITHUB_TOKEN" not in seen["env"]
    assert {"PATH", "TOOL_TEST_SETTING", "LC_TOOL_TEST"} <= set(seen["env"])
    assert Path(seen["cwd"]) == tools_dir.parent


def test_the_cli_refuses_worker_options_without_process_isolation(tools_dir: Path) -> None:
    write(tools_dir / "steady.py", function_tool_source("steady", "return 'steady'"))
    done = run_cli("list", str(tools_dir), "--max-memory-mb", "256", cwd=tools_dir.parent)
    assert done.returncode == 2 and "--isolation process" in done.stderr
    done = run_cli(
        "call",
        "steady",
        "--dir",
        str(tools_dir),
        "--isolation",
        "process",
        "--worker-env",
        "A,B_*",
        cwd=tools_dir.parent,
    )
    assert done.returncode == 0 and done.stdout.strip() == "steady"


NOISY = '''
import sys
from loader import tool

print("noise at import")

@tool
def noisy() -> str:
    """Print, then answer."""
    print("noise at call")
    print("noise on stderr", file=sys.stderr)
    return "answer"
'''


def test_a_tools_print_never_reaches_the_commands_stdout(tools_dir: Path) -> None:
    """stdout is the MCP stdio channel under ``serve``: worker output goes to stderr."""
    write(tools_dir / "noisy.py", NOISY)
    done = run_cli("call", "noisy", "--dir", str(tools_dir), "--isolation", "process", cwd=tools_dir.parent)
    assert done.returncode == 0
    assert done.stdout.strip() == "answer"
    assert "noise at import" in done.stderr and "noise at call" in done.stderr


def test_workers_run_under_a_command_prefix(tools_dir: Path, make_loader: Callable[..., ToolLoader]) -> None:
    """Where a sandbox goes: ``env`` stands in for one (it sets a variable we can see)."""
    write(tools_dir / "where.py", ENV_TOOL)
    config = replace(PROCESS, workers=WorkerOptions(command_prefix=("/usr/bin/env", "WRAPPED_BY_PREFIX=1")))
    ld = make_loader(tools_dir, config=config)
    assert "WRAPPED_BY_PREFIX" in json.loads(call_text(ld, "where"))["env"]


def test_workers_outlive_the_thread_that_started_them(tools_dir: Path) -> None:
    """Linux ties a child's parent-death signal to the thread that forked it, not to the process.

    Calls arrive on short-lived threads (``run_sync``, MCP's worker threads,
    ``ProxyTool.stream``), and a call may start the pool's next spare.
    """
    from loader.isolation.options import worker_environment
    from loader.isolation.pool import WorkerPool
    from loader.isolation.process import WorkerProcess

    settings = WorkerSettings(
        tag="ptest",
        roots=[str(tools_dir)],
        builtin_plugins=True,
        entry_point_plugins=False,
        max_memory_mb=None,
        subreaper=False,
        max_result_bytes=None,
    )
    pool = WorkerPool(
        lambda: WorkerProcess(settings, worker_environment(()), tools_dir.parent),
        max_in_use=2,
        spares=1,
        start_timeout=30,
    )
    try:

        def use_once() -> None:
            worker = pool.acquire(30)  # ready: its parent-death signal is set by now
            pool.release(worker, healthy=True)

        for _ in range(2):
            helper = threading.Thread(target=use_once)
            helper.start()
            helper.join(60)
        worker = pool.acquire(30)
        assert worker.request({"op": "ping"}, 30) == {"ok": True}
        pool.release(worker, healthy=True)
        assert pool.replaced == 0
    finally:
        pool.close()


def test_a_stuck_call_is_stopped_with_the_processes_it_started(
    faults_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    ld = make_loader(faults_dir, config=replace(PROCESS, call_timeout=3.0))
    marker = faults_dir.parent / "child-pid"
    result = ld.registry.invoke("fault", {"how": "child_then_loop", "marker": str(marker)})
    assert result["status"] == "error" and re.search(r"did not finish within (the )?3 s", _text(result))
    child = int(marker.read_text())

    def child_gone() -> bool:
        try:
            with open(f"/proc/{child}/stat") as handle:
                return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True

    eventually(child_gone, message="the tool's own child process was stopped with its worker")


def test_a_worker_that_still_owes_a_prepare_answer_is_settled_before_anyone_else_uses_it(
    tools_dir: Path,
) -> None:
    """A prepare request is sent without waiting; an import or a cleanup that takes the worker next
    must read that answer first, or every later answer on the pipe is one request late (an import
    failed with another file's error, and its tools vanished)."""
    from loader.isolation.importers import ImportWorkers
    from loader.isolation.options import worker_environment
    from loader.isolation.pool import WorkerPool
    from loader.isolation.process import WorkerProcess

    settings = WorkerSettings(
        tag="ptest",
        roots=[str(tools_dir)],
        builtin_plugins=True,
        entry_point_plugins=False,
        max_memory_mb=None,
        subreaper=False,
        max_result_bytes=None,
    )
    pool = WorkerPool(
        lambda: WorkerProcess(settings, worker_environment(()), tools_dir.parent),
        max_in_use=2,
        spares=1,
        start_timeout=30,
    )

    def owing() -> WorkerProcess:
        """An idle pool worker that owes the answer to a prepare that fails (an unknown version)."""
        worker = pool.acquire(30)
        worker.send({"op": "prepare", "build": [], "serial": 424242})
        worker.prepared.append((424242, {}))
        pool.release(worker, healthy=True)
        return worker

    try:
        first = owing()
        pool.tell(lambda w: w is first, {"op": "ping"})
        assert first.prepared == []
        second = owing()
        taken = ImportWorkers(pool, 1).acquire()
        assert taken is second and taken.prepared == []
        assert taken.request({"op": "ping"}, 30) == {"ok": True}
    finally:
        pool.close()


LOSES_ITS_WORKER = {
    "crash": ("import os\nos._exit(1)\n", FileState.FAILED, "WorkerCrashed"),
    "deadline": ("import time\ntime.sleep(60)\n", FileState.STUCK, "ImportTimeout"),
}
"""Files whose import loses the import worker: a crash, or an import past its deadline (as load makes
a slow import): the source, the file's state after it, and the error it names."""


@pytest.mark.parametrize("how", list(LOSES_ITS_WORKER))
def test_the_import_after_a_lost_import_worker_reads_its_own_answer_not_one_a_worker_still_owed(
    how: str, tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """A new tool is built ahead of its first call by an idle worker whose answer nobody waits for.
    When the import worker is lost (a crash, or an import past its deadline as under load), the
    next import takes a worker from the pool, that one most likely: it must read the owed answer
    first, or it reads it as its own and every later answer on the pipe comes one request late (a
    sound file fails with another's error, its tools vanish)."""
    loser, lost_state, lost_as = LOSES_ITS_WORKER[how]
    loader = make_loader(tools_dir, config=replace(PROCESS, import_timeout=2.0))
    made: list[str] = []

    def load(name: str, source: str, state: FileState) -> FileStatus:
        path = write(tools_dir / f"{name}.py", source)

        def done() -> FileStatus | None:
            record = loader.file_status(path)
            if record is None or (record.state is FileState.LOADED and not record.tools):
                return None  # not imported yet
            assert record.state is state, f"{name}: {record.error}"
            return record

        found: FileStatus = eventually(done, timeout=60, message=f"{name} imported")
        return found

    for round_ in range(2):
        names = [f"r{round_}_{what}" for what in ("called", "prepared", "after_loss")]
        load(names[0], function_tool_source(names[0], body=f"return {names[0]!r}"), FileState.LOADED)
        assert call_text(loader, names[0]) == names[0]  # a call worker, back in the pool, idle and ready
        load(names[1], function_tool_source(names[1], body=f"return {names[1]!r}"), FileState.LOADED)
        lost = load(f"r{round_}_{how}", loser, lost_state)
        assert lost.error is not None and lost.error.exc_type == lost_as, lost.error
        load(names[2], function_tool_source(names[2], body=f"return {names[2]!r}"), FileState.LOADED)
        made += names
    for name in made:
        assert call_text(loader, name) == name
