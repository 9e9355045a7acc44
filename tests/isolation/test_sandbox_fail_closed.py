"""Fail closed: where the kernel cannot enforce a layer, ``isolation="sandbox"`` refuses to start.

Landlock is hidden from a child process by a seccomp filter that makes its
three system calls fail with ``ENOSYS`` (as on a kernel without it),
installed before the child starts the loader. The child must then refuse,
naming the missing layers and ``--sandbox-best-effort``; with that option it
runs, with a warning naming the layers that are off. A Landlock too old for
the network and scope layers is an interpreter whose every process is told
an older ABI (``FAKE_ABI``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from interpreters import interpreter_running
from support import function_tool_source, write

from loader.isolation.sandbox import probe

pytestmark = pytest.mark.skipif(
    not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
)

HIDE_LANDLOCK = """
import errno, os, sys
import pyseccomp as seccomp
hide = seccomp.SyscallFilter(seccomp.ALLOW)
for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
    hide.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
hide.load()
if sys.argv[1] == "-c":
    exec(sys.argv[2])
else:
    os.execv(sys.executable, [sys.executable, "-m", "loader", *sys.argv[1:]])
"""

API = """
import sys
from loader.reload.loader import ToolLoader
from loader.isolation.sandbox import SandboxUnavailable
try:
    ToolLoader([sys.argv[3]], isolation="sandbox")
except SandboxUnavailable as exc:
    print("refused:", [layer.name for layer in exc.missing], exc)
else:
    print("started")
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _without_landlock(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", HIDE_LANDLOCK, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=_env())


@pytest.fixture
def folder(tools_dir: Path) -> Path:
    write(tools_dir / "greet.py", function_tool_source("greet", "return 'hi'"))
    return tools_dir


def test_the_python_api_refuses_naming_what_is_missing(folder: Path) -> None:
    done = _without_landlock("-c", API, str(folder))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: ['filesystem', 'network', 'scopes']"), done.stdout
    assert "Landlock" in done.stdout and "--sandbox-best-effort" in done.stdout


def test_the_cli_refuses_and_best_effort_runs_with_a_warning(folder: Path) -> None:
    refused = _without_landlock("list", str(folder), "--isolation", "sandbox")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "isolation='sandbox' cannot start" in refused.stderr
    assert "filesystem: the kernel has no Landlock" in " ".join(refused.stderr.split())
    assert "greet" not in refused.stdout
    weakened = _without_landlock("list", str(folder), "--isolation", "sandbox", "--sandbox-best-effort")
    assert weakened.returncode == 0, weakened.stderr
    assert "greet" in weakened.stdout
    warning = " ".join(weakened.stderr.split())
    assert "WARNING: the sandbox is weakened" in warning and "filesystem" in warning and "scopes" in warning


def test_check_reports_each_layer(folder: Path) -> None:
    command = [sys.executable, "-m", "loader", "check", str(folder), "--isolation", "sandbox", "--json"]
    here = subprocess.run(command, capture_output=True, text=True, timeout=120, env=_env())
    assert here.returncode == 0, here.stderr
    layers = {x["layer"]: x for x in json.loads(here.stdout)["sandbox"]}
    assert list(layers) == ["filesystem", "network", "scopes", "syscalls", "limits", "processes"]
    assert all(x["on"] for x in layers.values())
    hidden = _without_landlock(
        "check", str(folder), "--isolation", "sandbox", "--sandbox-best-effort", "--json"
    )
    assert hidden.returncode == 0, hidden.stderr
    layers = {x["layer"]: x for x in json.loads(hidden.stdout)["sandbox"]}
    assert [name for name, x in layers.items() if not x["on"]] == ["filesystem", "network", "scopes"]
    assert "Landlock" in layers["filesystem"]["detail"]
    assert layers["syscalls"]["on"] and layers["limits"]["on"] and layers["processes"]["on"]


FAKE_ABI = "import landlockpy._syscall as kernel; kernel.abi_version = lambda: {abi}"
"""A ``.pth`` line giving every process of an interpreter a kernel that answers Landlock ABI ``abi``:
the library then builds its rulesets for that ABI, as on such a kernel."""


@pytest.mark.parametrize("abi", [1, 3])
def test_a_landlock_too_old_for_network_and_scopes_refuses_naming_them(
    abi: int, folder: Path, tmp_path: Path
) -> None:
    """Landlock ABI 1 to 3 (Debian 12, Ubuntu 24.04) enforces paths, not TCP ports (4) or scopes (6)."""
    python = str(interpreter_running(FAKE_ABI.format(abi=abi), tmp_path / "venv"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [python, "-m", "loader", *args, str(folder), "--isolation", "sandbox"]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=_env(), cwd=tmp_path)

    refused = run("list")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    assert f"network: Landlock ABI {abi} is older than 4" in said, said
    assert f"scopes: Landlock ABI {abi} is older than 6" in said, said
    assert "filesystem:" not in said and "greet" not in refused.stdout
    checked = run("check", "--sandbox-best-effort", "--json")
    assert checked.returncode == 0, checked.stderr
    layers = {x["layer"]: x for x in json.loads(checked.stdout)["sandbox"]}
    assert [name for name, x in layers.items() if not x["on"]] == ["network", "scopes"]
    assert layers["filesystem"]["detail"].startswith(f"Landlock ABI {abi}")
    weakened = run("list", "--sandbox-best-effort")
    assert weakened.returncode == 0, weakened.stderr
    assert "greet" in weakened.stdout
    warning = " ".join(weakened.stderr.split())
    assert "WARNING: the sandbox is weakened" in warning, warning
    assert "network (" in warning and "scopes (" in warning and "filesystem" not in warning
