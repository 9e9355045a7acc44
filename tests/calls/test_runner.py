"""Bounded registry calls: the call timeout, the per-tool cap, and which thread or loop a tool runs on."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Any

import pytest
from support import eventually

from loader.calls.runner import CallLimits, CallRunner
from loader.registry.tool_registry import ToolRegistry
from loader.reload.loader import LoaderConfig, ToolLoader
from loader.tools.class_tool import ClassTool, decorate_class
from loader.tools.function_tool import FunctionTool
from loader.types import AgentTool, ToolGenerator, ToolResult, ToolSpec, ToolUse

WAIT = 20.0


def text(result: ToolResult) -> str:
    return str(result["content"][0].get("text"))


class Gate:
    """A sync tool body that blocks until opened, counting the calls that started."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.started = 0
        self.finished = 0
        self._lock = threading.Lock()

    def tool(self, name: str = "stuck") -> FunctionTool[..., Any]:
        def body() -> str:
            """Blocks until the gate opens."""
            with self._lock:
                self.started += 1
            self.opened.wait(WAIT)
            with self._lock:
                self.finished += 1
            return "opened"

        return FunctionTool(body, name=name)


def quick() -> str:
    """Answers at once."""
    return "quick"


@pytest.mark.parametrize(
    ("timeout", "cap"),
    [(-1, 8), (float("nan"), 8), ("5", 8), (True, 8), (None, 0), (None, 1.5), (None, True)],
)
def test_limits_refuse_nonsense(timeout: Any, cap: Any) -> None:
    with pytest.raises(ValueError, match=r"call timeout|max_concurrent_per_tool"):
        CallLimits(timeout=timeout, max_concurrent_per_tool=cap)


def test_limits_defaults_and_zero_disables() -> None:
    assert CallLimits() == CallLimits(timeout=60.0, max_concurrent_per_tool=8)
    assert CallLimits(timeout=0).timeout is None
    assert CallLimits(timeout=float("inf")).timeout is None
    assert ToolRegistry().limits == CallLimits()
    assert ToolRegistry(limits=CallLimits(timeout=3)).limits.timeout == 3


def test_a_sync_tool_past_its_timeout_returns_an_error_naming_it() -> None:
    gate = Gate()
    registry = ToolRegistry(limits=CallLimits(timeout=0.2))
    registry.register(gate.tool())
    try:
        result = asyncio.run(registry.ainvoke("stuck", {}))
        assert result["status"] == "error"
        assert (
            text(result)
            == "Error: ToolCallTimeout - tool 'stuck' did not finish within the 0.2 s call timeout"
        )
    finally:
        gate.opened.set()


def test_an_async_call_past_its_timeout_is_cancelled() -> None:
    cancelled = threading.Event()

    async def forever() -> str:
        """Never finishes on its own."""
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    registry = ToolRegistry(limits=CallLimits(timeout=0.2))
    registry.register(FunctionTool(forever))
    result = asyncio.run(registry.ainvoke("forever", {}))
    assert text(result).startswith("Error: ToolCallTimeout - tool 'forever' did not finish")
    assert cancelled.is_set()
    cancelled.clear()
    result = registry.invoke("forever", {})  # from sync code too
    assert text(result).startswith("Error: ToolCallTimeout - tool 'forever' did not finish")
    assert cancelled.is_set()


def test_calls_beyond_the_cap_wait_in_line_and_other_tools_keep_answering() -> None:
    gate = Gate()
    registry = ToolRegistry(limits=CallLimits(timeout=WAIT, max_concurrent_per_tool=2))
    registry.register(gate.tool())
    registry.register(FunctionTool(quick))
    results: list[ToolResult] = []
    callers = [
        threading.Thread(target=lambda: results.append(asyncio.run(registry.ainvoke("stuck", {}))))
        for _ in range(5)
    ]
    for caller in callers:
        caller.start()
    try:
        eventually(lambda: gate.started == 2, WAIT)
        assert text(asyncio.run(registry.ainvoke("quick", {}))) == "quick"
        assert gate.started == 2  # the other three wait for a slot
    finally:
        gate.opened.set()
    for caller in callers:
        caller.join(WAIT)
    assert [text(r) for r in results] == ["opened"] * 5
    assert gate.started == 5


