"""The console and hostile tools: ``call`` reports a tool's exit as an error, a real Ctrl-C still stops it.

``tool-loader call`` runs as a real subprocess; ``--call-timeout`` is checked
where it is parsed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import cli_env, eventually, run_cli, write

from loader.console.cli import build_parser

HOSTILE = '''
import sys
import asyncio
from pathlib import Path
from loader import tool

@tool
def exits(code: int = 3) -> str:
    """Exits like argparse on bad input."""
    sys.exit(code)

@tool
def interrupts() -> str:
    """Raises KeyboardInterrupt itself."""
    raise KeyboardInterrupt("from the tool")

@tool
async def waits(marker: str) -> str:
    """Waits for a long time after leaving a marker file."""
    Path(marker).write_text("started")
    await asyncio.sleep(3600)
    return "late"
'''


@pytest.fixture
def hostile(tools_dir: Path) -> Path:
    write(tools_dir / "hostile.py", HOSTILE)
    return tools_dir


def test_call_of_a_tool_that_exits_prints_the_error_and_exits_1(hostile: Path, tmp_path: Path) -> None:
    done = run_cli("call", "exits", "code=2", "--dir", str(hostile), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "Error: SystemExit - 2\n"), done.stderr


def test_call_of_a_tool_that_raises_keyboard_interrupt_exits_1(hostile: Path, tmp_path: Path) -> None:
    done = run_cli("call", "interrupts", "--dir", str(hostile), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "Error: KeyboardInterrupt - from the tool\n"), done.stderr


def test_a_real_ctrl_c_stops_call_with_130(hostile: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    process = subprocess.Popen(
        [sys.executable, "-m", "loader", "call", "waits", f"marker={marker}", "--dir", str(hostile)],
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        eventually(marker.exists, 30, "the tool started")
        process.send_signal(signal.SIGINT)
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, process.stderr.read() if process.stderr else ""


@pytest.mark.parametrize("command", ["call", "serve"])
def test_call_timeout_option(command: str) -> None:
    extra = ["NAME"] if command == "call" else []
    parse = build_parser().parse_args
    assert parse([command, *extra]).call_timeout == 60.0
    assert parse([command, *extra, "--call-timeout", "2.5"]).call_timeout == 2.5
    assert parse([command, *extra, "--call-timeout", "0"]).call_timeout is None


@pytest.mark.parametrize("value", ["-1", "abc", "nan"])
def test_an_invalid_call_timeout_is_a_usage_error(value: str, tmp_path: Path) -> None:
    done = run_cli("serve", "--call-timeout", value, str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert f"argument --call-timeout: expected a number of seconds >= 0 (0: no limit), got {value!r}" in (
        done.stderr
    )


ENDS_THE_PROCESS = '''
import os
from loader import tool

@tool
def bail(code: int) -> str:
    """End the process."""
    os._exit(code)
'''


def test_a_tool_that_ends_the_process_in_thread_mode_is_named_with_the_way_out(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "bail.py", ENDS_THE_PROCESS)
    done = run_cli("call", "bail", "code=7", "--dir", "tools", "--isolation", "thread", cwd=tmp_path)
    assert done.returncode == 7
    assert " ".join(done.stderr.split()) == (
        "the tool bail ended the process (exit status 7); run with --isolation process to contain it"
    ), done.stderr
