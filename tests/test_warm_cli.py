"""A warm fork (``warm_cli``) shows what a fresh ``python -m loader`` and the installed ``tool-loader`` show.

Most command-line tests run their command in a fork of a warm interpreter to save its start; these
run the same commands both ways, as the console script users type and as the docs pages' warm
``tool-loader`` script (``warm_cli.console_script``), and compare everything a test reads: the
exit status, standard output and standard error. A server started through the shim
(``warm_cli.command``) gets the signals sent to the shim and dies with it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
import warm_cli
from support import cli_env, eventually, run_cli, write

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
    # the docs pages' way in: a `tool-loader` on the shell's PATH that forks the warm interpreter
    (place / "bin").mkdir()
    warm_script = warm_cli.console_script(place / "bin")
    assert warm_script is not None
    assert _seen(_fresh([str(warm_script)], args, place)) == _seen(warm)


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


def test_a_server_through_the_shim_gets_its_signals_and_exits_as_a_fresh_one_does(place: Path) -> None:
    args = ["serve", "tools", "--transport", "http", "--port", "0", "--no-history"]
    statuses = []
    for argv in (warm_cli.command(args, cli_env()), [sys.executable, "-m", "loader", *args]):
        server = subprocess.Popen(
            argv, cwd=place, env=cli_env(), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        assert server.stderr is not None
        assert _listening(server.stderr)
        server.send_signal(signal.SIGTERM)
        statuses.append(server.wait(60))
        server.stderr.close()
    assert warm_cli.command(args, cli_env())[1:3] == ["-I", "-S"], "the first server was not warm"
    assert statuses[0] == statuses[1] == 0


def test_a_killed_shim_takes_its_fork_with_it(place: Path) -> None:
    args = ["serve", "tools", "--transport", "http", "--port", "0", "--no-history"]
    before = _forks()
    shim = subprocess.Popen(
        warm_cli.command(args, cli_env()),
        cwd=place,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert shim.stderr is not None
    assert _listening(shim.stderr)
    forks = _forks() - before
    assert len(forks) == 1, forks
    shim.kill()
    shim.wait(60)
    eventually(lambda: not forks & _forks(), message="the fork ended with its shim")


def _listening(stream: IO[str]) -> bool:
    """Whether the server said it listens before its standard error ended."""
    return any("listening at http://" in line for line in stream)


def _forks() -> set[int]:
    """The live processes the warm interpreters forked."""
    zygotes = warm_cli.zygote_pids()
    found = set()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[1]) in zygotes:
            found.add(int(entry))
    return found