def test_a_call_that_never_got_a_slot_says_so_and_never_runs() -> None:
    gate = Gate()
    registry = ToolRegistry(limits=CallLimits(timeout=0.3, max_concurrent_per_tool=1))
    registry.register(gate.tool())
    first = threading.Thread(target=lambda: asyncio.run(registry.ainvoke("stuck", {})))
    first.start()
    try:
        eventually(lambda: gate.started == 1, WAIT)
        result = asyncio.run(registry.ainvoke("stuck", {}))
        assert "it never started: all 1 calls this tool may run at once were busy" in text(result)
    finally:
        gate.opened.set()
    first.join(WAIT)
    registry.close()
    assert gate.started == 1  # the call that waited in line never ran


def test_a_retired_tool_is_cleaned_up_only_after_its_abandoned_call_returns() -> None:
    gate = Gate()
    cleaned = threading.Event()

    @decorate_class
    class Slow:
        """Blocks until the gate opens."""

        def execute(self, params: dict[str, Any]) -> str:
            gate.opened.wait(WAIT)
            return "done"

        def cleanup(self) -> None:
            cleaned.set()

    registry = ToolRegistry(limits=CallLimits(timeout=0.2))
    registry.register(ClassTool(Slow()))
    assert "ToolCallTimeout" in text(asyncio.run(registry.ainvoke("slow", {})))
    registry.unregister("slow")
    assert not cleaned.is_set()  # its call still runs
    gate.opened.set()
    assert cleaned.wait(WAIT)


def test_async_class_tools_run_on_the_callers_loop_and_sync_tools_off_it() -> None:
    seen: dict[str, Any] = {}

    @decorate_class
    class AsyncClass:
        """Async class tool."""

        async def execute(self, params: dict[str, Any]) -> str:
            seen["class"] = (asyncio.get_running_loop(), threading.get_ident())
            return "ok"

    def sync_body() -> str:
        """Sync."""
        seen["sync"] = threading.get_ident()
        return "ok"

    registry = ToolRegistry()
    registry.register(ClassTool(AsyncClass()))
    registry.register(FunctionTool(sync_body))

    async def main() -> tuple[asyncio.AbstractEventLoop, int]:
        await registry.ainvoke("async_class", {})
        await registry.ainvoke("sync_body", {})
        return asyncio.get_running_loop(), threading.get_ident()

    loop, ident = asyncio.run(main())
    assert seen["class"] == (loop, ident)
    assert seen["sync"] != ident


def test_invoke_runs_a_sync_tool_in_the_calling_thread() -> None:
    """From synchronous code no thread hand-over: the caller's thread is the tool's."""
    seen: list[int] = []

    def where() -> str:
        """Where am I."""
        seen.append(threading.get_ident())
        return "ok"

    for limits in (CallLimits(), CallLimits(timeout=None)):
        registry = ToolRegistry(limits=limits)
        registry.register(FunctionTool(where))
        registry.invoke("where", {})
    assert seen == [threading.get_ident()] * 2


# -- streams under the limits (tool-loader call) ----------------------------------------------------


async def collect(runner: CallRunner, tool: Any) -> list[Any]:
    use: ToolUse = {"toolUseId": "t1", "name": tool.tool_name, "input": {}}
    return [event async for event in runner.astream(tool, use, {})]


