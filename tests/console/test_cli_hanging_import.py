"""One tool file whose import hangs: a one-shot command waits only for what it needs, names it, and is bounded.

``call ok`` imports only the files that can define ``ok``; ``list`` and ``check`` wait for the hanging
file at most ``--import-timeout`` seconds, saying which file they wait for, and the files after it load.
"""

from __future__ import annotations

import time
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # pexpect ships no type hints
import pytest
from screen import Terminal
from support import run_cli, write

HANG = """
import threading

threading.Event().wait()  # blocked in C: no interrupt reaches it
"""

OK = '''
from loader import tool


@tool
def ok() -> str:
    """Say ok."""
    return "ok"
'''


def _folder(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "a_hang.py", HANG)  # sorts first: the scan meets it before ok.py
    write(tmp_path / "tools" / "ok.py", OK)


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_call_of_another_tool_does_not_wait_for_the_hanging_file(tmp_path: Path, isolation: str) -> None:
    _folder(tmp_path)
    marker = tmp_path / "hang-ran"
    write(tmp_path / "tools" / "a_hang.py", f"open({str(marker)!r}, 'w').close()\n" + HANG)
    started = time.monotonic()
    done = run_cli("call", "ok", "--import-timeout", "60", "--isolation", isolation, cwd=tmp_path)
    took = time.monotonic() - started
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert not marker.exists(), "call ok imported the hanging file"
    assert took < 30, f"call ok took {took:.1f} s behind a hanging file"


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_list_waits_at_most_the_import_timeout_names_the_file_and_loads_the_rest(
    tmp_path: Path, isolation: str
) -> None:
    _folder(tmp_path)
    started = time.monotonic()
    done = run_cli("list", "--import-timeout", "2", "--isolation", isolation, cwd=tmp_path)
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert took < 30, f"list took {took:.1f} s with --import-timeout 2"  # the message says 2 s were given
    assert "waiting for tools/a_hang.py to import (" in done.stderr
    assert "of at most 2 s; --import-timeout)" in done.stderr
    assert "ok    function  tools/ok.py" in done.stdout, done.stdout  # the file after the hanging one
    assert "ImportTimeout: import did not finish within 2 s" in " ".join(done.stdout.split())


def test_calling_the_hanging_tool_names_its_file_and_check_and_inspect_take_the_option(
    tmp_path: Path,
) -> None:
    write(tmp_path / "tools" / "stuck.py", HANG + OK.replace("def ok", "def stuck"))
    write(tmp_path / "tools" / "ok.py", OK)
    called = run_cli("call", "stuck", "--import-timeout", "1.5", cwd=tmp_path)
    assert called.returncode == 2
    assert "waiting for tools/stuck.py to import (" in called.stderr
    assert "tools/stuck.py did not load: ImportTimeout: import did not finish within 1.5 s" in " ".join(
        called.stderr.split()
    )
    checked = run_cli("check", "--import-timeout", "1", cwd=tmp_path)
    assert checked.returncode == 1 and "within 1 s" in " ".join(checked.stdout.split()), checked.stdout
    inspected = run_cli("inspect", "ok", "--import-timeout", "1", cwd=tmp_path)
    assert inspected.returncode == 0, inspected.stderr
    refused = run_cli("list", "--import-timeout", "0", cwd=tmp_path)
    assert refused.returncode == 2 and "--import-timeout" in refused.stderr


def test_the_progress_bar_on_a_terminal_names_the_file_it_waits_for(tmp_path: Path) -> None:
    _folder(tmp_path)
    terminal = Terminal(["list", "--import-timeout", "4"], tmp_path, columns=200, lines=30)
    try:
        deadline = time.monotonic() + 20
        needle = b"waiting for tools/a_hang.py to import ("
        while needle not in bytes(terminal.raw):
            assert time.monotonic() < deadline, bytes(terminal.raw).decode(errors="replace")
            time.sleep(0.05)
        terminal.child.expect(pexpect.EOF, timeout=20)
    finally:
        terminal.close()
    assert b"loading tools" in bytes(terminal.raw)
