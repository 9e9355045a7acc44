"""``run_cli``'s warm fork (``warm_cli``) shows what a fresh ``python -m loader`` and the installed ``tool-loader`` show.

Most command-line tests run their command in a fork of a warm interpreter to save its start; these
run the same commands both ways, and as the console script users type, and compare everything a
test reads: the exit status, standard output and standard error.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import warm_cli
from support import cli_env, run_cli, write

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "list": ["list", "tools"],
    "call": ["call", "slugify", "title=Hello World", "--dir", "tools"],
    "call-process": ["call", "slugify", '{"title": "Ça va"}', "--dir", "tools", "--isolation", "process"],
    "unknown-tool": ["call", "nope", "--dir", "tools"],
    "usage-error": ["call", "--dir", "tools"],
    "crash": ["call", "crash", "--dir", "tools"],
    "help": ["--help"],
}

CRASH = '''
import os
from loader import tool

@tool
def crash() -> str:
    """Take the host down."""
    print("last words", flush=True)
    os._exit(7)
'''


@pytest.fixture
def place(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "sample_tools", tmp_path / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    write(tmp_path / "tools" / "crash.py", CRASH)
    return tmp_path


def _seen(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """What a test reads of a command, with durations (which differ from run to run) blotted out."""
    return done.returncode, _timeless(done.stdout), _timeless(done.stderr)


def _timeless(text: str) -> str:
    return re.sub(r"\b\d+(\.\d+)? (ms|s)\b", "N s", text)


def _fresh(command: list[str], args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_warm_fork_shows_what_a_fresh_interpreter_and_the_console_script_show(
    place: Path, name: str
) -> None:
    args = COMMANDS[name]
    warm = warm_cli.run_warm(args, cwd=place, env=cli_env(), merge=False, timeout=60)
    assert warm is not None, "the warm interpreter did not take the command"
    module = _fresh([sys.executable, "-m", "loader"], args, place)
    script = _fresh([str(Path(sys.executable).parent / "tool-loader")], args, place)
    for fresh in (module, script):
        assert _seen(warm) == _seen(fresh)
    assert warm.stdout or warm.stderr


def test_run_cli_takes_a_variable_read_at_start_to_a_fresh_interpreter(place: Path) -> None:
    assert warm_cli.fresh_reason({**cli_env(), "PYTHONWARNINGS": "error"}) is not None
    done = run_cli(
        "call", "slugify", "title=A B", "--dir", "tools", cwd=place, env={"PYTHONWARNINGS": "error"}
    )
    assert (done.returncode, done.stdout) == (0, "a-b\n"), done.stderr


def test_a_command_over_its_deadline_is_killed_and_raises(place: Path) -> None:
    write(place / "tools" / "stuck.py", STUCK)
    with pytest.raises(subprocess.TimeoutExpired):
        warm_cli.run_warm(
            ["call", "stuck", "--dir", "tools"], cwd=place, env=cli_env(), merge=False, timeout=3
        )
    # the warm interpreter serves one command at a time, after it has reaped the last: it is free again
    again = warm_cli.run_warm(COMMANDS["call"], cwd=place, env=cli_env(), merge=False, timeout=60)
    assert again is not None and again.stdout == "hello-world\n"


STUCK = '''
import time
from loader import tool

@tool
def stuck() -> str:
    """Never answer."""
    while True:
        time.sleep(1)
'''
