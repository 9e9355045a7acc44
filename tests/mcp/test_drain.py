"""SIGTERM to ``serve --transport http`` with calls in flight: they finish (or fail clearly), then exit 0.

A real subprocess in both isolation modes; the calls are raw JSON-RPC POSTs
(stateless, JSON answers), so an empty answer cannot hide behind a client library.
"""

from __future__ import annotations

import json
import signal
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from serving import DEADLINE, HttpAnswer, Served, get, post_json, serve_http
from support import eventually, write

SLOW = '''
import time
from loader import tool

@tool
def slow(seconds: float) -> str:
    """Sleep a while, then say so."""
    time.sleep(seconds)
    return f"slept {seconds}"
'''

ISOLATION = ["thread", "process"]


def call(served: Served, seconds: float, ident: int) -> HttpAnswer:
    body = {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {"seconds": seconds}},
    }
    return post_json(served.url, body, {"mcp-protocol-version": "2025-11-25"})


def result_of(answer: HttpAnswer) -> dict[str, Any]:
    """The JSON-RPC result of a stateless answer (plain JSON or one SSE event)."""
    assert answer.status == 200, (answer.status, answer.body)
    text = answer.body.decode()
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        assert data, f"an empty event stream: {text!r}"
        text = data[-1]
    message = json.loads(text)
    assert "result" in message, message
    return dict(message["result"])


def in_flight(served: Served, count: int, seconds: float) -> list[Future[HttpAnswer]]:
    pool = ThreadPoolExecutor(count)
    futures = [pool.submit(call, served, seconds, ident) for ident in range(count)]
    pool.shutdown(wait=False)
    return futures


def wait_until_running(served: Served, count: int) -> None:
    """The server has started ``count`` calls of ``slow`` (its debug log says so per call)."""
    eventually(
        lambda: (
            sum("tool_name=<slow>" in line and "mcp tools/call" in line for line in served.lines) >= count
        ),
        timeout=DEADLINE,
        message=f"{count} calls of slow never started",
    )


def exit_status(served: Served) -> int:
    return served.process.wait(DEADLINE)


@pytest.mark.parametrize("isolation", ISOLATION)
def test_sigterm_lets_calls_in_flight_finish_refuses_new_work_and_exits_0(
    isolation: str, tools_dir: Path, tmp_path: Path
) -> None:
    write(tools_dir / "slow.py", SLOW)
    with serve_http(
        tools_dir, tmp_path, "--stateless", "--isolation", isolation, wait_ready=True, verbose=2
    ) as served:
        calls = in_flight(served, 3, 3.0)
        wait_until_running(served, 3)
        signalled = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        ready = eventually(
            lambda: (answer := get(served.base + "/readyz", timeout=5)).status == 503 and answer,
            timeout=DEADLINE,
            message="/readyz never turned 503",
        )
        assert ready.json()["draining"] is True
        assert served.process.poll() is None, "the process died of the signal instead of draining"
        refused = call(served, 0.0, 99)
        assert refused.status == 503
        error = json.loads(refused.body)["error"]
        assert "shutting down" in error["message"], error
        results = [result_of(future.result(DEADLINE)) for future in calls]
        assert all(not result["isError"] for result in results), results
        assert [result["content"][0]["text"] for result in results] == ["slept 3.0"] * 3
        assert exit_status(served) == 0
        drained = time.monotonic() - signalled
    print(f"\ndrain ({isolation}): 3 calls of 3 s in flight, SIGTERM to exit {drained:.2f} s")
    assert any("draining" in line for line in served.lines), served.lines


@pytest.mark.parametrize("isolation", ISOLATION)
def test_calls_still_running_when_the_grace_ends_get_an_error_result(
    isolation: str, tools_dir: Path, tmp_path: Path
) -> None:
    write(tools_dir / "slow.py", SLOW)
    with serve_http(
        tools_dir,
        tmp_path,
        "--stateless",
        "--isolation",
        isolation,
        "--shutdown-grace",
        "1",
        wait_ready=True,
        verbose=2,
    ) as served:
        calls = in_flight(served, 2, 60.0)
        wait_until_running(served, 2)
        served.process.send_signal(signal.SIGINT)  # Ctrl-C drains the same way
        results = [result_of(future.result(DEADLINE)) for future in calls]
        assert exit_status(served) == 0
    for result in results:
        assert result["isError"], result
        assert "shutting down" in result["content"][0]["text"], result


BIG = '''
import time
from loader import tool

@tool
def big(seconds: float, size: int) -> str:
    """Sleep a while, then answer ``size`` characters."""
    time.sleep(seconds)
    return "x" * size
'''


def test_answers_that_take_a_while_to_write_are_written_whole_after_the_drain(
    tools_dir: Path, tmp_path: Path
) -> None:
    # The SSE library ends every event stream once uvicorn's should_exit is set; a
    # drain that ends when the calls end set it before their answers were written.
    write(tools_dir / "big.py", BIG)
    size = 8 * 1024 * 1024
    with serve_http(tools_dir, tmp_path, "--stateless", wait_ready=True, verbose=2) as served:
        pool = ThreadPoolExecutor(4)
        arguments = {"seconds": 2.0, "size": size}
        bodies = [
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "tools/call",
                "params": {"name": "big", "arguments": arguments},
            }
            for ident in range(4)
        ]
        futures = [
            pool.submit(post_json, served.url, body, {"mcp-protocol-version": "2025-11-25"})
            for body in bodies
        ]
        pool.shutdown(wait=False)
        eventually(
            lambda: sum("tool_name=<big>" in line and "mcp tools/call" in line for line in served.lines) >= 4,
            timeout=DEADLINE,
            message="4 calls of big never started",
        )
        served.process.send_signal(signal.SIGTERM)
        results = [result_of(future.result(DEADLINE)) for future in futures]
        assert exit_status(served) == 0
    assert [len(result["content"][0]["text"]) for result in results] == [size] * 4


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ISOLATION)
async def test_sdk_clients_that_call_without_listing_receive_their_results_through_a_drain(
    isolation: str, tools_dir: Path, tmp_path: Path
) -> None:
    # The SDK lists the tools after a call (to check the result against the output schema) before
    # it hands the result over: a drain that refuses the listing loses every result it waited for.
    write(tools_dir / "slow.py", SLOW)
    with serve_http(tools_dir, tmp_path, "--isolation", isolation, wait_ready=True, verbose=2) as served:
        results: dict[int, types.CallToolResult] = {}

        async def call_once(index: int) -> None:
            async with Client(served.url, mode="legacy") as client:
                results[index] = await client.call_tool("slow", {"seconds": 3.0})

        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as group:
                for index in range(3):
                    group.start_soon(call_once, index)
                while (
                    sum("tool_name=<slow>" in line and "mcp tools/call" in line for line in served.lines) < 3
                ):
                    await anyio.sleep(0.02)
                served.process.send_signal(signal.SIGTERM)
        assert exit_status(served) == 0
    assert sorted(results) == [0, 1, 2]
    for result in results.values():
        assert not result.is_error, result
        assert result.content == [types.TextContent(type="text", text="slept 3.0")]
