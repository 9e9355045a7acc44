"""A folder the user cannot read is said to be unreadable, with its path: never shown as an empty folder.

The tests run as root, who reads everything: the commands run as ``nobody`` (``setpriv``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import cli_env, write

_AS_NOBODY = ("--reuid=65534", "--regid=65534", "--clear-groups")
_TOOL = '''
from loader import tool


@tool
def {name}() -> str:
    """Say {name}."""
    return "{name}"
'''


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder ``nobody`` can reach (pytest's own tmp_path is root's alone)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run the command as another user")
    root = Path(tempfile.mkdtemp(prefix="unreadable-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def as_nobody(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    env = {**cli_env(), "HOME": "/nonexistent"}
    return subprocess.run(
        [setpriv, *_AS_NOBODY, sys.executable, "-m", "loader", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _folder(place: Path) -> Path:
    tools = place / "tools"
    write(tools / "ok.py", _TOOL.format(name="ok"))
    write(tools / "locked" / "hidden.py", _TOOL.format(name="hidden"))
    tools.chmod(0o755)
    return tools


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_an_unreadable_tools_folder_is_an_error_naming_it_not_an_empty_list(
    place: Path, isolation: str
) -> None:
    tools = _folder(place)
    tools.chmod(0o700)  # root's: nobody cannot list it
    listed = as_nobody("list", "tools", "--isolation", isolation, cwd=place)
    assert listed.returncode == 1, listed.stdout + listed.stderr
    assert "error: cannot read tools (Permission denied): no tool file in it was loaded" in listed.stdout
    assert "1 folder unreadable" in listed.stdout

    as_json = as_nobody("list", "tools", "--json", "--isolation", isolation, cwd=place)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["unreadable"] == [
        {"path": str(tools), "reason": "Permission denied", "watched_folder": True}
    ]

    called = as_nobody("call", "ok", "--dir", "tools", "--isolation", isolation, cwd=place)
    assert called.returncode == 2
    assert "unknown tool 'ok'; available: none (cannot read tools (Permission denied)" in " ".join(
        called.stderr.split()
    )

    checked = as_nobody("check", "tools", "--json", "--isolation", isolation, cwd=place)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    codes = [(f["code"], f["file"]) for f in json.loads(checked.stdout)["findings"]]
    assert codes == [("unreadable-folder", str(tools))]


def test_an_unreadable_sub_folder_is_reported_and_the_rest_loads(place: Path) -> None:
    tools = _folder(place)
    (tools / "locked").chmod(0o700)
    listed = as_nobody("list", "tools", cwd=place)
    assert listed.returncode == 1, listed.stdout + listed.stderr
    assert "warning: cannot read the sub-folder tools/locked (Permission denied)" in listed.stdout
    assert "1 tool from 1 file in tools" in listed.stdout

    called = as_nobody("call", "ok", "--dir", "tools", cwd=place)
    assert (called.returncode, called.stdout) == (0, "ok\n"), called.stderr
    assert "warning: cannot read the sub-folder tools/locked (Permission denied)" in called.stderr

    checked = as_nobody("check", "tools", "--json", cwd=place)
    assert checked.returncode == 1
    codes = [(f["code"], f["file"]) for f in json.loads(checked.stdout)["findings"]]
    assert ("unreadable-folder", str(tools / "locked")) in codes
