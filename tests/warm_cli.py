"""Command-line runs of the tests, each run by ``loader.console.cli.main`` in a fork of a warm interpreter.

Starting ``python -m loader`` costs about 0.8 s of CPU before the command does anything (the
interpreter, then ``loader.console.cli`` and the built-in plugins every command that loads tools
imports), and ``serve`` about 1.4 s more for the MCP SDK; the suite runs a few hundred commands on
two cores. Each pytest process therefore keeps a warm interpreter that has imported those modules
(one for ``serve``, which has imported ``loader.mcp.server`` too, and one for every other command)
and forks it per command, the way ``loader.isolation.fork_server`` forks call workers. The child
is a real process: it takes the command's argv, environment, working folder and standard streams,
runs ``main()`` and exits as ``python -m loader`` does (``sys.exit``, so ``atexit`` handlers run and
threads are joined); its exit status comes back as a subprocess's would.

Two ways in:
- ``run_warm``: a finished command's status and output, as ``subprocess.run`` gives them (``run_cli``);
- ``command``: an argv for ``subprocess.Popen`` or an MCP client, for a command that runs while the
  test talks to it (``serve``). It starts ``warm_shim.py``, a small interpreter with no imports of
  ours, that hands its standard streams to the warm fork, passes on the signals it gets (SIGTERM,
  SIGINT, SIGHUP, ...) and exits as the fork did; if the shim is killed, the fork is killed too.

What a fork cannot reproduce runs as a fresh ``python -m loader`` instead (``fresh_reason``): a
change to a ``PYTHON*`` or ``OTEL_*`` variable (read when the interpreter starts or when a module is
imported), and every command when ``TOOL_LOADER_TEST_FRESH_CLI=1`` is set. Tests that need the
server's own process (its pid, its children, its limits, a terminal) start ``python -m loader``
themselves, so the entry points stay tested as users start them (``test_warm_cli.py`` compares
both).
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
import time
from pathlib import Path

__all__ = ["base_env", "command", "console_script", "cpu_seconds", "fresh_reason", "run_warm", "zygote_pids"]

FRESH_VARIABLE = "TOOL_LOADER_TEST_FRESH_CLI"
SHIM = Path(__file__).with_name("warm_shim.py")
STATUS = struct.Struct("id")
"""What the warm interpreter sends when a fork has ended: its exit status (negative: the signal) and CPU seconds."""

# The warm interpreter: import what `python -m loader` imports before `main()`, the built-in
# plugins (imported by every command that loads tools) and the modules named after the socket's
# path, then fork once per request, any number at a time. A fork whose client goes away (its
# connection closes) before the fork ends is killed. The interpreter ends when its standard input
# closes (the pytest process that started it ended). A fork leaves the loop by `sys.exit`, so it
# ends as the interpreter of `python -m loader` does.
_ZYGOTE = r"""
import importlib, json, os, selectors, signal, socket, struct, sys
import loader.console.cli as cli
for _name in [*importlib.import_module("loader.plugins").BUILTIN_PLUGINS, *sys.argv[2:]]:
    importlib.import_module(_name)
STATUS = struct.Struct("id")
server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
server.bind(sys.argv[1])
server.listen(16)
wake_read, wake_write = os.pipe()
os.set_blocking(wake_read, False)
os.set_blocking(wake_write, False)
signal.signal(signal.SIGCHLD, lambda *_: None)
signal.set_wakeup_fd(wake_write)
watch = selectors.DefaultSelector()
watch.register(server, selectors.EVENT_READ, "accept")
watch.register(sys.stdin, selectors.EVENT_READ, "stdin")
watch.register(wake_read, selectors.EVENT_READ, "wake")
forks = {}
spent = 0.0
sys.stdout.write("ready\n")
sys.stdout.flush()


def reap():
    global spent
    while forks:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = forks.pop(pid)
        cpu = usage.ru_utime + usage.ru_stime
        spent += cpu
        with open(sys.argv[1] + ".cpu", "w") as total:
            total.write(repr(spent))
        try:
            watch.unregister(connection)
        except KeyError:
            pass
        try:
            connection.send(STATUS.pack(os.waitstatus_to_exitcode(status), cpu))
        except OSError:
            pass
        connection.close()


def run(connection, data, fds):
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    watch.close()
    server.close()
    connection.close()
    for other in forks.values():
        other.close()
    os.close(wake_read)
    os.close(wake_write)
    request = json.loads(data)
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [cli.__file__, *request["args"]]
    sys.path[0] = request["cwd"]  # `python -m` puts its working folder first
    sys.exit(cli.main())


while True:
    for key, _ in watch.select():
        if key.data == "stdin":
            sys.exit(0)
        elif key.data == "wake":
            while True:
                try:
                    if not os.read(wake_read, 4096):
                        break
                except BlockingIOError:
                    break
            reap()
        elif key.data == "accept":
            connection, _ = server.accept()
            try:
                data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            except OSError:
                data, fds = b"", []
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                connection.close()
                continue
            pid = os.fork()
            if pid == 0:
                run(connection, data, fds)
            for fd in fds:
                os.close(fd)
            connection.send(struct.pack("i", pid))
            forks[pid] = connection
            watch.register(connection, selectors.EVENT_READ, pid)
            reap()  # a fork that ended before it was registered
        else:  # a client went away before its fork ended
            watch.unregister(key.fileobj)
            try:
                os.kill(key.data, 9)
            except ProcessLookupError:
                pass
