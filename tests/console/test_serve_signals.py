"""``tool-loader serve`` over stdio on pipes, as an MCP client launches it: SIGINT ends it, SIGTERM drains it.

The real command runs as a subprocess with pipes for stdin and stdout, spoken
to in raw JSON-RPC lines (so no client library can hide an answer that never
came). A person's Ctrl-C at a terminal is ``test_serve_terminal``'s.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from serving import server_env
from support import eventually, write

DEADLINE = 20.0

SLOW = '''
import pathlib, time
from loader import tool

@tool
def slow(seconds: float, mark: str) -> str:
    """Say it started, sleep a while, then say so."""
    pathlib.Path(mark).write_text("started")
    time.sleep(seconds)
    return f"slept {seconds}"
'''


@dataclass
class StdioServe:
    process: subprocess.Popen[bytes]
    answers: queue.Queue[dict[str, Any]]
    stderr: Path

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def answer(self, ident: int) -> dict[str, Any]:
        while True:
            message = self.answers.get(timeout=DEADLINE)
            if message.get("id") == ident:
                return message

    def exit_status(self) -> int:
        try:
            return self.process.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"serve still running {DEADLINE} s after the signal") from None


def _read_lines(stdout: IO[bytes], answers: queue.Queue[dict[str, Any]]) -> None:
    for line in stdout:
        answers.put(json.loads(line))


@contextmanager
def serving_stdio(tmp_path: Path) -> Iterator[StdioServe]:
    """``serve tools`` on pipes, past the handshake."""
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "loader", "serve", "tools"],
            cwd=tmp_path,
            env=server_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
    assert process.stdout is not None
    answers: queue.Queue[dict[str, Any]] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(process.stdout, answers), daemon=True)
    reader.start()
    served = StdioServe(process, answers, stderr)
    try:
        served.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert "result" in served.answer(1)
        served.send({"method": "notifications/initialized"})
        yield served
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(DEADLINE)
        reader.join(DEADLINE)


def test_sigint_ends_stdio_serve_on_pipes_with_status_0(tmp_path: Path) -> None:
    """SIGINT never stopped it: the SDK's reader thread sat in ``read()`` on the pipe until the next line."""
    write(tmp_path / "tools" / "slow.py", SLOW)
    with serving_stdio(tmp_path) as served:
        served.send({"id": 2, "method": "ping"})
        assert served.answer(2)["result"] == {}
        served.process.send_signal(signal.SIGINT)
        assert served.exit_status() == 0, served.stderr.read_text()
    assert "Traceback" not in served.stderr.read_text()


def test_sigterm_lets_the_call_in_flight_answer_then_exits_0(tmp_path: Path) -> None:
    """SIGTERM killed it at once: the call in flight never got an answer."""
    write(tmp_path / "tools" / "slow.py", SLOW)
    mark = tmp_path / "started.txt"
    with serving_stdio(tmp_path) as served:
        served.send(
            {
                "id": 3,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 2, "mark": str(mark)}},
            }
        )
        eventually(mark.exists, timeout=DEADLINE, message="the call never started")
        served.process.send_signal(signal.SIGTERM)
        answer = served.answer(3)
        assert answer["result"]["content"] == [{"type": "text", "text": "slept 2.0"}], answer
        assert served.exit_status() == 0, served.stderr.read_text()
    said = served.stderr.read_text()
    assert "shutting down: draining, new requests refused; 1 calls in flight get up to 30 s" in said
    assert "1 calls finished" in said and "Traceback" not in said


def test_a_second_signal_ends_stdio_serve_without_waiting_for_the_call(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "slow.py", SLOW)
    mark = tmp_path / "started.txt"
    with serving_stdio(tmp_path) as served:
        arguments = {"seconds": 120, "mark": str(mark)}
        served.send({"id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": arguments}})
        eventually(mark.exists, timeout=DEADLINE, message="the call never started")
        served.process.send_signal(signal.SIGTERM)
        eventually(lambda: "draining" in served.stderr.read_text(), message="the drain never began")
        served.process.send_signal(signal.SIGINT)
        assert served.exit_status() == 0, served.stderr.read_text()
