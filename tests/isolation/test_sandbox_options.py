"""Widening the sandbox (extra paths, endpoints, the network) and its limits (CPU per call, file size,
open files), through the Python API and the real command."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from support import FAST, call_text, run_cli, write

from loader.isolation.sandbox import SandboxOptions, parse_endpoint, probe
from loader.reload.loader import ToolLoader

pytestmark = pytest.mark.skipif(
    not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
)

PROBE = '''
import os, socket, tempfile, time
from loader import tool


@tool
def touch(kind: str, target: str = "") -> str:
    """Reach for something; say what happened.

    Args:
        kind: read, write, connect, spin, big_file or many_files.
        target: A path or a port.
    """
    try:
        if kind == "read":
            return open(target).read()
        if kind == "write":
            with open(target, "w") as handle:
                handle.write("written")
            return "written"
        if kind == "connect":
            with socket.create_connection(("127.0.0.1", int(target)), timeout=5):
                return "connected"
        if kind == "spin":
            end = time.process_time() + float(target)
            while time.process_time() < end:
                pass
            return "spun"
        if kind == "big_file":
            with tempfile.TemporaryFile() as handle:
                handle.write(b"x" * (int(target) * 1024 * 1024))
            return "big file written"
        if kind == "many_files":
            opened = [open(os.devnull) for _ in range(int(target))]
            return f"opened {len(opened)}"
    except OSError as exc:
        return f"refused: {type(exc).__name__}: {exc}"
    return "unknown"
'''


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sandbox-options")
    write(root / "tools" / "probe.py", PROBE)
    (root / "data").mkdir()
    (root / "data" / "in.txt").write_text("extra data")
    (root / "out").mkdir()
    (root / "closed").mkdir()
    (root / "closed" / "secret.txt").write_text("closed")
    return root


@pytest.fixture(scope="module")
def listeners() -> Iterator[tuple[int, int]]:
    with socket.create_server(("127.0.0.1", 0)) as allowed, socket.create_server(("127.0.0.1", 0)) as other:
        yield allowed.getsockname()[1], other.getsockname()[1]


@pytest.fixture(scope="module")
def widened(place: Path, listeners: tuple[int, int]) -> Iterator[ToolLoader]:
    config = replace(
        FAST,
        isolation="sandbox",
        sandbox=SandboxOptions(
            allow_read=(place / "data",),
            allow_write=(place / "out",),
            allow_connect=(parse_endpoint(f"localhost:{listeners[0]}"),),
            max_cpu_seconds=1.0,
            max_file_mb=1,
        ),
        call_timeout=30.0,
    )
    loader = ToolLoader([place / "tools"], config=config)
    loader.scan()
    try:
        yield loader
    finally:
        loader.close()


def _touch(loader: ToolLoader, kind: str, target: object = "") -> str:
    return call_text(loader, "touch", {"kind": kind, "target": str(target)})


def test_extra_paths_open_what_they_name_and_nothing_else(widened: ToolLoader, place: Path) -> None:
    assert _touch(widened, "read", place / "data" / "in.txt") == "extra data"
    assert _touch(widened, "write", place / "out" / "result.txt") == "written"
    assert (place / "out" / "result.txt").read_text() == "written"
    assert _touch(widened, "read", place / "closed" / "secret.txt").startswith("refused: PermissionError")
    assert _touch(widened, "write", place / "data" / "in.txt").startswith("refused: PermissionError")


def test_an_allowed_endpoint_connects_and_other_ports_do_not(
    widened: ToolLoader, listeners: tuple[int, int]
) -> None:
    allowed, other = listeners
    assert _touch(widened, "connect", allowed) == "connected"
    assert _touch(widened, "connect", other).startswith("refused: PermissionError")


def test_a_call_past_its_cpu_allowance_loses_its_worker_and_the_next_call_runs(widened: ToolLoader) -> None:
    assert _touch(widened, "spin", 0.2) == "spun"  # within the allowance, every call afresh
    assert _touch(widened, "spin", 0.2) == "spun"
    answer = _touch(widened, "spin", 30)
    assert "SIGXCPU" in answer, answer
    assert _touch(widened, "spin", 0.1) == "spun"


def test_file_size_and_open_files_are_bounded(widened: ToolLoader) -> None:
    assert "File too large" in _touch(widened, "big_file", 2)
    assert _touch(widened, "many_files", 100) == "opened 100"
    assert "Too many open files" in _touch(widened, "many_files", 2000)


def test_allow_network_opens_every_port(place: Path, listeners: tuple[int, int]) -> None:
    config = replace(FAST, isolation="sandbox", sandbox=SandboxOptions(allow_network=True))
    loader = ToolLoader([place / "tools"], config=config)
    try:
        loader.scan()
        assert _touch(loader, "connect", listeners[1]) == "connected"
        assert _touch(loader, "read", place / "closed" / "secret.txt").startswith("refused")
    finally:
        loader.close()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=Path.cwd(), timeout=120)


def test_the_command_takes_the_sandbox_options(place: Path) -> None:
    tools = str(place / "tools")
    target = json.dumps({"kind": "read", "target": str(place / "data" / "in.txt")})
    refused = _cli("call", "touch", target, "--dir", tools, "--isolation", "sandbox")
    assert refused.returncode == 0 and "refused: PermissionError" in refused.stdout, refused.stderr
    allowed = _cli(
        "call",
        "touch",
        target,
        "--dir",
        tools,
        "--isolation",
        "sandbox",
        "--sandbox-allow-read",
        str(place / "data"),
    )
    assert allowed.returncode == 0 and "extra data" in allowed.stdout, allowed.stderr


def test_the_command_takes_the_sandbox_limits(place: Path) -> None:
    tools = str(place / "tools")
    sandbox = ("--dir", tools, "--isolation", "sandbox")
    big = json.dumps({"kind": "big_file", "target": "2"})
    assert "big file written" in _cli("call", "touch", big, *sandbox).stdout
    capped = _cli("call", "touch", big, *sandbox, "--sandbox-max-file-mb", "1")
    assert "File too large" in capped.stdout, capped.stdout + capped.stderr
    spin = json.dumps({"kind": "spin", "target": "30"})
    stopped = _cli("call", "touch", spin, *sandbox, "--sandbox-cpu-seconds", "0.5")
    assert "SIGXCPU" in stopped.stdout + stopped.stderr, stopped.stdout + stopped.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sandbox-allow-read", "/"], "apply to --isolation sandbox"),
        (["--sandbox-max-file-mb", "1"], "apply to --isolation sandbox"),
        (["--isolation", "process", "--sandbox-cpu-seconds", "1"], "apply to --isolation sandbox"),
        (["--isolation", "sandbox", "--sandbox-cpu-seconds", "-1"], "--sandbox-cpu-seconds must be"),
        (["--isolation", "sandbox", "--sandbox-max-file-mb", "-5"], "--sandbox-max-file-mb must be"),
        (["--isolation", "process", "--sandbox-allow-network"], "apply to --isolation sandbox"),
        (["--isolation", "sandbox", "--sandbox-allow-write", "/no/such/folder"], "/no/such/folder"),
        (["--isolation", "sandbox", "--sandbox-allow-connect", "example.com"], "HOST:PORT"),
        (["--isolation", "sandbox", "--sandbox-allow-connect", "example.com:99999"], "HOST:PORT"),
    ],
)
def test_bad_sandbox_options_are_usage_errors(place: Path, args: list[str], message: str) -> None:
    done = _cli("list", str(place / "tools"), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert not os.path.exists("/no/such/folder")
