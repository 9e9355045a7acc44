"""The escape suite: what a tool in ``isolation="sandbox"`` tries, and that each attempt is refused.

Every attack is a real one that succeeds unsandboxed (``test_each_attack_succeeds_in_process_mode``
shows it for the ones process isolation does not already stop): a secret
read outside the tool folder and in the home folder, a write outside, a TCP
connect to a socket this test listens on, a bind, a connect to a named unix
socket, a fork loop, a 4 GB allocation, ``ptrace`` and ``process_vm_readv`` on
the loader's process, a signal to it, its ``/proc/<pid>/environ``, a mount and
a new user namespace; its rlimits, priority and CPUs changed, keystrokes typed
into the terminal (``TIOCSTI``, at a real pty), ``personality``, SysV IPC,
processes left spinning after the call, the working folder's modules, and a
flood on the stack pipe. A shell may be started (``exec`` is allowed) but is
confined like the tool. After each attack the loader is alive and serving a
legitimate tool that reads its data file, uses ``tempfile`` and imports
``json``, ``decimal`` and ``sqlite3`` lazily. A thread that a ``.pth`` file
started before the worker confined itself carries the seccomp filter too.

The suite runs as the user running pytest (root in CI) and, through
``setpriv``, as an unprivileged user.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from interpreters import interpreter_running
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import (
    AS_NOBODY,
    FAST,
    call_text,
    child_pids,
    cli_env,
    gone_soon,
    interpreter_for_nobody,
    orphan_outlives_its_worker,
    run_cli,
    running,
    spinning,
    sysv_segment,
    text_of,
    worker_template,
)

from loader.isolation import WorkerOptions
from loader.isolation.sandbox import probe
from loader.isolation.tree import ProcessTable
from loader.reload.loader import ToolLoader

pytestmark = pytest.mark.skipif(
    not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
)

ATTACKS = '''
import ctypes, errno, os, signal, socket, subprocess
from loader import tool

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


def _errno(result: int, what: str) -> str:
    if result == -1:
        return f"DENIED {what}: {os.strerror(ctypes.get_errno())}"
    return f"ALLOWED {what} ({result})"


def _read(target: str) -> str:
    with open(target, "rb") as handle:
        return f"ALLOWED read {len(handle.read())} bytes"


def _write(target: str) -> str:
    with open(target, "w") as handle:
        handle.write("escaped")
    return "ALLOWED write"


def _connect(target: str) -> str:
    with socket.create_connection(("127.0.0.1", int(target)), timeout=5):
        return "ALLOWED connect"


def _bind(target: str) -> str:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        return f"ALLOWED bind {server.getsockname()[1]}"


def _unix(target: str) -> str:
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(target)
        return "ALLOWED unix connect"


def _udp(target: str) -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.sendto(b"x", ("127.0.0.1", int(target)))
        return "ALLOWED udp"


def _forks(target: str) -> str:
    children = []
    for _ in range(int(target)):
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        children.append(pid)
    return f"ALLOWED {len(children)} processes"


def _alloc(target: str) -> str:
    block = bytearray(int(target) * 1024 * 1024)
    block[:: 4096] = b"x" * len(block[:: 4096])
    return f"ALLOWED {len(block)} bytes"


def _ptrace(target: str) -> str:
    return _errno(_libc.ptrace(16, _pid(target), None, None), "ptrace attach")  # PTRACE_ATTACH


def _vm_read(target: str) -> str:
    buffer = ctypes.create_string_buffer(8)
    local = _IoVec(ctypes.cast(buffer, ctypes.c_void_p), 8)
    remote = _IoVec(ctypes.c_void_p(0x400000), 8)
    return _errno(
        _libc.syscall(310, int(target), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0),
        "process_vm_readv",
    )


def _signal(target: str) -> str:
    os.kill(_pid(target), signal.SIGCONT)
    return "ALLOWED signal"


def _shell(target: str) -> str:
    done = subprocess.run(["/bin/sh", "-c", target], capture_output=True, text=True, timeout=20)
    return f"shell exit {done.returncode}: {done.stdout.strip()} {done.stderr.strip()}"


def _mount(target: str) -> str:
    return _errno(_libc.mount(b"none", target.encode(), b"tmpfs", 0, None), "mount")


def _unshare(target: str) -> str:
    return _errno(_libc.unshare(0x10000000), "unshare(CLONE_NEWUSER)")


def _pid(target: str) -> int:
    """A pid; ``parent``: the worker's parent, the template every worker is forked from (it outlives them
    all: were it harmed, every tool's worker would be). In a PID namespace of its own the worker's parent
    has no pid (``getppid()`` is 0, which would name the caller's own group): the attack cannot name it."""
    if target != "parent":
        return int(target)
    if not (parent := os.getppid()):
        raise OSError(errno.ESRCH, "the parent is outside this PID namespace: it has no pid here")
    return parent


def _exists(target: str) -> str:
    """Whether process ``target`` can be seen to exist: ``stat`` of its ``/proc`` entry, a null signal."""
    found = []
    try:
        os.stat(f"/proc/{_pid(target)}")
        found.append("ALLOWED stat")
    except OSError as exc:
        found.append(f"DENIED stat: {exc.strerror}")
    try:
        os.kill(_pid(target), 0)
        found.append("ALLOWED kill 0")
    except OSError as exc:  # EPERM says it exists as plainly as a success
        found.append(("DENIED" if exc.errno == errno.ESRCH else "ALLOWED") + f" kill 0: {exc.strerror}")
    return "; ".join(found)


def _capabilities(target: str) -> str:
    """The capabilities this process holds: none, as an ordinary user, even in its own user namespace."""
    with open("/proc/self/status") as handle:
        held = {k: v.strip() for k, v in (line.split(":", 1) for line in handle) if k.startswith("Cap")}
    return ("ALLOWED" if any(int(v, 16) for v in held.values()) else "DENIED") + f" capabilities: {held}"


def _orphan(target: str) -> str:
    """Start ``sleep 600 <target>`` in a session of its own, and make the worker die before the loader can
    count it (the program is running once the pipe, closed on exec, reads end of file)."""
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        os.close(read_end)
        os.setsid()
        os.execv("/bin/sleep", ["sleep", "600", target])
    os.close(write_end)
    os.read(read_end, 1)
    os._exit(9)


def _prlimit(target: str) -> str:
    import resource

    current = resource.prlimit(_pid(target), resource.RLIMIT_NOFILE)
    resource.prlimit(_pid(target), resource.RLIMIT_NOFILE, current)  # the same value: the harm is the reach
    return "ALLOWED prlimit"


def _renice(target: str) -> str:
    os.setpriority(os.PRIO_PROCESS, _pid(target), os.getpriority(os.PRIO_PROCESS, _pid(target)))
    return "ALLOWED setpriority"


def _affinity(target: str) -> str:
    os.sched_setaffinity(_pid(target), os.sched_getaffinity(_pid(target)))
    return "ALLOWED sched_setaffinity"


def _sched_param(target: str) -> str:
    os.sched_setparam(_pid(target), os.sched_getparam(_pid(target)))
    return "ALLOWED sched_setparam"


def _tiocsti(target: str) -> str:
    import fcntl, termios

    for char in target.encode():
        fcntl.ioctl(2, termios.TIOCSTI, bytes([char]))
    return "ALLOWED TIOCSTI"


def _tty_ioctl(target: str) -> str:
    """``TIOCSCTTY`` (steal the terminal as root) or ``TIOCVHANGUP`` (hang it up) on stderr."""
    import fcntl

    fcntl.ioctl(2, int(target, 0), 1)
    return f"ALLOWED ioctl {target}"


def _personality(target: str) -> str:
    return _errno(_libc.personality(int(target, 0)), "personality")


def _shm_read(target: str) -> str:
    _libc.shmat.restype = ctypes.c_void_p
    address = _libc.shmat(int(target), None, 0o10000)  # SHM_RDONLY
    if address in (None, ctypes.c_void_p(-1).value):
        return f"DENIED shmat: {os.strerror(ctypes.get_errno())}"
    return "ALLOWED shmat: " + ctypes.string_at(address, 10).decode(errors="replace")


def _sysv_new(target: str) -> str:
    made = []
    for name, args in (("shmget", (0, 4096, 0o1600)), ("msgget", (0, 0o1600)), ("semget", (0, 1, 0o1600))):
        ipc_id = getattr(_libc, name)(*args)  # IPC_PRIVATE, IPC_CREAT | 0600
        made.append(_errno(ipc_id, name))
        if ipc_id >= 0:
            getattr(_libc, name[:3] + "ctl")(ipc_id, 0, None)  # IPC_RMID: leave nothing behind
    return "; ".join(made)


def _spinners(target: str) -> str:
    """Leave ``target`` processes spinning and return their PID namespace and pids (see ``support.host_pids``);
    one of them a daemon in its own session."""
    pids = []
    read_end, write_end = os.pipe()
    for n in range(int(target)):
        pid = os.fork()
        if pid == 0:
            if n == 0:
                os.setsid()
                daemon = os.fork()
                if daemon:
                    os.write(write_end, str(daemon).encode())
                    os._exit(0)
            while True:
                pass
        pids.append(pid)
    os.waitpid(pids[0], 0)
    pids[0] = int(os.read(read_end, 32))
    return " ".join(map(str, [os.stat("/proc/self/ns/pid").st_ino, *pids]))


def _cwd_import(target: str) -> str:
    """What of the folder the loader was started from a tool reaches: its modules, packages and files."""
    import importlib

    found = []
    for name in ("local_settings", "myproject"):
        try:
            importlib.import_module(name)
            found.append(f"ALLOWED import {name}")
        except ImportError as exc:
            found.append(f"DENIED import {name}: {exc}")
    for path in ("local_settings.py", "myproject/.env"):
        try:
            with open(os.path.join(target, path)) as handle:
                found.append(f"ALLOWED read {path}: {handle.read().strip()}")
        except OSError as exc:
            found.append(f"DENIED read {path}: {exc}")
    return "; ".join(found)


_ATTACKS = {name[1:]: function for name, function in list(globals().items()) if name.startswith("_") and callable(function) and name not in ("_errno", "_IoVec", "_pid")}


@tool
def attack(kind: str, target: str = "") -> str:
    """Try one way out of the sandbox.

    Args:
        kind: Which attack.
        target: Its target (a path, a port, a pid, a command).
    """
    try:
        return _ATTACKS[kind](target)
    except (OSError, MemoryError) as exc:
        return f"DENIED {kind}: {type(exc).__name__}: {exc}"
'''

LEGIT = '''
import tempfile
from pathlib import Path
from loader import tool


@tool
def legit(n: int) -> str:
    """Read the data file, keep a note in a temporary file, import lazily, compute.

    Args:
        n: How many numbers to add.
    """
    import decimal
    import json
    import sqlite3

    data = json.loads((Path(__file__).parent / "data.json").read_text())
    with tempfile.NamedTemporaryFile("w+") as note:
        note.write(str(data["base"]))
        note.flush()
        note.seek(0)
        base = int(note.read())
    with sqlite3.connect(":memory:") as db:
        db.execute("create table t (v integer)")
        db.executemany("insert into t values (?)", [(i,) for i in range(n)])
        (total,) = db.execute("select sum(v) from t").fetchone()
    return str(decimal.Decimal(total + base) / 2)
'''


def make_folder(root: Path) -> Path:
    """The tool folder (readable by every user, for the unprivileged run)."""
    folder = root / "tools"
    folder.mkdir()
    (folder / "attacks.py").write_text(ATTACKS)
    (folder / "legit.py").write_text(LEGIT)
    (folder / "data.json").write_text('{"base": 10}')
    for path in (root, folder, *folder.iterdir()):
        path.chmod(0o755)
    return folder


LEGIT_ANSWER = "27.5"
"""``legit(n=10)``: (0 + ... + 9 + 10) / 2."""


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="sandbox-escapes-"))
    try:
        make_folder(root)
        (root / "secret.txt").write_text("the secret")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def home_secret() -> Iterator[Path]:
    path = Path.home() / f".tool-loader-escape-secret-{os.getpid()}"
    path.write_text("home secret")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    """A TCP socket this test listens on: a connect to it succeeds unsandboxed."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


@pytest.fixture(scope="module")
def unix_listener(place: Path) -> Iterator[str]:
    path = str(place / "host.sock")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        os.chmod(path, 0o777)
        yield path


def _loader(folder: Path, isolation: str) -> ToolLoader:
    config = replace(FAST, workers=WorkerOptions(max_processes=24), call_timeout=30.0)
    loader = ToolLoader([folder], config=config, isolation=isolation)  # type: ignore[arg-type]
    loader.scan()
    return loader


@pytest.fixture(scope="module")
def sandboxed(place: Path) -> Iterator[ToolLoader]:
    loader = _loader(place / "tools", "sandbox")
    try:
        yield loader
    finally:
        loader.close()


def _attack(loader: ToolLoader, kind: str, target: object = "") -> str:
    answer = call_text(loader, "attack", {"kind": kind, "target": str(target)})
    assert call_text(loader, "legit", {"n": 10}) == LEGIT_ANSWER, f"the loader stopped serving after {kind}"
    return answer


def _denied(answer: str, kind: str) -> None:
    assert answer.startswith("DENIED") or "Error" in answer, f"{kind} was not refused: {answer}"
    assert "ALLOWED" not in answer, f"{kind} got through: {answer}"


def test_a_legitimate_tool_works(sandboxed: ToolLoader) -> None:
    assert call_text(sandboxed, "legit", {"n": 10}) == LEGIT_ANSWER


def test_a_secret_outside_the_folder_cannot_be_read(sandboxed: ToolLoader, place: Path) -> None:
    _denied(_attack(sandboxed, "read", place / "secret.txt"), "read outside")


def test_a_secret_in_the_home_folder_cannot_be_read(sandboxed: ToolLoader, home_secret: Path) -> None:
    _denied(_attack(sandboxed, "read", home_secret), "read in home")


def test_nothing_outside_the_scratch_folder_can_be_written(sandboxed: ToolLoader, place: Path) -> None:
    for target in (place / "escaped.txt", place / "tools" / "escaped.py", Path.home() / ".escaped"):
        _denied(_attack(sandboxed, "write", target), f"write to {target}")
        assert not target.exists()


def test_no_tcp_connect_out(sandboxed: ToolLoader, listener: socket.socket) -> None:
    _denied(_attack(sandboxed, "connect", listener.getsockname()[1]), "connect")


def test_no_tcp_bind(sandboxed: ToolLoader) -> None:
    _denied(_attack(sandboxed, "bind"), "bind")


def test_no_udp_and_no_named_unix_socket(sandboxed: ToolLoader, unix_listener: str) -> None:
    _denied(_attack(sandboxed, "udp", 9), "udp")
    _denied(_attack(sandboxed, "unix", unix_listener), "unix connect")


def test_a_fork_loop_loses_its_worker(sandboxed: ToolLoader) -> None:
    answer = _attack(sandboxed, "forks", 200)
    assert "ALLOWED" not in answer and "Error" in answer, answer


def test_a_4_gb_allocation_fails(sandboxed: ToolLoader) -> None:
    _denied(_attack(sandboxed, "alloc", 4096), "4 GB allocation")


def test_no_ptrace_or_memory_reads_of_the_host(sandboxed: ToolLoader) -> None:
    _denied(_attack(sandboxed, "ptrace", os.getpid()), "ptrace")
    _denied(_attack(sandboxed, "vm_read", os.getpid()), "process_vm_readv")


def test_the_host_cannot_be_signalled(sandboxed: ToolLoader) -> None:
    _denied(_attack(sandboxed, "signal", os.getpid()), "signal")


def test_the_hosts_environment_stays_closed(sandboxed: ToolLoader) -> None:
    _denied(_attack(sandboxed, "read", f"/proc/{os.getpid()}/environ"), "/proc/<host>/environ")


def test_no_mount_and_no_namespaces(sandboxed: ToolLoader, place: Path) -> None:
    _denied(_attack(sandboxed, "mount", place), "mount")
    _denied(_attack(sandboxed, "unshare"), "unshare")


def test_a_shell_may_run_but_is_confined_like_the_tool(sandboxed: ToolLoader, place: Path) -> None:
    assert _attack(sandboxed, "shell", "echo hello").startswith("shell exit 0: hello")
    answer = _attack(sandboxed, "shell", f"cat {place / 'secret.txt'}")
    assert "Permission denied" in answer and "the secret" not in answer, answer
    answer = _attack(sandboxed, "shell", f"echo x > {place / 'from-shell.txt'}")
    assert "Permission denied" in answer and not (place / "from-shell.txt").exists(), answer


def test_the_loader_cannot_be_limited_reniced_or_pinned(sandboxed: ToolLoader) -> None:
    for kind in ("prlimit", "renice", "affinity", "sched_param"):
        _denied(_attack(sandboxed, kind, os.getpid()), kind)


def test_the_worker_template_cannot_be_signalled_traced_or_limited(sandboxed: ToolLoader) -> None:
    """The worker's parent is the template every worker is forked from: were it stopped, every worker would
    die with it; were it traced, every later worker would carry the tracer's code."""
    assert _attack(sandboxed, "signal", "0") == "ALLOWED signal"  # the attack itself works, on its own group
    for kind in ("signal", "ptrace", "prlimit", "renice", "affinity", "sched_param"):
        _denied(_attack(sandboxed, kind, "parent"), f"{kind} on the template")


def test_the_worker_still_sets_its_own_limits_and_priority(sandboxed: ToolLoader) -> None:
    """Pid 0 is the caller: a tool may still lower its own limits, renice and pin itself."""
    for kind in ("prlimit", "renice", "affinity", "sched_param"):
        assert _attack(sandboxed, kind, 0).startswith("ALLOWED"), kind


def test_no_keystrokes_into_a_terminal_and_no_personality(sandboxed: ToolLoader) -> None:
    answer = _attack(
        sandboxed, "tiocsti", "x"
    )  # on its stderr: not a terminal here, so only the filter says EPERM
    assert "Operation not permitted" in answer, answer
    for request in ("0x540E", "0x5437"):  # TIOCSCTTY, TIOCVHANGUP
        answer = _attack(sandboxed, "tty_ioctl", request)
        assert "Operation not permitted" in answer, answer
    _denied(_attack(sandboxed, "personality", "0x0040000"), "personality(ADDR_NO_RANDOMIZE)")
    assert _attack(sandboxed, "personality", "0xffffffff").startswith("ALLOWED"), "querying it is allowed"


def test_no_sysv_ipc(sandboxed: ToolLoader) -> None:
    with sysv_segment(b"shm secret") as segment:
        _denied(_attack(sandboxed, "shm_read", segment), "shmat of another process's segment")
    answer = _attack(sandboxed, "sysv_new")
    assert answer.count("DENIED") == 3 and "ALLOWED" not in answer, answer


def test_a_calls_children_do_not_outlive_it(sandboxed: ToolLoader) -> None:
    answer = _attack(sandboxed, "spinners", 3)
    assert len(answer.split()) == 4, answer
    try:
        assert gone_soon(answer) == [], f"{answer}: still running after the call returned"
    finally:
        for pid in spinning(answer):
            os.kill(pid, signal.SIGKILL)


def test_a_process_forked_just_before_its_worker_dies_does_not_outlive_it(sandboxed: ToolLoader) -> None:
    """The worker exits before the loader's process watch can count the child: the kernel ends it with the
    worker's PID namespace (its init exits when the worker does)."""
    assert not orphan_outlives_its_worker(sandboxed)
    assert call_text(sandboxed, "legit", {"n": 10}) == LEGIT_ANSWER


def test_no_other_process_can_be_seen_to_exist(sandboxed: ToolLoader) -> None:
    """Not the loader, the template, init, nor a process of another tool: a sandboxed worker has a PID
    namespace of its own, with its own ``/proc``."""
    assert call_text(sandboxed, "legit", {"n": 10}) == LEGIT_ANSWER  # another file's worker runs
    others = [os.getpid(), worker_template(), *child_pids()]
    assert len(others) >= 3, others
    for pid in others:
        _denied(_attack(sandboxed, "exists", pid), f"seeing that process {pid} exists")


def make_home(home: Path) -> Path:
    """A home folder as the loader may be started from: a settings module with a key, a project package."""
    home.mkdir(exist_ok=True)
    (home / "local_settings.py").write_text('API_KEY = "sk-home-secret"\n')
    (home / "myproject").mkdir()
    (home / "myproject" / "__init__.py").write_text("")
    (home / "myproject" / ".env").write_text("TOKEN=project-secret\n")
    for path in (home, *home.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return home


def _nothing_of_home(answer: str, files_too: bool = True) -> None:
    """Neither import of the home folder's code worked; nor, in the sandbox, the reading of its files."""
    assert "ALLOWED import" not in answer, answer
    assert answer.count("DENIED import") == 2, answer
    if files_too:
        assert "secret" not in answer and answer.count("DENIED read") == 2, answer


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_the_working_folder_is_not_on_a_workers_path(place: Path, tmp_path: Path, isolation: str) -> None:
    """``python -m loader`` (the form ``mcp-config`` writes) and ``tool-loader``, started from a home folder."""
    home = make_home(tmp_path / "home")
    args = ["call", "--dir", str(place / "tools"), "--isolation", isolation, "attack"]
    args += ["kind=cwd_import", f"target={home}"]
    by_module = run_cli(*args, cwd=home)
    by_script = subprocess.run(
        [str(Path(sys.executable).parent / "tool-loader"), *args],
        cwd=home,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    for done in (by_module, by_script):
        assert "DENIED import" in done.stdout, done.stdout + done.stderr
        _nothing_of_home(done.stdout, files_too=isolation == "sandbox")


def test_the_attacks_on_other_processes_fail_through_tool_loader_call(place: Path) -> None:
    """The loader here is ``tool-loader call`` itself; the worker's parent is the template workers are forked
    from (see ``_pid``)."""
    tool_loader = str(Path(sys.executable).parent / "tool-loader")
    with sysv_segment(b"shm secret") as segment:
        for kind, target in (
            ("prlimit", "parent"),
            ("renice", "parent"),
            ("affinity", "parent"),
            ("sched_param", "parent"),
            ("personality", "0x0040000"),
            ("shm_read", str(segment)),
            ("sysv_new", ""),
            ("exists", "parent"),
            ("exists", str(os.getpid())),
        ):
            command = [tool_loader, "call", "--dir", str(place / "tools"), "--isolation", "sandbox"]
            done = subprocess.run(
                [*command, "attack", json.dumps({"kind": kind, "target": target})],
                env=cli_env(),
                cwd=place,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert "DENIED" in done.stdout and "ALLOWED" not in done.stdout, (kind, done.stdout, done.stderr)


def test_the_working_folder_is_not_on_a_workers_path_through_the_api(
    place: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An application started with ``python -m`` from its folder: that folder leads ``sys.path``."""
    home = make_home(tmp_path / "home")
    monkeypatch.chdir(home)
    monkeypatch.syspath_prepend(str(home))
    loader = _loader(place / "tools", "sandbox")
    try:
        _nothing_of_home(call_text(loader, "attack", {"kind": "cwd_import", "target": str(home)}))
    finally:
        loader.close()


FORGER = """
import json, os, threading, time

# the stack pipe: fd 3 in a worker forked from the template, named on the command line of one started alone
settings = json.loads(open("/proc/self/cmdline", "rb").read().split(b"\\0")[-2])
if not isinstance(settings, dict):
    settings = {"fault_fd": 3}
forged = b"\\x1b]0;owned\\x07\\x1b[2J" + b'File "elsewhere.py", line 7\\n' * 4000


def pump():
    while True:
        try:
            os.write(settings["fault_fd"], forged)
        except BlockingIOError:
            time.sleep(0.001)


threading.Thread(target=pump, daemon=True).start()
time.sleep(120)
"""


def test_the_stack_pipe_to_the_loader_carries_bounded_plain_text(tmp_path: Path) -> None:
    """A tool writes on the pipe its worker's stack reports use: the report stays short and printable."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "forger.py").write_text(FORGER)
    loader = ToolLoader([folder], config=replace(FAST, import_timeout=2.0), isolation="sandbox")
    try:
        loader.scan()
        status = loader.file_status(folder / "forger.py")
        assert status is not None and status.error is not None, status
        assert status.error.exc_type == "ImportTimeout", status.error
        stack = status.error.traceback
        assert len(stack) <= 64 * 1024, f"{len(stack):,} characters of stack from the tool"
        assert "\x1b" not in stack and "\x07" not in stack, stack[:200]
    finally:
        loader.close()


SPIN_AT_IMPORT = """
import os
from loader import tool

if os.fork() == 0:  # in every worker that runs this file: the import worker, and a call worker building it
    while True:
        pass


@tool
def spin_at_import() -> str:
    \"\"\"Answer.\"\"\"
    return "ok"
"""


def _strays_below_workers() -> list[int]:
    """Running processes below this process's children (the workers): what tools left behind."""
    table = ProcessTable()
    workers = child_pids()
    below = set().union(*(table.descendants(pid) for pid in workers)) if workers else set()
    return running(sorted(below))


def test_a_files_import_leaves_no_processrunning(tmp_path: Path) -> None:
    """Top-level code runs in the import worker and again where a call worker builds the file ahead."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "legit.py").write_text(LEGIT)
    (folder / "data.json").write_text('{"base": 10}')
    loader = ToolLoader([folder], config=FAST, isolation="sandbox")
    try:
        loader.scan()
        assert call_text(loader, "legit", {"n": 10}) == LEGIT_ANSWER  # a call worker is warm and idle
        (folder / "spin.py").write_text(SPIN_AT_IMPORT)
        loader.scan()
        assert "spin_at_import" in loader.registry
        deadline = time.monotonic() + 10
        while _strays_below_workers() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _strays_below_workers() == []
        assert call_text(loader, "spin_at_import") == "ok"
    finally:
        loader.close()


def test_each_attack_succeeds_in_process_mode(
    place: Path, listener: socket.socket, unix_listener: str, home_secret: Path
) -> None:
    """The attacks are real: process isolation lets through what the sandbox refuses."""
    loader = _loader(place / "tools", "process")
    try:
        assert call_text(loader, "attack", {"kind": "read", "target": str(home_secret)}).startswith("ALLOWED")
        assert (
            call_text(loader, "attack", {"kind": "unix", "target": unix_listener}) == "ALLOWED unix connect"
        )
        assert call_text(loader, "attack", {"kind": "udp", "target": "9"}) == "ALLOWED udp"
        if os.geteuid() == 0:  # an unprivileged user cannot make namespaces without a user namespace first
            assert call_text(loader, "attack", {"kind": "unshare"}).startswith("ALLOWED")
        assert call_text(loader, "attack", {"kind": "read", "target": str(place / "secret.txt")}).startswith(
            "ALLOWED"
        )
        port = str(listener.getsockname()[1])
        assert call_text(loader, "attack", {"kind": "connect", "target": port}) == "ALLOWED connect"
        assert call_text(loader, "attack", {"kind": "bind"}).startswith("ALLOWED bind")
        assert call_text(loader, "attack", {"kind": "signal", "target": str(os.getpid())}) == "ALLOWED signal"
        target = place / "written-in-process-mode.txt"
        assert call_text(loader, "attack", {"kind": "write", "target": str(target)}) == "ALLOWED write"
        target.unlink()
        for kind in ("prlimit", "renice", "affinity", "sched_param"):
            assert call_text(loader, "attack", {"kind": kind, "target": str(os.getpid())}).startswith(
                "ALLOWED"
            )
        answer = call_text(loader, "attack", {"kind": "personality", "target": "0x0040000"})
        assert answer.startswith("ALLOWED"), answer
        assert "Inappropriate ioctl" in call_text(loader, "attack", {"kind": "tiocsti", "target": "x"})
        answer = call_text(loader, "attack", {"kind": "tty_ioctl", "target": "0x5437"})
        assert "Inappropriate ioctl" in answer, answer
        with sysv_segment(b"shm secret") as segment:
            answer = call_text(loader, "attack", {"kind": "shm_read", "target": str(segment)})
            assert answer == "ALLOWED shmat: shm secret", answer
        assert call_text(loader, "attack", {"kind": "sysv_new"}).count("ALLOWED") == 3
        answer = call_text(loader, "attack", {"kind": "exists", "target": str(os.getpid())})
        assert answer == "ALLOWED stat; ALLOWED kill 0", answer
        # The process watch may read the process table while the orphan is still the worker's child (a
        # busy machine's task count moves often), and then stops it with the worker's tree: the attack
        # succeeds in process mode whenever it is not seen in that moment, as one of three tries shows
        assert any(orphan_outlives_its_worker(loader) for _ in range(3))
    finally:
        loader.close()


@pytest.mark.anyio
async def test_over_mcp_attacks_fail_and_the_legitimate_tool_works(place: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "loader", "serve", str(place / "tools"), "--isolation", "sandbox", "--no-history"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        cwd=str(make_home(tmp_path / "home")),
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            legit = await client.call_tool("legit", {"n": 10})
            assert text_of(legit) == LEGIT_ANSWER
            home = str(tmp_path / "home")
            _nothing_of_home(
                text_of(await client.call_tool("attack", {"kind": "cwd_import", "target": home}))
            )
            spinners = text_of(await client.call_tool("attack", {"kind": "spinners", "target": "3"}))
            assert gone_soon(spinners) == [], spinners
            attacks = [("read", str(place / "secret.txt")), ("bind", ""), ("unshare", "")]
            attacks += [
                ("prlimit", "parent"),
                ("renice", "parent"),
                ("personality", "0x0040000"),
                ("sysv_new", ""),
                ("exists", str(os.getpid())),
            ]
            for kind, target in attacks:
                answer = text_of(await client.call_tool("attack", {"kind": kind, "target": target}))
                _denied(answer, kind)
            assert text_of(await client.call_tool("legit", {"n": 10})) == LEGIT_ANSWER


_AT_A_TERMINAL = """
import os, pty, select, subprocess, sys
pid, master = pty.fork()  # the child's stdin, stdout and stderr are a terminal, its controlling one
if pid == 0:
    code = subprocess.call(sys.argv[1:])
    ready, _, _ = select.select([0], [], [], 2)  # what a shell would read next, after the command
    typed = os.read(0, 1000) if ready else b""
    print("TYPED:" + typed.hex(), flush=True)
    os._exit(code)
shown = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    shown += chunk
os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace"))
"""
"""Runs a command with a terminal, then reads that terminal as the shell would next."""


def _types_nothing_at_a_terminal(command: list[str], env: dict[str, str]) -> None:
    """Run ``command`` at a terminal; nothing waits there for the shell to read next, and it was refused."""
    done = subprocess.run(
        [sys.executable, "-c", _AT_A_TERMINAL, *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd="/",
    )
    assert "TYPED:" in done.stdout, done.stdout + done.stderr
    typed = bytes.fromhex(done.stdout.split("TYPED:")[1].split("\n")[0].strip())
    assert typed == b"", f"typed into the terminal: {typed!r}"
    assert "DENIED tiocsti" in done.stdout and "ALLOWED" not in done.stdout, done.stdout


_KEYSTROKES = ["attack", "kind=tiocsti", "target=echo PWNED\n"]


def test_tool_loader_call_at_a_terminal_types_nothing_into_it(place: Path) -> None:
    """``TIOCSTI`` on the worker's stderr, the user's terminal: refused, nothing typed for the shell to run."""
    tool_loader = str(Path(sys.executable).parent / "tool-loader")
    command = [tool_loader, "call", "--dir", str(place / "tools"), "--isolation", "sandbox", *_KEYSTROKES]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    _types_nothing_at_a_terminal(command, env)


def test_tool_loader_call_at_a_terminal_types_nothing_as_an_unprivileged_user(place: Path) -> None:
    setpriv, python, env = _nobody()
    command = [setpriv, *AS_NOBODY, python, "-m", "loader", "call", "--dir", str(place / "tools")]
    command += ["--isolation", "sandbox", *_KEYSTROKES]
    _types_nothing_at_a_terminal(command, env)


_UNPRIVILEGED = """
import json, os, sys, time
from dataclasses import replace
sys.path.insert(0, sys.argv[2])
from support import FAST, call_text, gone_soon, orphan_outlives_its_worker, sysv_segment
from loader.isolation import WorkerOptions
from loader.reload.loader import ToolLoader

folder, secret, port = sys.argv[1], sys.argv[3], sys.argv[4]
loader = ToolLoader([folder], config=replace(FAST, workers=WorkerOptions(max_processes=24)), isolation="sandbox")
report = loader.scan()
assert not report.failed, [str(f.error) for f in report.failed]
out = {}
me = str(os.getpid())
with sysv_segment(b"shm secret") as segment:  # this user's own segment: the kernel alone would allow it
    for kind, target in (("read", secret), ("connect", port), ("bind", ""), ("ptrace", "1"),
                         ("unshare", ""), ("write", folder + "/x.py"), ("prlimit", me), ("renice", me),
                         ("affinity", me), ("sched_param", me), ("tiocsti", "x"),
                         ("personality", "0x0040000"), ("shm_read", str(segment)), ("sysv_new", "")):
        out[kind] = call_text(loader, "attack", {"kind": kind, "target": target})
for kind in ("signal", "ptrace", "prlimit", "renice", "affinity"):  # on the template the worker was forked from
    out[kind + " on the template"] = call_text(loader, "attack", {"kind": kind, "target": "parent"})
left = gone_soon(call_text(loader, "attack", {"kind": "spinners", "target": "3"}))
out["spinners"] = f"ALLOWED {left} still running" if left else "DENIED: stopped after the call"
out["orphan"] = "ALLOWED: still running" if orphan_outlives_its_worker(loader) else "DENIED: stopped"
out["capabilities"] = call_text(loader, "attack", {"kind": "capabilities"})
for pid in (me, str(os.getppid())):  # this process (the loader) and its parent
    out["exists " + pid] = call_text(loader, "attack", {"kind": "exists", "target": pid})
out["legit"] = call_text(loader, "legit", {"n": 10})
loader.close()
print(json.dumps(out))
"""


def _nobody() -> tuple[str, str, dict[str, str]]:
    """``setpriv``, an interpreter the unprivileged user may run, and its environment; else skip."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run the suite as another user")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = "/nonexistent"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if os.path.isabs(p))
    python = interpreter_for_nobody(setpriv, env)
    if python is None:
        pytest.skip("no interpreter of this version that an unprivileged user may run")
    return setpriv, python, env


def test_the_attacks_fail_for_an_unprivileged_user_too(place: Path, listener: socket.socket) -> None:
    setpriv, python, env = _nobody()
    (place / "secret.txt").chmod(0o644)  # readable to that user without the sandbox
    tests = str(Path(__file__).resolve().parents[1])
    secret, port = str(place / "secret.txt"), str(listener.getsockname()[1])
    command = [setpriv, *AS_NOBODY, python, "-c", _UNPRIVILEGED, str(place / "tools"), tests, secret, port]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    assert answers.pop("legit") == LEGIT_ANSWER
    for kind, answer in answers.items():
        _denied(answer, kind)


# -- a thread that was there before the worker confined itself ------------------------------------
EARLY_THREAD = (
    "import threading, time; "
    "threading.Thread(target=time.sleep, args=(3600,), name='started-at-startup', daemon=True).start()"
)
"""A ``.pth`` line starting a thread, as a library may: it runs before the worker's own code."""

THREADS = '''
import json, os, threading
from loader import tool

@tool
def threads() -> str:
    """The seccomp lines of each thread of this worker, by thread name (by task id if it has none)."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    found = {}
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if line.startswith("Seccomp"))
        found[names.get(int(task), f"task {task}")] = {key: value.strip() for key, value in fields.items()}
    return json.dumps(found)
'''

_THREADS_RUN = """
import sys
from dataclasses import replace
sys.path.insert(0, sys.argv[2])
from support import FAST, call_text
from loader.isolation import WorkerOptions
from loader.reload.loader import ToolLoader
config = replace(FAST, workers=WorkerOptions(command_prefix=tuple(sys.argv[3:])))
loader = ToolLoader([sys.argv[1]], config=config, isolation="sandbox")
report = loader.scan()
assert not report.failed, [str(f.error) for f in report.failed]
print(call_text(loader, "threads"))
loader.close()
"""


@pytest.fixture
def open_place() -> Iterator[Path]:
    """A folder every user may read, holding a tool folder with the ``threads`` tool."""
    root = Path(tempfile.mkdtemp(prefix="sandbox-threads-"))
    try:
        (root / "tools").mkdir()
        (root / "tools" / "threads.py").write_text(THREADS)
        for path in (root, root / "tools", root / "tools" / "threads.py"):
            path.chmod(0o755)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("started", [True, False], ids=["started-alone", "forked"])
@pytest.mark.parametrize("unprivileged", [False, True], ids=["this-user", "nobody"])
def test_a_thread_started_before_the_worker_confines_itself_gets_the_seccomp_filter(
    unprivileged: bool, started: bool, open_place: Path
) -> None:
    """seccomp binds only the calling thread unless told to synchronise every thread (``TSYNC``).

    A worker started as its own interpreter (here under a wrapper, ``env``) runs
    the ``.pth`` file itself, so its thread is there and must be filtered; a
    worker forked from the template holds only the thread that forked (the
    ``.pth`` file's thread stays in the template, which runs no tool).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    prefix: list[str] = []
    base = sys.executable
    if unprivileged:
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or setpriv is None:
            pytest.skip("needs root and setpriv to run as another user")
        env["HOME"] = "/nonexistent"
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if os.path.isabs(p))
        found = interpreter_for_nobody(setpriv, env)
        if found is None:
            pytest.skip("no interpreter of this version that an unprivileged user may run")
        base, prefix = found, [setpriv, *AS_NOBODY]
        del env["PYTHONPATH"]
    python = interpreter_running(EARLY_THREAD, open_place / "venv", base)
    tests = str(Path(__file__).resolve().parents[1])
    wrapper = [shutil.which("env") or "/usr/bin/env"] if started else []
    command = [*prefix, str(python), "-c", _THREADS_RUN, str(open_place / "tools"), tests, *wrapper]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    threads = json.loads(done.stdout.strip().splitlines()[-1])
    assert ("started-at-startup" in threads) is started, threads
    for name, fields in threads.items():
        assert fields["Seccomp"] == "2", f"thread {name!r} is not filtered: {fields}"
        assert int(fields["Seccomp_filters"]) >= 1, f"thread {name!r}: {fields}"


PAINTER = '''
import sys
from loader import tool

@tool
def paint() -> str:
    """Writes terminal control sequences to its stderr: a title, a clear screen, a bell."""
    sys.stderr.write("before\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\rafter\\n")
    sys.stderr.flush()
    return "painted"
'''


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_a_sandboxed_tools_stderr_reaches_the_terminal_without_control_sequences(
    tmp_path: Path, isolation: str
) -> None:
    """Under ``tool-loader call`` a worker's stderr is the user's terminal: in the sandbox its control
    characters are shown, not obeyed (a trusted process-mode tool keeps its colours)."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "paint.py").write_text(PAINTER)
    tool_loader = str(Path(sys.executable).parent / "tool-loader")
    done = subprocess.run(
        [tool_loader, "call", "paint", "--dir", str(folder), "--isolation", isolation],
        env=cli_env(),
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert b"painted" in done.stdout, done.stdout + done.stderr
    if isolation == "sandbox":
        assert b"before\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x0dafter\n" in done.stderr, done.stderr
        assert not set(done.stderr) & {0x1B, 0x07, 0x0D}, done.stderr
    else:
        assert b"before\x1b]0;pwned\x07\x1b[2J" in done.stderr, done.stderr
