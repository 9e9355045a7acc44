"""Helpers shared by the tests (imported as ``support``; ``tests/`` is on pytest's pythonpath)."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import queue
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
import warm_cli

from loader.reload.loader import LoaderConfig, ToolLoader
from loader.reload.watcher import WatchTimings

if TYPE_CHECKING:
    import mcp_types as types

__all__ = [
    "CI_ENV",
    "EVENTS_ONLY",
    "FAST",
    "MakeLoader",
    "call_text",
    "cli_env",
    "eventually",
    "function_tool_source",
    "gone_soon",
    "host_pids",
    "orphan_outlives_its_worker",
    "pid_namespace",
    "require",
    "require_module",
    "run_cli",
    "running",
    "spinning",
    "sysv_segment",
    "worker_template",
    "write",
    "write_conflict_and_broken",
]

FAST = LoaderConfig(
    timings=WatchTimings(settle=0.004, debounce=0.05, disappear_grace=0.05),
    empty_grace=0.3,
    import_timeout=5.0,
    rescan_interval=2.0,
    supervise_interval=0.1,
    entry_point_plugins=False,
)


EVENTS_ONLY = replace(FAST, rescan_interval=0, import_timeout=60.0)
"""``FAST`` without the periodic rescan: a change is seen through file events or not at all.

Its import deadline is generous: without the rescan nothing looks again at a file whose
import overran its deadline, and on a loaded machine a process-mode import can wait
seconds for its worker to run the first line (CI saw a file stay stuck for 30 s). A test
of deadlines sets its own."""

MakeLoader = Callable[..., ToolLoader]
"""The ``make_loader`` fixture: ``make_loader(*paths, watch=True, config=FAST, **ToolLoader kwargs)``."""


CI_ENV = "TOOL_LOADER_CI"
"""Set to 1 by ``.ci/run``: a test whose tool is missing then fails instead of skipping."""


def require(present: bool, missing: str, install: str, *, module_level: bool = False) -> None:
    """Skip the test when what it needs is missing here; in CI (``TOOL_LOADER_CI=1``) fail it instead.

    ``missing`` says what is absent, ``install`` how to get it: CI must run these
    tests, so a missing tool there is a broken CI machine, not a reason to skip.
    """
    if present:
        return
    if os.environ.get(CI_ENV) == "1":
        _fail(f"{missing}, and CI ({CI_ENV}=1) runs this test: {install}")
    pytest.skip(f"{missing} ({install})", allow_module_level=module_level)


AS_NOBODY = ("--reuid=65534", "--regid=65534", "--clear-groups")
"""``setpriv`` options that run a command as the unprivileged user ``nobody``."""


def interpreter_for_nobody(setpriv: str, env: dict[str, str]) -> str | None:
    """An interpreter of this Python version that the unprivileged user can run with this ``sys.path``
    (a pyenv or venv interpreter under ``/root`` is not; the system's usually is)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.path.exists(candidate):
            continue
        check = "import subprocess, sys, loader, mcp; subprocess.run([sys.executable, '-c', ''], check=True)"
        command = [setpriv, *AS_NOBODY, candidate, "-c", check]
        if subprocess.run(command, capture_output=True, env=env, cwd="/", timeout=60).returncode == 0:
            return candidate
    return None


def require_module(name: str, install: str) -> ModuleType:
    """``import name`` for a test module, under ``require``'s rules (called at module level)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        require(False, f"the Python package {name!r} is not installed", install, module_level=True)
        raise


def _fail(message: str) -> NoReturn:
    pytest.fail(message, pytrace=False)


def eventually(predicate: Callable[[], Any], timeout: float = 15.0, message: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s: {message or predicate}")
        time.sleep(0.005)


def write(path: Path, source: str) -> Path:
    """Write a tool file the ordinary way (open, write, close)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def write_conflict_and_broken(tools: Path) -> None:
    """Fill ``tools`` with two problems the commands must report.

    ``a.py`` and ``b.py`` both define ``dup`` (``a.py`` keeps it) and ``broken.py``
    has a syntax error on line 3.
    """
    write(
        tools / "a.py",
        'from loader import tool\n\n@tool\ndef dup() -> str:\n    """First."""\n    return "a"\n',
    )
    write(
        tools / "b.py",
        'from loader import tool\n\n@tool\ndef dup() -> str:\n    """Second."""\n    return "b"\n',
    )
    write(tools / "broken.py", "x = 1\n\ndef broken(:\n    pass\n")


def function_tool_source(name: str, body: str = "return 'v1'", params: str = "") -> str:
    """A file defining one ``@tool`` function."""
    return (
        "from loader import tool\n\n"
        "@tool\n"
        f"def {name}({params}) -> str:\n"
        f'    """Tool {name}."""\n'
        f"    {body}\n"
    )


def call_text(loader: ToolLoader, name: str, input: dict[str, Any] | None = None) -> str:
    """Invoke a tool through the registry and return its first text block."""
    result = loader.registry.invoke(name, input or {})
    content = result["content"][0]
    return str(content.get("text", content.get("json")))


def text_of(result: types.CallToolResult) -> str:
    """The text of an MCP call result's first block (which must be text)."""
    import mcp_types as types  # imported here: only the MCP tests need the SDK

    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


def cli_env() -> dict[str, str]:
    """The environment for running the real command: plain, wide output and bytecode writing on."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "FORCE_COLOR")}
    env.update(COLUMNS="200", NO_COLOR="1", TERM="dumb")
    return env


def run_cli(
    *args: str, cwd: Path, merge: bool = False, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m loader ARGS`` from ``cwd`` (never the repository root, whose ``loader/`` is not installed).

    Its standard input is empty and no terminal; ``merge`` sends stderr into stdout; ``env`` adds
    variables to the environment. The command runs
    in a fork of a warm interpreter where that shows the same (``warm_cli``), else as a new process.
    """
    full_env = {**cli_env(), **(env or {})}
    warm = warm_cli.run_warm(list(args), cwd=cwd, env=full_env, merge=merge, timeout=timeout)
    if warm is not None:
        return warm
    return subprocess.run(
        [sys.executable, "-m", "loader", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        text=True,
        timeout=timeout,
    )


def child_pids() -> set[int]:
    """Live (not zombie) worker processes of this test process's loaders: its children, where a worker
    template (``loader.isolation.fork_server``, which runs no tool) stands for the workers it forked."""
    parents: dict[int, set[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), set()).add(int(entry))
    found: set[int] = set()
    for child in parents.get(os.getpid(), set()) - warm_cli.zygote_pids():
        try:
            with open(f"/proc/{child}/cmdline", "rb") as handle:
                template = b"fork_server import serve" in handle.read()
        except OSError:
            continue
        below = parents.get(child, set()) if template else {child}
        found |= {pid for pid in below if _pids_in_namespaces(pid)[-1:] != [1]}
    return found  # (a sandboxed worker's PID namespace has an init beside it, pid 1 there: it runs no tool)


def worker_template() -> int:
    """The worker template of this process's loader (its child, which runs no tool)."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        if parent == os.getpid() and b"fork_server import serve" in command:
            return int(entry)
    raise AssertionError("no worker template below this process")


def _pids_in_namespaces(pid: int) -> list[int]:
    """``pid``'s pids from this process's PID namespace down to its own (``NSpid`` of proc(5))."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            return [int(n) for line in handle if line.startswith("NSpid:") for n in line.split()[1:]]
    except (OSError, ValueError):
        return []


def pid_namespace() -> int:
    """This process's PID namespace, as a tool reports its own (``os.stat("/proc/self/ns/pid").st_ino``)."""
    return os.stat("/proc/self/ns/pid").st_ino


def host_pids(namespace: int, pids: Iterable[int]) -> set[int]:
    """The processes a tool named by its own pids, in PID namespace ``namespace`` (see ``pid_namespace``),
    as this process sees them: a sandboxed worker has a PID namespace of its own."""
    wanted = set(pids)
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}/ns/pid").st_ino != namespace:
                continue
        except OSError:
            continue
        if set(_pids_in_namespaces(int(entry))[-1:]) & wanted:
            found.add(int(entry))
    return found


LINE_DEADLINE = 30.0
"""How long ``LineReader.wait_for`` waits for a line (generous: CI machines are shared)."""


class LineReader:
    """Collects a pipe's lines on a thread so the test can wait for them with a deadline."""

    def __init__(self, stream: Iterable[str] | None) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        thread.start()

    def _pump(self, stream: Iterable[str] | None) -> None:
        assert stream is not None  # a process started with stdout=PIPE
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + LINE_DEADLINE
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"no line matching {pattern!r} within {LINE_DEADLINE} s; got {self.seen}"
                )
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            self.seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found


