"""The escape suite: what a tool in ``isolation="sandbox"`` tries, and that each attempt is refused.

Every attack is a real one that succeeds unsandboxed (``test_each_attack_succeeds_in_process_mode``
shows it for the ones process isolation does not already stop): a secret
read outside the tool folder and in the home folder, a write outside, a TCP
connect to a socket this test listens on, a bind, a connect to a named unix
socket, a fork loop, a 4 GB allocation, ``ptrace`` and ``process_vm_readv`` on
the loader's process, a signal to it, its ``/proc/<pid>/environ``, a mount and
a new user namespace. A shell may be started (``exec`` is allowed) but is
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
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from interpreters import interpreter_running
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import FAST, call_text, text_of

from loader.isolation import WorkerOptions
from loader.isolation.sandbox import probe
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
    return _errno(_libc.ptrace(16, int(target), None, None), "ptrace attach")  # PTRACE_ATTACH


def _vm_read(target: str) -> str:
    buffer = ctypes.create_string_buffer(8)
    local = _IoVec(ctypes.cast(buffer, ctypes.c_void_p), 8)
    remote = _IoVec(ctypes.c_void_p(0x400000), 8)
    return _errno(
        _libc.syscall(310, int(target), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0),
        "process_vm_readv",
    )


def _signal(target: str) -> str:
    os.kill(int(target), signal.SIGCONT)
    return "ALLOWED signal"


def _shell(target: str) -> str:
    done = subprocess.run(["/bin/sh", "-c", target], capture_output=True, text=True, timeout=20)
    return f"shell exit {done.returncode}: {done.stdout.strip()} {done.stderr.strip()}"


def _mount(target: str) -> str:
    return _errno(_libc.mount(b"none", target.encode(), b"tmpfs", 0, None), "mount")


def _unshare(target: str) -> str:
    return _errno(_libc.unshare(0x10000000), "unshare(CLONE_NEWUSER)")


_ATTACKS = {name[1:]: function for name, function in list(globals().items()) if name.startswith("_") and callable(function) and name not in ("_errno", "_IoVec")}


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
    finally:
        loader.close()


@pytest.mark.anyio
async def test_over_mcp_attacks_fail_and_the_legitimate_tool_works(place: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "loader", "serve", str(place / "tools"), "--isolation", "sandbox", "--no-history"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        cwd=str(tmp_path),
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            legit = await client.call_tool("legit", {"n": 10})
            assert text_of(legit) == LEGIT_ANSWER
            for kind, target in (("read", str(place / "secret.txt")), ("bind", ""), ("unshare", "")):
                answer = text_of(await client.call_tool("attack", {"kind": kind, "target": target}))
                _denied(answer, kind)
            assert text_of(await client.call_tool("legit", {"n": 10})) == LEGIT_ANSWER


_UNPRIVILEGED = """
import json, sys
from dataclasses import replace
sys.path.insert(0, sys.argv[2])
from support import FAST, call_text
from loader.isolation import WorkerOptions
from loader.reload.loader import ToolLoader

folder, secret, port = sys.argv[1], sys.argv[3], sys.argv[4]
loader = ToolLoader([folder], config=replace(FAST, workers=WorkerOptions(max_processes=24)), isolation="sandbox")
report = loader.scan()
assert not report.failed, [str(f.error) for f in report.failed]
out = {}
for kind, target in (("read", secret), ("connect", port), ("bind", ""), ("ptrace", "1"),
                     ("unshare", ""), ("write", folder + "/x.py")):
    out[kind] = call_text(loader, "attack", {"kind": kind, "target": target})
out["legit"] = call_text(loader, "legit", {"n": 10})
loader.close()
print(json.dumps(out))
"""


_AS_NOBODY = ("--reuid=65534", "--regid=65534", "--clear-groups")


def _interpreter_for_nobody(setpriv: str, env: dict[str, str]) -> str | None:
    """An interpreter of this Python version that the unprivileged user can run with this ``sys.path``
    (a pyenv or venv interpreter under ``/root`` is not; the system's usually is)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.path.exists(candidate):
            continue
        check = "import subprocess, sys, loader, mcp; subprocess.run([sys.executable, '-c', ''], check=True)"
        command = [setpriv, *_AS_NOBODY, candidate, "-c", check]
        if subprocess.run(command, capture_output=True, env=env, cwd="/", timeout=60).returncode == 0:
            return candidate
    return None


def test_the_attacks_fail_for_an_unprivileged_user_too(place: Path, listener: socket.socket) -> None:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run the suite as another user")
    (place / "secret.txt").chmod(0o644)  # readable to that user without the sandbox
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = "/nonexistent"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if os.path.isabs(p))
    python = _interpreter_for_nobody(setpriv, env)
    if python is None:
        pytest.skip("no interpreter of this version that an unprivileged user may run")
    tests = str(Path(__file__).resolve().parents[1])
    secret, port = str(place / "secret.txt"), str(listener.getsockname()[1])
    command = [setpriv, *_AS_NOBODY, python, "-c", _UNPRIVILEGED, str(place / "tools"), tests, secret, port]
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
    """The seccomp lines of each thread of this worker, by thread name."""
    found = {}
    for thread in threading.enumerate():
        with open(f"/proc/{os.getpid()}/task/{thread.native_id}/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if line.startswith("Seccomp"))
        found[thread.name] = {key: value.strip() for key, value in fields.items()}
    return json.dumps(found)
'''

_THREADS_RUN = """
import sys
sys.path.insert(0, sys.argv[2])
from support import FAST, call_text
from loader.reload.loader import ToolLoader
loader = ToolLoader([sys.argv[1]], config=FAST, isolation="sandbox")
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


@pytest.mark.parametrize("unprivileged", [False, True], ids=["this-user", "nobody"])
def test_a_thread_started_before_the_worker_confines_itself_gets_the_seccomp_filter(
    unprivileged: bool, open_place: Path
) -> None:
    """seccomp binds only the calling thread unless told to synchronise every thread (``TSYNC``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    prefix: list[str] = []
    base = sys.executable
    if unprivileged:
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or setpriv is None:
            pytest.skip("needs root and setpriv to run as another user")
        env["HOME"] = "/nonexistent"
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if os.path.isabs(p))
        found = _interpreter_for_nobody(setpriv, env)
        if found is None:
            pytest.skip("no interpreter of this version that an unprivileged user may run")
        base, prefix = found, [setpriv, *_AS_NOBODY]
        del env["PYTHONPATH"]
    python = interpreter_running(EARLY_THREAD, open_place / "venv", base)
    tests = str(Path(__file__).resolve().parents[1])
    command = [*prefix, str(python), "-c", _THREADS_RUN, str(open_place / "tools"), tests]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    threads = json.loads(done.stdout.strip().splitlines()[-1])
    assert "started-at-startup" in threads, threads  # the .pth file's thread lives in the worker
    for name, fields in threads.items():
        assert fields["Seccomp"] == "2", f"thread {name!r} is not filtered: {fields}"
        assert int(fields["Seccomp_filters"]) >= 1, f"thread {name!r}: {fields}"
