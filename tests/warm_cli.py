"""``run_cli``'s commands, each run by ``loader.console.cli.main`` in a fork of a warm interpreter.

Starting ``python -m loader`` costs about 0.8 s of CPU before the command does anything (the
interpreter, then ``loader.console.cli`` and the built-in plugins every command that loads tools
imports), and the suite runs a few hundred of them on two cores. Each pytest process therefore
keeps one interpreter that has imported those modules and nothing else, and forks it for each
command (the way ``loader.isolation.fork_server`` forks call workers). The child is a real
process: it takes the command's argv, environment, working folder and standard streams, runs
``main()`` and then exits like ``python -m loader`` does (``sys.exit``, so ``atexit`` handlers run and
threads are joined); its exit status and output come back as ``subprocess.run`` would give them.

What a fork cannot reproduce runs as a fresh ``python -m loader`` instead (``fresh_reason``): a
change to a ``PYTHON*`` or ``OTEL_*`` variable (read when the interpreter starts or when a module is
imported), two commands at once from one test, and every command when ``TOOL_LOADER_TEST_FRESH_CLI=1``
is set. The tests that start ``tool-loader`` themselves (``serve``, ``watch``, signals, terminals)
always start a fresh interpreter, so the entry points stay tested as users start them.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["cpu_seconds", "fresh_reason", "run_warm", "zygote_pid"]

FRESH_VARIABLE = "TOOL_LOADER_TEST_FRESH_CLI"

# The warm interpreter: import what `python -m loader` imports before `main()`, and the built-in
# plugins (imported by every command that loads tools), then fork once per request. It serves one
# command at a time and ends when its standard input closes (the pytest process that started it
# ended). A child leaves the loop by `sys.exit`, so it ends as the interpreter of `python -m loader`.
_ZYGOTE = r"""
import importlib, json, os, selectors, socket, struct, sys
import loader.console.cli as cli
for _name in importlib.import_module("loader.plugins").BUILTIN_PLUGINS:
    importlib.import_module(_name)
server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
server.bind(sys.argv[1])
server.listen()
watch = selectors.DefaultSelector()
watch.register(server, selectors.EVENT_READ)
watch.register(sys.stdin, selectors.EVENT_READ)
sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    if any(key.fileobj is sys.stdin for key, _ in watch.select()):
        break
    connection, _ = server.accept()
    data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    if len(fds) != 3:
        connection.close()
        continue
    pid = os.fork()
    if pid == 0:
        watch.close()
        server.close()
        connection.close()
        request = json.loads(data)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [cli.__file__, *request["args"]]
        sys.path[0] = request["cwd"]  # `python -m` puts its working folder first
        sys.exit(cli.main())
    for fd in fds:
        os.close(fd)
    connection.send(struct.pack("i", pid))
    _, status, usage = os.wait4(pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    connection.send(struct.pack("id", os.waitstatus_to_exitcode(status), cpu))
    connection.close()
"""

_IMPORT_TIME_PREFIXES = ("PYTHON", "OTEL_")


class _Zygote:
    """One warm interpreter per pytest process, started on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}
        self.path = ""
        self.failed = False
        self.cpu = 0.0

    def start(self, env: dict[str, str]) -> bool:
        if self.process is not None and self.process.poll() is None:
            return True
        if self.failed:
            return False
        folder = tempfile.mkdtemp(prefix="warm-cli-")
        self.path = os.path.join(folder, "socket")
        self.env = dict(env)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE, self.path],
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline() != b"ready\n":
            self.failed = True  # every command then runs fresh; the fresh run shows the fault
            return False
        atexit.register(self.stop)
        return True

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


_zygote = _Zygote()


def fresh_reason(env: dict[str, str]) -> str | None:
    """Why a command with ``env`` must start a fresh interpreter (None: a warm fork shows the same)."""
    if os.environ.get(FRESH_VARIABLE) == "1":
        return f"{FRESH_VARIABLE}=1"
    if _zygote.process is None:
        return None
    for name in set(env) | set(_zygote.env):
        if name.startswith(_IMPORT_TIME_PREFIXES) and env.get(name) != _zygote.env.get(name):
            return f"{name} differs from the warm interpreter's"
    return None


def run_warm(
    args: list[str], *, cwd: Path, env: dict[str, str], merge: bool, timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """``args`` run by a fork of the warm interpreter, or None if it cannot take them now."""
    if fresh_reason(env) is not None or not _zygote.lock.acquire(blocking=False):
        return None
    try:
        if not _zygote.start(env) or fresh_reason(env) is not None:
            return None
        return _run(args, cwd=cwd, env=env, merge=merge, timeout=timeout)
    finally:
        _zygote.lock.release()


def _run(
    args: list[str], *, cwd: Path, env: dict[str, str], merge: bool, timeout: float
) -> subprocess.CompletedProcess[str]:
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe() if not merge else (None, out_write)
    request = json.dumps({"args": args, "cwd": str(Path(cwd).resolve()), "env": env}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as connection:
        connection.connect(_zygote.path)
        stdin = os.open(os.devnull, os.O_RDONLY)
        socket.send_fds(connection, [request], [stdin, out_write, err_write])
        os.close(stdin)
        os.close(out_write)
        if err_read is not None:
            os.close(err_write)
        connection.settimeout(timeout)
        pid = struct.unpack("i", connection.recv(4))[0]
        outputs = {out_read: bytearray(), **({err_read: bytearray()} if err_read is not None else {})}
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as readable:
            for fd in outputs:
                readable.register(fd, selectors.EVENT_READ)
            open_fds = set(outputs)
            while open_fds:
                left = deadline - time.monotonic()
                events = readable.select(max(left, 0))
                if not events and left <= 0:
                    os.kill(pid, 9)
                    _ended(connection)
                    for fd in outputs:
                        os.close(fd)
                    command = [sys.executable, "-m", "loader", *args]
                    raise subprocess.TimeoutExpired(command, timeout, _text(outputs[out_read]))
                for key, _ in events:
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        outputs[key.fd] += chunk
                    else:
                        readable.unregister(key.fd)
                        open_fds.discard(key.fd)
        returncode = _ended(connection)
    for fd in outputs:
        os.close(fd)
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "loader", *args],
        returncode,
        _text(outputs[out_read]),
        None if err_read is None else _text(outputs[err_read]),
    )


def _ended(connection: socket.socket) -> int:
    """The command's exit status, once the warm interpreter has reaped it; its CPU counts in ``cpu_seconds``."""
    returncode, cpu = struct.unpack("id", connection.recv(struct.calcsize("id")))
    _zygote.cpu += cpu
    return int(returncode)


def cpu_seconds() -> float:
    """The CPU seconds of every command this process has run warm (a fork is the warm interpreter's
    child, so ``getrusage(RUSAGE_CHILDREN)`` here does not count it): for ``pytest --cpu-time``."""
    return _zygote.cpu


def zygote_pid() -> int | None:
    """The warm interpreter's process id, if this process has started one (it is a child of this one)."""
    return None if _zygote.process is None else _zygote.process.pid


def _text(data: bytes | bytearray) -> str:
    """Bytes as ``subprocess.run(text=True)`` gives them: decoded, with universal newlines."""
    return bytes(data).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