def test_astream_hands_over_a_sync_tools_events_from_its_lane() -> None:
    threads: list[int] = []

    def counting() -> Generator[int, None, None]:
        """Yields three events."""
        threads.append(threading.get_ident())
        yield from (1, 2, 3)

    events = asyncio.run(collect(CallRunner(), FunctionTool(counting)))
    assert events[:3] == [1, 2, 3]
    assert events[3]["status"] == "success"
    assert threads and threads[0] != threading.get_ident()


def test_astream_stops_a_stuck_stream_at_its_deadline() -> None:
    gate = Gate()
    runner = CallRunner(CallLimits(timeout=0.2))
    try:
        events = asyncio.run(collect(runner, gate.tool()))
    finally:
        gate.opened.set()
    assert len(events) == 1
    assert text(events[0]).startswith("Error: ToolCallTimeout - tool 'stuck' did not finish within the 0.2 s")

    cancelled = threading.Event()

    async def aslow() -> AsyncGenerator[str, None]:
        """Streams, then hangs."""
        yield "first"
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    events = asyncio.run(collect(runner, FunctionTool(aslow)))
    assert events[0] == "first"
    assert text(events[1]).startswith("Error: ToolCallTimeout - tool 'aslow' did not finish")
    assert cancelled.is_set()


def test_astream_contains_what_a_foreign_stream_raises() -> None:
    class Exiting(AgentTool):
        @property
        def tool_name(self) -> str:
            return "exiting"

        @property
        def tool_spec(self) -> ToolSpec:
            return {"name": "exiting", "description": "Exits.", "inputSchema": {"json": {"type": "object"}}}

        @property
        def tool_type(self) -> str:
            return "foreign"

        async def stream(
            self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
        ) -> ToolGenerator:
            yield "before"
            raise SystemExit(4)

    events = asyncio.run(collect(CallRunner(), Exiting()))
    assert events[0] == "before"
    assert text(events[1]) == "Error: SystemExit - 4"


def test_a_runaway_python_loop_is_stopped_at_its_deadline_and_frees_its_slot() -> None:
    ended = threading.Event()

    def spin(forever: bool) -> str:
        """Loops forever when told to."""
        try:
            while forever:
                pass
        finally:
            if forever:
                ended.set()
        return "free"

    registry = ToolRegistry(limits=CallLimits(timeout=0.3, max_concurrent_per_tool=1))
    registry.register(FunctionTool(spin))
    result = asyncio.run(registry.ainvoke("spin", {"forever": True}))
    assert text(result).startswith("Error: ToolCallTimeout - tool 'spin' did not finish")
    assert ended.wait(WAIT)
    assert (
        text(asyncio.run(registry.ainvoke("spin", {"forever": False}))) == "free"
    )  # the one slot is free again


def test_a_real_ctrl_c_stops_a_stream_stuck_in_a_sync_tool() -> None:
    """What ``tool-loader call`` gets from ``astream``: the loop never waits on tool code, so Ctrl-C works."""
    gate = Gate()
    runner = CallRunner(CallLimits(timeout=WAIT))

    def interrupt() -> None:
        if eventually(lambda: gate.started == 1, WAIT):
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(collect(runner, gate.tool()))
    finally:
        gate.opened.set()
        sender.join(WAIT)


def test_the_loader_config_sets_the_limits_of_the_registry_it_creates(tmp_path: Path) -> None:
    config = LoaderConfig(call_timeout=5, max_concurrent_calls_per_tool=2, entry_point_plugins=False)
    loader = ToolLoader([tmp_path], config=config)
    try:
        assert loader.registry.limits == CallLimits(timeout=5, max_concurrent_per_tool=2)
    finally:
        loader.close()
    own = ToolRegistry(limits=CallLimits(timeout=1))
    loader = ToolLoader([tmp_path], own, config=config)
    try:
        assert loader.registry.limits.timeout == 1  # a registry passed in keeps its own limits
    finally:
        loader.close()
    with pytest.raises(ValueError, match="call timeout"):
        ToolLoader([tmp_path], config=LoaderConfig(call_timeout=-1))