@contextlib.contextmanager
def sysv_segment(data: bytes) -> Iterator[int]:
    """A SysV shared memory segment of this process (mode 0600) holding ``data``; its id, removed after."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    segment = libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if segment < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    try:
        address = libc.shmat(segment, None, 0)
        ctypes.memmove(address, data, len(data))
        libc.shmdt(ctypes.c_void_p(address))
        yield segment
    finally:
        libc.shmctl(segment, 0, None)  # IPC_RMID


# -- processes a sandboxed tool leaves behind ------------------------------------------------------
def running(pids: list[int]) -> list[int]:
    """Those of ``pids`` that still run (a zombie waits to be reaped; it runs nothing)."""
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def spinning(answer: str) -> list[int]:
    """Those a ``spinners`` answer names (its PID namespace, then the pids there) that still run, as this
    process sees them."""
    namespace, *pids = (int(word) for word in answer.split())
    return running(sorted(host_pids(namespace, pids)))


def gone_soon(answer: str, seconds: float = 10.0) -> list[int]:
    """What of a ``spinners`` answer still runs once it has ended, or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while spinning(answer) and time.monotonic() < deadline:
        time.sleep(0.05)
    return spinning(answer)


def orphans(marker: str) -> list[int]:
    """Running ``sleep 600 <marker>`` processes, anywhere on this machine."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if handle.read() == b"\0".join([b"sleep", b"600", marker.encode(), b""]):
                    found.append(int(entry))
        except (OSError, ValueError):
            pass
    return running(found)


def orphan_outlives_its_worker(loader: ToolLoader) -> bool:
    """Whether a process forked just before its worker died still runs 10 s later (then it is killed)."""
    marker = f"0.{time.time_ns()}"  # a duration sleep accepts, found by its command line
    answer = call_text(loader, "attack", {"kind": "orphan", "target": marker})
    assert "Error" in answer, answer  # the worker died
    deadline = time.monotonic() + 10
    while orphans(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = orphans(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return bool(left)
