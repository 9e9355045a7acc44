"""A file that fails to load shows the line to fix: the source line and a caret, as Python's traceback does.

``check``, ``list`` and ``watch`` (plain lines, and its problem pane in a
real terminal) name ``file:line`` and print the offending line with a caret
under the error; ``-v`` adds the traceback of an exception raised at import.
Each holds in thread and process isolation, whose workers describe the error
in another process.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import warm_cli
from screen import Terminal
from support import LineReader, cli_env, run_cli, write

GOOD = '''
from loader import tool

@tool
def greet(who: str) -> str:
    """Greet someone."""
    return "hi " + who
'''

BROKEN = GOOD + "\ntotal = (1,\n"
"""Line 8 opens a parenthesis it never closes: Python's caret sits under the ``(``."""

RAISES = """
from loader import tool

def settings():
    raise RuntimeError("no settings file")

SETTINGS = settings()
"""

pytestmark = pytest.mark.parametrize("isolation", ["thread", "process"])


def _caret_under_the_paren(output: str) -> None:
    lines = output.splitlines()
    [at] = [i for i, line in enumerate(lines) if "total = (1," in line]
    assert lines[at + 1].strip() == "^", output
    assert lines[at + 1].index("^") == lines[at].index("("), output


def test_check_shows_the_source_line_and_a_caret(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "bad.py", BROKEN)
    done = run_cli("check", "tools", "--isolation", isolation, cwd=tmp_path, env={"COLUMNS": "120"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tools/bad.py:8" in done.stdout
    assert "SyntaxError: '(' was never closed" in done.stdout
    _caret_under_the_paren(done.stdout)


def test_list_shows_the_source_line_and_a_caret(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "bad.py", BROKEN)
    write(tmp_path / "tools" / "greet.py", GOOD)
    done = run_cli("list", "tools", "--isolation", isolation, cwd=tmp_path, env={"COLUMNS": "120"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tools/bad.py:8" in done.stdout
    _caret_under_the_paren(done.stdout)


def test_list_v_shows_the_traceback_of_an_import_time_exception(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "raises.py", RAISES)
    quiet = run_cli("list", "tools", "--isolation", isolation, cwd=tmp_path, env={"COLUMNS": "120"})
    assert "tools/raises.py:4" in quiet.stdout
    assert "Traceback" not in quiet.stdout + quiet.stderr
    loud = run_cli("list", "tools", "-v", "--isolation", isolation, cwd=tmp_path, env={"COLUMNS": "120"})
    assert loud.returncode == 1
    out = loud.stdout
    assert "Traceback (most recent call last):" in out, out
    assert 'raises.py", line 6' in out and "SETTINGS = settings()" in out, out
    assert 'raises.py", line 4, in settings' in out, out
    assert out.count("RuntimeError: no settings file") >= 1


def test_watch_plain_lines_show_the_source_line_and_a_caret(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "bad.py", BROKEN)
    process = subprocess.Popen(
        warm_cli.command(["watch", "tools", "--isolation", isolation], cli_env()),
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        reader = LineReader(process.stdout)
        reader.wait_for(r"^watching ")
        _caret_under_the_paren("\n".join(reader.seen))
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_watch_problem_pane_shows_the_source_line_and_a_caret(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "greet.py", GOOD)
    terminal = Terminal(["watch", "tools", "--isolation", isolation], tmp_path, 100, 30)
    try:
        terminal.wait_text("Greet someone")
        write(tmp_path / "tools" / "greet.py", BROKEN)
        terminal.wait_text("total = (1,")
        _caret_under_the_paren(terminal.text())
        assert "tools/greet.py:8" in terminal.text()
    finally:
        terminal.close()
