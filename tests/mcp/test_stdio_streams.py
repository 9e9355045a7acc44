"""``tool-loader serve`` over stdio: stdout is the protocol from the first byte, and stderr can never block it.

The MCP SDK's own stdio client launches the real command in both isolation
modes. Tools print at import (during the first scan) and at call time; one
prints about a megabyte into a stderr pipe that nobody reads.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from serving import stdio_params
from support import text_of, write

pytestmark = pytest.mark.anyio

ISOLATION = ["thread", "process"]
DEADLINE = 30.0

CHATTY = '''
from loader import tool

print("IMPORT-NOISE on stdout while the first scan imports me")

@tool
def chatty(text: str) -> str:
    """Print, then answer."""
    print("CALL-NOISE on stdout during a call")
    return text.upper()
'''

NOISY = '''
import sys
from loader import tool

@tool
def noisy(kilobytes: int) -> str:
    """Print a lot to stdout and stderr, then answer."""
    line = "n" * 1023
    for index in range(kilobytes):
        print(line, file=sys.stderr if index % 2 else sys.stdout)
    return "printed"

@tool
def echo(text: str) -> str:
    """Echo."""
    return text
'''


def params(tools: Path, cwd: Path, *extra: str) -> StdioServerParameters:
    return stdio_params(
        "serve",
        str(tools),
        *extra,
        cwd=str(cwd),
    )


@pytest.mark.parametrize("isolation", ISOLATION)
async def test_prints_at_import_and_call_time_go_to_stderr_never_the_protocol(
    isolation: str, tools_dir: Path, tmp_path: Path
) -> None:
    write(tools_dir / "chatty.py", CHATTY)
    log_path = tmp_path / "stderr.log"
    with log_path.open("w") as errlog, anyio.fail_after(DEADLINE):
        async with Client(
            stdio_client(params(tools_dir, tmp_path, "--isolation", isolation), errlog=errlog), mode="legacy"
        ) as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["chatty"]
            result = await client.call_tool("chatty", {"text": "hi"})
            assert not result.is_error and text_of(result) == "HI"
    log = log_path.read_text()
    assert "IMPORT-NOISE on stdout while the first scan imports me" in log
    assert "CALL-NOISE on stdout during a call" in log


@contextmanager
def unread_pipe() -> Iterator[tuple[TextIO, int]]:
    """A pipe whose read end stays open and unread until the test says: a client that ignores stderr."""
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(write_fd, "w") as writer:
            yield writer, read_fd
    finally:
        os.close(read_fd)


def read_until(read_fd: int, wanted: bytes, deadline: float = DEADLINE) -> bytes:
    """Read the pipe at last, until ``wanted`` arrives (or the deadline passes)."""
    seen = b""
    ends = time.monotonic() + deadline
    while wanted not in seen and time.monotonic() < ends:
        ready, _, _ = select.select([read_fd], [], [], 0.5)
        if ready:
            seen = seen[-len(wanted) :] + os.read(read_fd, 1 << 16)
    return seen


@pytest.mark.parametrize("isolation", ISOLATION)
async def test_a_client_that_never_reads_stderr_cannot_freeze_the_server(
    isolation: str, tools_dir: Path, tmp_path: Path
) -> None:
    """About 1 MB printed into a 64 KB pipe nobody reads: the call and a plain echo still answer in time."""
    write(tools_dir / "noisy.py", NOISY)
    server = params(tools_dir, tmp_path, "--isolation", isolation, "--call-timeout", "10", "-v")
    with unread_pipe() as (errlog, read_fd):
        async with Client(stdio_client(server, errlog=errlog), mode="legacy") as client:
            for _ in range(2):
                with anyio.fail_after(DEADLINE):
                    result = await client.call_tool("noisy", {"kilobytes": 1024})
                assert text_of(result) == "printed", text_of(result)
                with anyio.fail_after(DEADLINE):
                    assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
            notice = b"stderr is not being read; output beyond"
            assert notice in await anyio.to_thread.run_sync(read_until, read_fd, notice), "never said so"
