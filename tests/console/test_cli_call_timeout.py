"""``tool-loader call --call-timeout`` (and ``TOOL_LOADER_CALL_TIMEOUT``) stops a slow tool of every kind.

The real command runs in a subprocess, in thread and process isolation, against
tools that would take five minutes: a synchronous sleep, an asynchronous sleep
and a busy loop. ``run_cli`` gives the process 60 s, so a call the timeout did
not stop fails the test long before the tool would have finished.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import eventually, run_cli, write

SLOW = '''
import asyncio
import os
import time
from pathlib import Path

from loader import tool

TAKES = 300.0  # far beyond the 60 s the test gives the whole command


@tool
def sync_sleep(pid_file: str) -> str:
    """Sleep in the calling thread."""
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(TAKES)
    return "finished"


@tool
async def async_sleep(pid_file: str) -> str:
    """Sleep on the event loop."""
    Path(pid_file).write_text(str(os.getpid()))
    await asyncio.sleep(TAKES)
    return "finished"


@tool
def busy_loop(pid_file: str) -> str:
    """Spin without ever sleeping or releasing the loop."""
    Path(pid_file).write_text(str(os.getpid()))
    deadline = time.monotonic() + TAKES
    spins = 0
    while time.monotonic() < deadline:
        spins += 1
    return f"finished after {spins} spins"
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("slow")
    write(root / "tools" / "slow.py", SLOW)
    return root


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting for its parent counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.parametrize("given", ["flag", "environment"])
@pytest.mark.parametrize("isolation", ["thread", "process"])
@pytest.mark.parametrize("tool", ["sync_sleep", "async_sleep", "busy_loop"])
def test_the_call_timeout_ends_the_call_with_an_error_result(
    project: Path, tmp_path: Path, tool: str, isolation: str, given: str
) -> None:
    pid_file = tmp_path / "pid"
    args = ["call", tool, f"pid_file={pid_file}", "--isolation", isolation]
    env: dict[str, str] = {}
    if given == "flag":
        args += ["--call-timeout", "1"]
    else:
        env["TOOL_LOADER_CALL_TIMEOUT"] = "1"

    done = run_cli(*args, cwd=project, env=env)  # raises TimeoutExpired if the call runs on

    assert (done.returncode, done.stdout) == (
        1,
        f"Error: ToolCallTimeout - tool '{tool}' did not finish within the 1 s call timeout\n",
    ), done.stderr
    assert "raised at" not in done.stderr and "Traceback" not in done.stderr
    # The tool really started, and nothing of it outlives the command (a process worker is stopped).
    pid = int(pid_file.read_text())
    eventually(lambda: _gone(pid), message=f"the process that ran {tool} ({isolation}) ends")