"""

_IMPORT_TIME_PREFIXES = ("PYTHON", "OTEL_")
_PRELOADS = {"serve": ("loader.mcp.server",)}


class _Zygote:
    """One warm interpreter of a pytest process, started on first use."""

    def __init__(self, preload: tuple[str, ...]) -> None:
        self.preload = preload
        self.process: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}
        self.path = ""
        self.failed = False

    def start(self, env: dict[str, str]) -> bool:
        if self.process is not None and self.process.poll() is None:
            return True
        if self.failed:
            return False
        folder = tempfile.mkdtemp(prefix="warm-cli-")
        self.path = os.path.join(folder, "socket")
        self.env = dict(env)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE, self.path, *self.preload],
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

    def cpu(self) -> float:
        try:
            return float(Path(self.path + ".cpu").read_text())
        except (OSError, ValueError):
            return 0.0

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


_zygotes = {name: _Zygote(preload) for name, preload in {"": (), **_PRELOADS}.items()}


def _zygote_for(args: list[str]) -> _Zygote:
    """The warm interpreter for ``args``: by the command's name, the first word that is no option."""
    name = next((word for word in args if not word.startswith("-")), "")
    return _zygotes.get(name if name in _PRELOADS else "", _zygotes[""])


def base_env() -> dict[str, str]:
    """This process's environment minus ``PYTHONDONTWRITEBYTECODE`` (users' machines write bytecode):
    what a warm interpreter starts with, and ``serving.server_env``'s base."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def fresh_reason(env: dict[str, str], args: list[str] | None = None) -> str | None:
    """Why a command with ``env`` must start a fresh interpreter (None: a warm fork shows the same)."""
    if os.environ.get(FRESH_VARIABLE) == "1":
        return f"{FRESH_VARIABLE}=1"
    zygote = _zygote_for(args or [])
    known = zygote.env if zygote.process is not None else base_env()
    for name in set(env) | set(known):
        if name.startswith(_IMPORT_TIME_PREFIXES) and env.get(name) != known.get(name):
            return f"{name} differs from the warm interpreter's"
    return None


def _ready(args: list[str], env: dict[str, str]) -> _Zygote | None:
    """The started warm interpreter for ``args``, or None if a command with ``env`` must run fresh."""
    if fresh_reason(env, args) is not None:
        return None
    zygote = _zygote_for(args)
    return zygote if zygote.start(base_env()) else None


def command(args: list[str], env: dict[str, str]) -> list[str]:
    """An argv that runs ``tool-loader ARGS`` with ``env``: through the shim into a warm fork, or fresh."""
    zygote = _ready(args, env)
    if zygote is None:
        return [sys.executable, "-m", "loader", *args]
    return [sys.executable, "-I", "-S", str(SHIM), zygote.path, *args]


def console_script(folder: Path) -> Path | None:
    """A ``tool-loader`` script written into ``folder``, for shell commands a test runs (the docs pages'
    blocks): it runs each command in a warm fork, through the shim, with the shell's environment and
    working folder. A ``serve`` or a shell that sets an ``OTEL_`` variable starts ``python -m loader``
    (a fork has imported the tracing code already). None when every command must run fresh.

    The fork has imported the installed ``loader``: a ``PYTHONPATH`` the shell sets does not change it.
    """
    zygote = _ready([], base_env())
    if zygote is None:
        return None
    fresh = f'exec "{sys.executable}" -m loader "$@"'
    script = folder / "tool-loader"
    script.write_text(
        "#!/bin/sh\n"
        f"if env | grep -q '^OTEL_'; then {fresh}; fi\n"
        'for word in "$@"; do\n'
        '    case "$word" in\n'
        "        -*) ;;\n"
        f"        serve) {fresh} ;;\n"
        "        *) break ;;\n"
        "    esac\n"
        "done\n"
        f'exec "{sys.executable}" -I -S "{SHIM}" "{zygote.path}" "$@"\n'
    )
    script.chmod(0o755)
    return script


def run_warm(
    args: list[str], *, cwd: Path, env: dict[str, str], merge: bool, timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """``args`` run to the end by a fork of the warm interpreter, or None if they must run fresh."""
    zygote = _ready(args, env)
    if zygote is None:
        return None
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe() if not merge else (None, out_write)
    request = json.dumps({"args": args, "cwd": str(Path(cwd).resolve()), "env": env}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as connection:
        connection.connect(zygote.path)
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
                    connection.recv(STATUS.size)
                    for fd in outputs:
                        os.close(fd)
                    raise subprocess.TimeoutExpired(
                        [sys.executable, "-m", "loader", *args], timeout, _text(outputs[out_read])
                    )
                for key, _ in events:
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        outputs[key.fd] += chunk
                    else:
                        readable.unregister(key.fd)
                        open_fds.discard(key.fd)
        returncode = STATUS.unpack(connection.recv(STATUS.size))[0]
    for fd in outputs:
        os.close(fd)
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "loader", *args],
        returncode,
        _text(outputs[out_read]),
        None if err_read is None else _text(outputs[err_read]),
    )


def cpu_seconds() -> float:
    """The CPU seconds of every fork this process's warm interpreters have reaped (a fork is their
    child, so ``getrusage(RUSAGE_CHILDREN)`` here does not count it): for ``pytest --cpu-time``."""
    return sum(zygote.cpu() for zygote in _zygotes.values())


def zygote_pids() -> set[int]:
    """The warm interpreters' process ids (children of this process that run no tool)."""
    return {z.process.pid for z in _zygotes.values() if z.process is not None}


def _text(data: bytes | bytearray) -> str:
    """Bytes as ``subprocess.run(text=True)`` gives them: decoded, with universal newlines."""
    return bytes(data).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
