"""``CallsInFlight`` on a real event loop: a drain waits for calls, stops the rest, and leaves the
requests' own tasks as it found them (a call runs in its request's task, not in one of its own)."""

from __future__ import annotations

import asyncio

import pytest

from loader.mcp.drain import CallsInFlight
from loader.types import ToolResult

pytestmark = pytest.mark.anyio


def _answer(text: str) -> ToolResult:
    return {"toolUseId": "t", "status": "success", "content": [{"text": text}]}


async def _request(calls: CallsInFlight, work: asyncio.Future[None], *, swallow: bool) -> tuple[object, int]:
    """A request's task: one call through ``calls``; what it got, and its task's pending cancels after."""

    async def tool() -> ToolResult:
        try:
            await work
        except asyncio.CancelledError:
            if not swallow:
                raise
            return _answer("caught the cancel and answered")
        return _answer("done")

    result = await calls.run(tool())
    task = asyncio.current_task()
    assert task is not None
    return result, task.cancelling()


async def test_a_drain_waits_for_calls_that_end_within_the_grace() -> None:
    calls = CallsInFlight()
    work: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    request = asyncio.create_task(_request(calls, work, swallow=False))
    await asyncio.sleep(0)
    assert len(calls) == 1
    asyncio.get_running_loop().call_later(0.05, work.set_result, None)
    report = await calls.drain(30.0)
    assert (report.finished, report.stopped) == (1, 0)
    assert await request == (_answer("done"), 0)
    assert len(calls) == 0


async def test_a_call_still_running_when_the_grace_ends_is_stopped_and_its_task_goes_on() -> None:
    calls = CallsInFlight()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    request = asyncio.create_task(_request(calls, never, swallow=False))
    await asyncio.sleep(0)
    report = await calls.drain(0.05)
    assert (report.finished, report.stopped) == (0, 1)
    assert await request == (None, 0)  # None: the server answers "shutting down"; no cancel left pending


async def test_a_tool_that_catches_the_drains_cancel_is_answered_and_its_task_goes_on() -> None:
    calls = CallsInFlight()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    request = asyncio.create_task(_request(calls, never, swallow=True))
    await asyncio.sleep(0)
    await calls.drain(0.05)
    assert await request == (_answer("caught the cancel and answered"), 0)


async def test_a_clients_cancel_still_cancels_the_request() -> None:
    calls = CallsInFlight()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    request = asyncio.create_task(_request(calls, never, swallow=False))
    await asyncio.sleep(0)
    request.cancel()
    try:
        await request
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the request's cancel was swallowed")
    assert request.cancelled() and len(calls) == 0
