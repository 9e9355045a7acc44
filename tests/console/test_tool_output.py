"""What a tool file prints, logs and warns reaches the person at the terminal, and never garbles the view.

``watch`` shows it in a Tool output pane of its full-screen view (the next
frame would otherwise draw over it); ``call`` prints it on lines of its own,
above its progress bar, never spliced into it. Both hold in thread and process
isolation. Each runs the real command in a pseudo-terminal.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # pexpect ships no type hints
import pyte
import pytest
from screen import Terminal
from support import write

NOISY = '''
import logging, time, warnings
from loader import tool

print("{tag}-print", flush=True)
time.sleep(0.4)
logging.getLogger("noisy").warning("{tag}-log")
time.sleep(0.4)
warnings.warn("{tag}-warning")
time.sleep(0.4)

@tool
def noisy(x: int) -> int:
    """Print, log and return x."""
    print("call-print", flush=True)
    logging.getLogger("noisy").warning("call-log")
    return x
'''

pytestmark = pytest.mark.parametrize("isolation", ["thread", "process"])


def _shows_all(lines: list[str], tag: str) -> bool:
    text = "\n".join(lines)
    return all(f"{tag}-{what}" in text for what in ("print", "log", "warning"))


def test_watch_shows_tool_output_in_its_own_pane(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "noisy.py", NOISY.format(tag="import"))
    terminal = Terminal(["watch", "tools", "--isolation", isolation], tmp_path, 100, 30)
    try:
        terminal.wait_text("Print, log and return x.")
        terminal.wait_for(lambda lines: _shows_all(lines, "import"), "the output of the first import")
        assert any(line.startswith("Tool output") for line in terminal.lines()), terminal.text()
        write(tmp_path / "tools" / "noisy.py", NOISY.format(tag="save"))
        terminal.wait_for(lambda lines: _shows_all(lines, "save"), "the output of the import after a save")
        terminal.wait_text("updated")
    finally:
        terminal.close()


def test_call_prints_tool_output_on_lines_of_its_own(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "noisy.py", NOISY.format(tag="import"))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "loader", "call", "noisy", "x=7", "--dir", "tools", "--isolation", isolation],
        cwd=str(tmp_path),
        env=env,
        dimensions=(40, 250),
        timeout=60,
    )
    raw = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            raw += child.read_nonblocking(65536, timeout=1)
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF:
            break
    child.close()
    screen = pyte.Screen(250, 40)
    pyte.ByteStream(screen).feed(raw)
    lines = [line.rstrip() for line in screen.display]
    for what in ("import-print", "import-log", "UserWarning: import-warning", "call-print", "call-log"):
        found = [line for line in lines if what in line]  # process mode imports the module twice
        assert found, "\n".join(lines)
        assert all("loading tools" not in line and line.endswith(what) for line in found), "\n".join(lines)
    assert "7" in lines, "\n".join(lines)
