"""``tool-loader serve --transport http`` as a real subprocess, and plain HTTP against it (stdlib only)."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import warm_cli

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

__all__ = [
    "GREET",
    "INITIALIZE",
    "HttpAnswer",
    "Served",
    "get",
    "post_json",
    "serve_http",
    "server_env",
    "stdio_params",
]

DEADLINE = 20.0


@dataclass
class Served:
    """A running ``serve`` process: its MCP URL, its base URL and its stderr lines so far."""

    process: subprocess.Popen[str]
    url: str
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.url.rsplit("/", 1)[0]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def get(url: str, headers: dict[str, str] | None = None, timeout: float = DEADLINE) -> HttpAnswer:
    """One GET; an HTTP error status is an answer, not an exception."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return HttpAnswer(
                response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
            )
    except urllib.error.HTTPError as error:
        return HttpAnswer(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


def server_env(**extra: str) -> dict[str, str]:
    """The test environment minus ``PYTHONDONTWRITEBYTECODE`` (users' machines write bytecode), plus ``extra``."""
    return {**warm_cli.base_env(), **extra}


def stdio_params(*args: str, cwd: Path | str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """``tool-loader ARGS`` as the MCP SDK's stdio client starts it: a fork of a warm interpreter where
    that shows the same (``warm_cli.command``), else ``python -m loader``; ``env``: ``server_env()``."""
    from mcp.client.stdio import StdioServerParameters  # imported here: only the MCP tests need the SDK

    env = env if env is not None else server_env()
    argv = warm_cli.command(list(args), env)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(cwd))


@contextmanager
def serve_http(
    served_dir: Path,
    cwd: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    wait_ready: bool = False,
    verbose: int = 0,
    max_open_files: int | None = None,
) -> Iterator[Served]:
    """Start ``serve DIR --transport http --port 0 EXTRA...``; yield once it listens (or is ready).

    ``max_open_files`` lowers the server's descriptor limit (``RLIMIT_NOFILE``), as a container's may be.
    The server is a fork of a warm interpreter where that shows the same (``warm_cli.command``).
    """

    def limit_files() -> None:
        if max_open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files))

    args = [
        *(["-" + "v" * verbose] if verbose else []),
        "serve",
        str(served_dir),
        "--transport",
        "http",
        "--port",
        "0",
        *extra,
    ]
    env = env or server_env()
    # A lowered limit must be the server's own, so that server starts as a fresh interpreter.
    fresh = [sys.executable, "-m", "loader", *args]
    process = subprocess.Popen(
        warm_cli.command(args, env) if max_open_files is None else fresh,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit_files if max_open_files is not None else None,
    )
    lines: list[str] = []
    found = threading.Event()
    marker = re.compile(r"^serving \d+ tools? at http://" if wait_ready else r"^listening at http://")

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            if marker.search(line):
                found.set()
        found.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert found.wait(DEADLINE), lines
        match = next((re.search(r" at (http://\S+)$", line) for line in lines if marker.search(line)), None)
        assert match is not None, lines
        yield Served(process, match.group(1), lines)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        reader.join(10)


GREET = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"
'''


def post_json(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> HttpAnswer:
    """A raw MCP POST (JSON-RPC body, both accept types), for what the SDK client hides."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:
            return HttpAnswer(
                response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
            )
    except urllib.error.HTTPError as error:
        return HttpAnswer(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
