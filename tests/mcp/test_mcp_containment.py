"""Over MCP, a tool cannot stop the server, starve other tools, or outlive a client's cancellation.

Real MCP client and server: in memory for the server object, over stdio for
the ``tool-loader serve`` command.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from serving import stdio_params
from support import text_of, write

from loader.calls.runner import CallLimits
from loader.mcp.server import MCPToolServer
from loader.registry.tool_registry import ToolRegistry
from loader.tools.function_tool import FunctionTool

pytestmark = pytest.mark.anyio

DEADLINE = 20.0


def quick() -> str:
    """Answers at once."""
    return "quick"


async def until(predicate: Callable[[], object], timeout: float = DEADLINE) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.005)


async def test_sixty_stuck_calls_of_one_sync_tool_never_starve_another() -> None:
    """The issue's figure: 60 never-ending calls in flight, another sync tool still answers, then and later."""
    release = threading.Event()
    started: list[int] = []

    def stuck() -> str:
        """Never ends while the test runs."""
        started.append(1)
        release.wait(120)
        return "released"

    registry = ToolRegistry(limits=CallLimits(timeout=120))
    registry.register(FunctionTool(stuck))
    registry.register(FunctionTool(quick))
    server = MCPToolServer(registry)
    try:
        async with Client(server.server, mode="legacy") as client, anyio.create_task_group() as group:
            for _ in range(60):
                group.start_soon(client.call_tool, "stuck", {})
            await until(lambda: len(started) == registry.limits.max_concurrent_per_tool)
            with anyio.fail_after(5):  # the issue asks under 1 s; a generous deadline for a busy machine
                assert text_of(await client.call_tool("quick", {})) == "quick"
            ten_seconds_later = time.monotonic() + 10
            await until(lambda: time.monotonic() >= ten_seconds_later, 15)
            with anyio.fail_after(5):
                assert text_of(await client.call_tool("quick", {})) == "quick"
            assert len(started) == registry.limits.max_concurrent_per_tool  # the rest still wait in line
            group.cancel_scope.cancel()
    finally:
        release.set()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_cancellation_cancels_an_async_tool(mode: str) -> None:
    entered = anyio.Event()
    cancelled = threading.Event()

    async def forever() -> str:
        """Waits until cancelled."""
        entered.set()
        try:
            await anyio.sleep(3600)
        except BaseException:
            cancelled.set()
            raise
        return "never"

    registry = ToolRegistry()
    registry.register(FunctionTool(forever))
    registry.register(FunctionTool(quick))
    async with Client(MCPToolServer(registry).server, mode=mode) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "forever", {})
            with anyio.fail_after(DEADLINE):
                await entered.wait()
            group.cancel_scope.cancel()  # the client abandons the call: it sends notifications/cancelled
        await until(cancelled.is_set)
        assert text_of(await client.call_tool("quick", {})) == "quick"


async def test_a_client_cancellation_stops_a_sync_tool_spinning_in_python() -> None:
    entered = threading.Event()
    ended = threading.Event()

    def spin() -> str:
        """Loops until stopped."""
        entered.set()
        try:
            while True:
                pass
        finally:
            ended.set()

    registry = ToolRegistry(limits=CallLimits(timeout=120, max_concurrent_per_tool=1))
    registry.register(FunctionTool(spin))
    async with Client(MCPToolServer(registry).server, mode="legacy") as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "spin", {})
            await until(entered.is_set)
            group.cancel_scope.cancel()
        await until(ended.is_set)


async def test_a_tool_raising_system_exit_is_an_error_and_the_server_keeps_answering() -> None:
    def exits() -> str:
        """Exits."""
        sys.exit(3)

    registry = ToolRegistry()
    registry.register(FunctionTool(exits))
    registry.register(FunctionTool(quick))
    async with Client(MCPToolServer(registry).server, mode="legacy") as client:
        result = await client.call_tool("exits", {})
        assert result.is_error is True
        assert text_of(result) == "Error: SystemExit - 3"
        assert text_of(await client.call_tool("quick", {})) == "quick"


HOSTILE = '''
import sys
from loader import tool

@tool
def exits(code: int = 3) -> str:
    """Exits like argparse on bad input."""
    sys.exit(code)

@tool
def interrupts() -> str:
    """Raises KeyboardInterrupt."""
    raise KeyboardInterrupt("from the tool")

@tool
def echo(text: str) -> str:
    """Echo."""
    return text
'''


async def test_serve_over_stdio_survives_system_exit_and_keyboard_interrupt(
    tools_dir: Path, tmp_path: Path
) -> None:
    write(tools_dir / "hostile.py", HOSTILE)
    params = stdio_params("serve", str(tools_dir), cwd=tmp_path)
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            with anyio.fail_after(DEADLINE):
                exited = await client.call_tool("exits", {"code": 2})
                assert (exited.is_error, text_of(exited)) == (True, "Error: SystemExit - 2")
                interrupted = await client.call_tool("interrupts", {})
                assert interrupted.is_error is True
                assert text_of(interrupted) == "Error: KeyboardInterrupt - from the tool"
                assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
