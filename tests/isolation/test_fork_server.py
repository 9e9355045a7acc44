"""Workers forked from a warm template (``loader.isolation.fork_server``): what each gets of its own, what
none of them can reach, and that losing the template costs a worker start, not a call.

Real worker processes on the real filesystem; the template is found the way a user would (``/proc``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Literal

import pytest
from support import FAST, call_text, child_pids, eventually, pid_namespace, worker_template, write

from loader.isolation import WorkerOptions
from loader.reload.loader import ToolLoader

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="the template is a Linux feature")

WHO = """
import json, os, socket, tempfile
from loader import tool

@tool
def who_{n}() -> str:
    '''This worker's process, its parent, its folders and what its descriptors are.'''
    fds = {{}}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{{fd}}")
            if fds[fd].startswith("socket:"):
                with socket.socket(fileno=os.dup(int(fd))) as held:
                    fds[fd] += " " + socket.SocketKind(held.type).name
        except OSError:
            pass
    return json.dumps({{
        "pid": os.getpid(),
        "parent": os.getppid(),
        "pidns": os.stat("/proc/self/ns/pid").st_ino,
        "tmp": tempfile.gettempdir(),
        "home": os.environ.get("HOME"),
        "cwd": os.getcwd(),
        "fds": fds,
    }})
"""


def _stat_parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def _command_line(pid: int) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return handle.read()


@pytest.fixture
def two_files(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    for n in (1, 2):
        write(folder / f"who_{n}.py", WHO.format(n=n))
    return folder


@pytest.fixture(params=["process", "sandbox"])
def loader(request: pytest.FixtureRequest, two_files: Path) -> Iterator[ToolLoader]:
    loader = ToolLoader([two_files], config=FAST, isolation=request.param)
    try:
        loader.scan()
        yield loader
    finally:
        loader.close()


def _who(loader: ToolLoader, n: int) -> dict[str, object]:
    answer: dict[str, object] = json.loads(call_text(loader, f"who_{n}"))
    return answer


def test_workers_are_forked_from_one_template_below_the_loader(
    loader: ToolLoader, request: pytest.FixtureRequest
) -> None:
    first, second = _who(loader, 1), _who(loader, 2)
    template = worker_template()
    assert _stat_parent(template) == os.getpid()
    assert b"fork_server import serve" in _command_line(template)
    workers = child_pids()
    assert len(workers) >= 3 and {_stat_parent(pid) for pid in workers} == {template}  # two, and the import's
    if request.node.callspec.params["loader"] == "sandbox":
        # each in a PID namespace of its own, where it is the second process and its parent has no pid
        assert first["pidns"] != second["pidns"] and pid_namespace() not in (first["pidns"], second["pidns"])
        assert first["pid"] == second["pid"] == 2 and first["parent"] == second["parent"] == 0
    else:
        assert first["pid"] != second["pid"] and {first["pid"], second["pid"]} <= workers  # a worker per file
        assert first["parent"] == second["parent"] == template


def test_no_worker_holds_a_socket_or_another_workers_descriptor(loader: ToolLoader) -> None:
    """The template's socket (a ``SOCK_SEQPACKET``) would let a tool fork workers of its own or reap other
    files' workers; a worker's only sockets are its event loop's wake-up pair (``SOCK_STREAM``)."""
    for n in (1, 2):
        fds = _who(loader, n)["fds"]
        assert isinstance(fds, dict)
        sockets = [target for target in fds.values() if "socket" in str(target)]
        assert len(sockets) <= 2 and all(str(s).endswith("SOCK_STREAM") for s in sockets), fds
        assert len(fds) <= 10, fds  # 0-3, the protocol's two ends, the loop's pair, the listing itself


def test_a_sandboxed_worker_gets_its_own_scratch_folder_as_tmp_and_home(two_files: Path) -> None:
    loader = ToolLoader([two_files], config=FAST, isolation="sandbox")
    try:
        loader.scan()
        first, second = _who(loader, 1), _who(loader, 2)
    finally:
        loader.close()
    assert first["tmp"] == first["home"] and second["tmp"] == second["home"]
    assert first["tmp"] != second["tmp"]
    assert str(first["tmp"]).startswith(("/tmp/", os.environ.get("TMPDIR", "/tmp")))
    assert first["cwd"] == str(two_files.parent)


