"""Benchmark 12: what an idle handshake-era session costs a serving replica, and whether it is given back.

``tool-loader serve --transport http`` runs as a subprocess (sessions on, an
idle timeout longer than one wave of clients takes). After a warm-up, ``n``
clients each send ``initialize`` and ``notifications/initialized`` and then go
quiet; the server's resident memory (``psutil``) before and after gives the
cost of an idle session. Once the idle timeout has ended every session (the
server logs each end, and lets go of it: its ``/metrics`` gauge of sessions to
notify reaches 0), a second wave of ``n`` clients comes: memory the
expired sessions gave back is reused, so the growth in that wave says how
much they kept (resident memory itself seldom shrinks after a free).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from .common import BenchResult, Options, Table, Target, scratch_dir

NAME = "sessions"
WARM_UP = 50
LIMIT_KB = 40.0

_TOOL = '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo."""
    return text
'''

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"},
    },
}
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class _Server:
    """A ``serve`` subprocess and the stderr lines it wrote so far."""

    def __init__(self, folder: Path, idle_timeout: float) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "loader",
                "-v",
                "serve",
                str(folder),
                "--transport",
                "http",
                "--port",
                "0",
                "--no-history",
                "--session-idle-timeout",
                str(idle_timeout),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.url: str | None = None
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + 60
        while self.url is None:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("serve did not start: " + "\n".join(self.lines[-10:]))
            time.sleep(0.05)

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))
            found = re.search(r"serving .* at (http://\S+)$", line)
            if found:
                self.url = found.group(1)

    def rss_kb(self) -> float:
        import psutil  # type: ignore[import-untyped,unused-ignore]

        return float(psutil.Process(self.process.pid).memory_info().rss) / 1024

    def open_session(self) -> None:
        assert self.url is not None
        session = _post(self.url, _INITIALIZE, {})
        _post(self.url, _INITIALIZED, {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})

    def expired(self) -> int:
        return sum(" idle timeout" in line for line in self.lines)

    def known_sessions(self) -> float:
        """The sessions the server still keeps for announcements (its ``/metrics`` gauge)."""
        assert self.url is not None
        with urllib.request.urlopen(self.url.rsplit("/", 1)[0] + "/metrics", timeout=30) as response:
            text = response.read().decode()
        found = re.search(r"^tool_loader_handshake_sessions (\S+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else 0.0

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> str:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
        return str(response.headers.get("mcp-session-id") or "")


def _measure(count: int, idle_timeout: float) -> dict[str, Any]:
    with scratch_dir("sessions") as base:
        folder = base / "tools"
        folder.mkdir()
        (folder / "echo.py").write_text(_TOOL)
        server = _Server(folder, idle_timeout)
        try:
            for _ in range(WARM_UP):
                server.open_session()
            before = server.rss_kb()
            started = time.perf_counter()
            for _ in range(count):
                server.open_session()
            opening = time.perf_counter() - started
            live = server.rss_kb()
            _wait(lambda: server.expired() >= WARM_UP + count, opening + idle_timeout + 60)
            _wait(lambda: server.known_sessions() == 0, idle_timeout + 60)
            for _ in range(count):
                server.open_session()
            again = server.rss_kb()
        finally:
            server.close()
    return {
        "sessions": count,
        "rss_before_kb": before,
        "rss_live_kb": live,
        "rss_second_wave_kb": again,
        "per_session_kb": (live - before) / count,
        "second_wave_per_session_kb": (again - live) / count,
        "opening_s": opening,
    }


def _wait(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("the sessions never expired")
        time.sleep(0.1)


def run(options: Options) -> BenchResult:
    """Memory per idle handshake-era session, and what expired sessions keep."""
    count = options.count(2000, 100)
    idle_timeout = 3.0 if options.quick else 30.0
    result = BenchResult(NAME)
    data = _measure(count, idle_timeout)
    result.raw = {"idle_timeout_s": idle_timeout, **data}
    table = Table(
        "12. idle handshake-era sessions: server memory (KB per session)",
        ["sessions", "idle session", "second wave, after expiry", "opening one wave (s)"],
        note=(
            f"{count} clients send initialize and notifications/initialized, then go quiet (RSS of the "
            f"serve process before and after); once the {idle_timeout:g} s idle timeout has ended them, "
            f"{count} more come: their growth is what the expired sessions kept."
        ),
    )
    table.rows.append(
        [
            str(count),
            f"{data['per_session_kb']:.1f}",
            f"{data['second_wave_per_session_kb']:.1f}",
            f"{data['opening_s']:.1f}",
        ]
    )
    result.tables.append(table)
    result.targets.append(
        Target(
            f"an idle session costs < {LIMIT_KB:g} KB",
            f"{data['per_session_kb']:.1f} KB",
            data["per_session_kb"] < LIMIT_KB,
        )
    )
    return result
