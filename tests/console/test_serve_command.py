"""``tool-loader serve`` as a real subprocess, driven by the MCP SDK's own client over stdio and HTTP.

The server runs from a temporary working directory (never the repository
root, whose ``loader/`` is not what an installed package looks like) and with
``PYTHONDONTWRITEBYTECODE`` unset, as on users' machines, so reloads also
prove stale bytecode is never served.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from serving import serve_http, server_env, stdio_params
from support import text_of, write

from loader.console.cli import build_parser, main

pytestmark = pytest.mark.anyio

DEADLINE = 20.0

GREET_V1 = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"
'''

GREET_V2 = '''
from loader import tool

@tool
def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone, loudly."""
    return f"HELLO {name.upper()}{punctuation}"

@tool
def farewell(name: str) -> str:
    """Say goodbye."""
    return f"bye {name}"
'''

ECHO = '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "loader", "serve", *args]


async def until(predicate: Callable[[], Any], timeout: float = DEADLINE, message: str = "") -> Any:
    with anyio.fail_after(timeout):
        while not (value := predicate()):
            await anyio.sleep(0.01)
    return value


class ChangeCounter:
    """Counts list-changed announcements for one client, in either protocol era."""

    def __init__(self) -> None:
        self.count = 0

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1


@asynccontextmanager
async def watching(client: Client, counter: ChangeCounter) -> AsyncIterator[None]:
    """Count changes: a 2026-07-28 client on its listen stream, an older one from its notifications."""
    if client.protocol_version == "2026-07-28":
        async with client.listen(tools_list_changed=True) as subscription, anyio.create_task_group() as group:

            async def consume() -> None:
                async for _ in subscription:
                    counter.count += 1

            group.start_soon(consume)
            yield
            group.cancel_scope.cancel()
    else:
        yield


async def names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


async def follow_edits(client: Client, counter: ChangeCounter, tools_dir: Path) -> None:
    """The whole life of a tool file as one client sees it."""
    assert client.server_capabilities.tools == types.ToolsCapability(list_changed=True)
    assert await names(client) == ["echo", "greet"]
    assert text_of(await client.call_tool("greet", {"name": "ada"})) == "hello ada"
    bad = await client.call_tool("greet", {"nom": "ada"})
    assert bad.is_error is True
    assert "name: missing required parameter" in text_of(bad)

    async with watching(client, counter):
        write(tools_dir / "greet.py", GREET_V2)
        await until(lambda: counter.count >= 1)
        assert await names(client) == ["echo", "farewell", "greet"]
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["greet"].input_schema == {
            "type": "object",
            "properties": {
                "name": {"description": "Parameter name", "type": "string"},
                "punctuation": {"default": "!", "description": "Parameter punctuation", "type": "string"},
            },
            "required": ["name"],
        }
        assert text_of(await client.call_tool("greet", {"name": "ada"})) == "HELLO ADA!"
        assert text_of(await client.call_tool("farewell", {"name": "ada"})) == "bye ada"

        seen = counter.count
        (tools_dir / "greet.py").unlink()
        await until(lambda: counter.count > seen)
        assert await names(client) == ["echo"]
        gone = await client.call_tool("greet", {"name": "ada"})
    assert gone.is_error is True
    assert text_of(gone) == "Unknown tool: greet. Available tools: echo"


@pytest.fixture
def served_dir(tools_dir: Path) -> Path:
    write(tools_dir / "greet.py", GREET_V1)
    write(tools_dir / "echo.py", ECHO)
    return tools_dir


# -- stdio ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_client_follows_every_edit(served_dir: Path, tmp_path: Path, mode: str) -> None:
    params = stdio_params(
        "serve",
        str(served_dir),
        cwd=str(tmp_path),
    )
    counter = ChangeCounter()
    log_path = tmp_path / "stderr.log"
    with log_path.open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode=mode, message_handler=counter.on_message
        ) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            await follow_edits(client, counter, served_dir)
    log = log_path.read_text()
    assert f"loaded 2 tools from 2 files in {served_dir}" in log
    assert re.search(r"tools changed \(generation \d+\): \+farewell ~greet\n", log), log
    assert re.search(r"tools changed \(generation \d+\): -farewell -greet\n", log), log


async def test_stdio_reports_a_broken_save_and_keeps_serving(served_dir: Path, tmp_path: Path) -> None:
    params = stdio_params(
        "serve",
        str(served_dir),
        cwd=str(tmp_path),
    )
    log_path = tmp_path / "stderr.log"
    with log_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            write(served_dir / "greet.py", GREET_V1 + "\ndef broken(:\n")
            await until(lambda: "load failed" in log_path.read_text())
            assert text_of(await client.call_tool("greet", {"name": "ada"})) == "hello ada"
            write(served_dir / "greet.py", GREET_V1.replace("hello", "hi"))
            await until(lambda: "recovered" in log_path.read_text())
            assert text_of(await client.call_tool("greet", {"name": "ada"})) == "hi ada"
    log = log_path.read_text()
    greet_file = served_dir.resolve() / "greet.py"
    broken_line = (GREET_V1.lstrip() + "\ndef broken(:\n").splitlines().index("def broken(:") + 1
    assert re.search(
        rf"load failed: {re.escape(str(greet_file))}: SyntaxError: .* "
        rf"\({re.escape(str(greet_file))}:{broken_line}\); "
        r"still serving the last good version \(greet\)\n",
        log,
    ), log
    assert f"recovered: {greet_file} loads again (greet)\n" in log


# -- streamable HTTP -------------------------------------------------------------


async def test_http_clients_of_both_eras_follow_every_edit(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, wait_ready=True) as served:
        url, lines = served.url, served.lines
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        assert "serving 2 tools at " + url in lines
        legacy_counter, modern_counter = ChangeCounter(), ChangeCounter()
        async with (
            Client(url, mode="legacy", message_handler=legacy_counter.on_message) as legacy,
            Client(url, mode="auto") as modern,
            watching(modern, modern_counter),
        ):
            assert legacy.protocol_version == "2025-11-25"
            assert modern.protocol_version == "2026-07-28"
            for client in (legacy, modern):
                assert client.server_capabilities.tools == types.ToolsCapability(list_changed=True)
                assert await names(client) == ["echo", "greet"]

            write(served_dir / "greet.py", GREET_V2)
            await until(lambda: legacy_counter.count >= 1 and modern_counter.count >= 1)
            for client in (legacy, modern):
                assert await names(client) == ["echo", "farewell", "greet"]
                assert text_of(await client.call_tool("greet", {"name": "bo"})) == "HELLO BO!"

            seen = (legacy_counter.count, modern_counter.count)
            (served_dir / "greet.py").unlink()
            await until(lambda: legacy_counter.count > seen[0] and modern_counter.count > seen[1])
            for client in (legacy, modern):
                assert await names(client) == ["echo"]
                gone = await client.call_tool("farewell", {"name": "bo"})
                assert gone.is_error is True
                assert text_of(gone) == "Unknown tool: farewell. Available tools: echo"
        await until(lambda: any("-farewell -greet" in line for line in lines))


async def test_http_each_client_follows_edits_alone(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, wait_ready=True) as served:
        counter = ChangeCounter()
        async with Client(served.url, mode="legacy", message_handler=counter.on_message) as client:
            await follow_edits(client, counter, served_dir)


# -- arguments -------------------------------------------------------------------


def test_http_binds_loopback_at_mcp_by_default() -> None:
    args = build_parser().parse_args(["serve", "tools"])
    assert (args.transport, args.host, args.port, args.path) == ("stdio", "127.0.0.1", 8000, "/mcp")


def test_a_missing_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", str(tmp_path / "nowhere")]) == 2
    err = " ".join(capsys.readouterr().err.split())  # the console may wrap long paths
    assert f"not a directory: {tmp_path / 'nowhere'}" in err


def test_a_taken_port_is_a_usage_error(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, wait_ready=True) as served:
        port = str(served.port)
        second = subprocess.run(
            serve_command(str(served_dir), "--transport", "http", "--port", port),
            cwd=tmp_path,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
    assert second.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in " ".join(second.stderr.split())


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_each_load_failure_is_printed_once(served_dir: Path, tmp_path: Path, isolation: str) -> None:
    write(served_dir / "bad.py", "total = (1,\n")
    with serve_http(served_dir, tmp_path, "--isolation", isolation, wait_ready=True) as served:
        write(served_dir / "worse.py", "def broken(:\n")
        deadline = time.monotonic() + 20
        while not any("worse.py" in line for line in served.lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        lines = list(served.lines)
    at_start = [line for line in lines if "'(' was never closed" in line]
    after_a_save = [line for line in lines if "worse.py" in line]
    assert len(at_start) == 1, lines
    assert len(after_a_save) == 1, lines
    assert any(line.startswith(f"loaded 2 tools from 3 files in {served_dir}") for line in lines), lines