def test_a_killed_template_takes_its_workers_and_the_next_call_starts_a_new_one(loader: ToolLoader) -> None:
    _who(loader, 1)
    template, workers = worker_template(), child_pids()
    assert workers
    os.kill(template, signal.SIGKILL)
    # All must be dead, not only out of the template's children: a worker the dying template has not yet
    # signalled still answers, and with the old template as its parent.
    eventually(lambda: all(map(_dead, [template, *workers])), message="the template and its workers died")
    eventually(lambda: _answer(loader, 1), timeout=60, message="a call answered again")
    _who(loader, 2)
    assert worker_template() != template
    assert child_pids() and not child_pids() & workers
    assert {_stat_parent(pid) for pid in child_pids()} == {worker_template()}


def _dead(pid: object) -> bool:
    """Exited: gone from ``/proc`` or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _answer(loader: ToolLoader, n: int) -> dict[str, object] | None:
    result = loader.registry.invoke(f"who_{n}", {})
    if result["status"] != "success":
        return None
    answer: dict[str, object] = json.loads(result["content"][0]["text"])
    return answer


def test_closing_the_loader_ends_the_template_and_every_worker(two_files: Path) -> None:
    loader = ToolLoader([two_files], config=FAST, isolation="process")
    try:
        loader.scan()
        template = _who(loader, 1)["parent"]
    finally:
        loader.close()
    assert isinstance(template, int)
    eventually(lambda: not os.path.exists(f"/proc/{template}"), message="the template ended")
    assert child_pids() == set()


def test_a_command_prefix_starts_each_worker_as_its_own_interpreter(two_files: Path) -> None:
    wrapper = ("env",)
    loader = ToolLoader(
        [two_files], config=replace(FAST, isolation="process", workers=WorkerOptions(command_prefix=wrapper))
    )
    try:
        loader.scan()
        assert _who(loader, 1)["parent"] == os.getpid()
    finally:
        loader.close()


def test_a_dead_worker_is_reaped_once_whichever_threads_wait_for_it(two_files: Path) -> None:
    """A call's thread that saw its worker die and the loader closing wait for the same worker at once:
    it is reaped once and its pidfd closed once (a second close hit a descriptor number that may
    already name another file: ``serve`` ended with ``OSError: Bad file descriptor``)."""
    from concurrent.futures import ThreadPoolExecutor

    from loader.isolation.backend import ProcessBackend
    from loader.isolation.fork_server import ForkedProcess

    loader = ToolLoader([two_files], config=FAST, isolation="process")
    try:
        loader.scan()
        _who(loader, 1)
        _who(loader, 2)
        backend = loader._backend
        assert isinstance(backend, ProcessBackend)
        processes = [w.process for w in backend.pool.workers() if isinstance(w.process, ForkedProcess)]
        assert processes
        for process in processes:
            os.kill(process.pid, signal.SIGKILL)
        with ThreadPoolExecutor(8) as threads:
            for process in processes:
                waits = [threads.submit(process.wait, 5) for _ in range(8)]
                polls = [threads.submit(process.poll) for _ in range(8)]
                assert {wait.result() for wait in waits} == {-signal.SIGKILL}
                assert {poll.result() for poll in polls} <= {None, -signal.SIGKILL}
    finally:
        loader.close()


MODULES = """
import json, sys
from loader import tool

@tool
def modules() -> str:
    '''The modules this worker holds.'''
    return json.dumps(sorted(sys.modules))
"""

OURS = ("loader", "docstring_parser", "frontmatter", "yaml", "landlockpy", "pyseccomp")
"""What a worker imports of its own before a tool's first line: the loader, its discovery plugins' parsers
and the sandbox's two libraries."""


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\nfrom loader.isolation import worker_main\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("isolation", ["process", "sandbox"])
def test_the_template_imports_everything_of_the_loaders_a_worker_holds_at_its_first_call(
    tmp_path: Path, isolation: Literal["process", "sandbox"]
) -> None:
    """``worker_main.warm_up`` (which the template runs once before it forks) imports every module of the
    loader's own, its plugins' and the sandbox's that a worker holds when its first tool runs, so no forked
    worker imports them again (20 files' first calls in process mode: 3.4-3.7 s of CPU before, 2.1-2.6 s
    after). A module added to the worker's path and not to ``warm_up`` is named here."""
    write(tmp_path / "tools" / "modules.py", MODULES)
    loader = ToolLoader([tmp_path / "tools"], config=FAST, isolation=isolation)
    try:
        loader.scan()
        held = set(json.loads(call_text(loader, "modules")))
    finally:
        loader.close()
    warmed, cold = _modules_after("worker_main.warm_up()"), _modules_after("")
    assert sorted(name for name in held - warmed if name.split(".")[0] in OURS) == []
    assert {"docstring_parser", "loader.plugins.function_tools"} <= warmed - cold
