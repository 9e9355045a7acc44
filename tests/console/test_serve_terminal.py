"""``tool-loader serve`` over stdio started by a person at a terminal: it says what it waits for, and Ctrl-C ends it.

The real command runs in a pseudo-terminal (pexpect). A ``ping`` typed as a
JSON-RPC line and its answer prove the server is reading the terminal before
the Ctrl-C: the moment a reader blocked in ``read()`` would keep the process
alive until the next line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # pexpect ships no type hints
from serving import server_env
from support import write

DEADLINE = 20.0

ECHO = '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''

WAITING = "waiting for an MCP client on stdin"


def test_ctrl_c_at_a_terminal_ends_serve_at_once_with_status_0(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "echo.py", ECHO)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "loader", "serve", "tools"],
        cwd=str(tmp_path),
        env=server_env(TERM="xterm-256color", COLUMNS="200"),
        dimensions=(24, 200),
        encoding="utf-8",
        timeout=DEADLINE,
    )
    try:
        child.expect("serving over stdio")
        child.expect(WAITING)  # the one line saying what the terminal is for
        child.expect("tool-loader mcp-config")
        child.sendline('{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
        child.expect(r'\{"jsonrpc":"2.0","id":7,"result":\{\}\}')  # the server answers what was typed
        child.sendintr()
        child.expect(pexpect.EOF)  # no further line of input needed
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert "Traceback" not in (child.before or "")


def test_a_client_on_a_pipe_gets_no_terminal_hint(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "echo.py", ECHO)
    done = subprocess.run(
        [sys.executable, "-m", "loader", "serve", "tools"],
        cwd=tmp_path,
        env=server_env(COLUMNS="200"),
        stdin=subprocess.DEVNULL,  # a client that leaves at once
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout is the protocol channel
    assert "serving over stdio" in done.stderr
    assert WAITING not in done.stderr
