"""A tool's SystemExit, KeyboardInterrupt or GeneratorExit becomes an error result on every call path.

Every tool style (sync and async functions and generators, class tools,
module tools, a third-party ``AgentTool``) is called through ``invoke``,
``ainvoke``, ``stream`` and the registry. Direct calls run in a worker thread:
in the main thread a ``KeyboardInterrupt`` is taken as the host's Ctrl-C
(``loader.calls.containment``), which is tested on its own with a real signal.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

import pytest

from loader.calls.containment import belongs_to_caller
from loader.registry.tool_registry import ToolRegistry
from loader.tools.class_tool import ClassTool, decorate_class
from loader.tools.function_tool import FunctionTool
from loader.tools.module_tool import ModuleTool
from loader.types import AgentTool, ToolGenerator, ToolResult, ToolSpec, ToolUse

WAIT = 20.0

FAULTS: list[type[BaseException]] = [SystemExit, KeyboardInterrupt, GeneratorExit]


def _raise(kind: type[BaseException]) -> None:
    if kind is SystemExit:
        sys.exit(3)
    raise kind("from the tool")


def function_tools(kind: type[BaseException]) -> list[AgentTool]:
    def plain(x: int = 0) -> str:
        """Plain."""
        _raise(kind)
        return "unreachable"

    async def coroutine(x: int = 0) -> str:
        """Coroutine."""
        _raise(kind)
        return "unreachable"

    def generator(x: int = 0) -> Generator[str, None, None]:
        """Generator."""
        yield "first"
        _raise(kind)

    async def agenerator(x: int = 0) -> AsyncGenerator[str, None]:
        """Async generator."""
        yield "first"
        _raise(kind)

    return [FunctionTool(f) for f in (plain, coroutine, generator, agenerator)]


def class_tools(kind: type[BaseException]) -> list[AgentTool]:
    class SyncTool:
        """Sync class tool."""

        def execute(self, params: dict[str, Any]) -> str:
            _raise(kind)
            return "unreachable"

    class AsyncTool:
        """Async class tool."""

        async def execute(self, params: dict[str, Any]) -> str:
            _raise(kind)
            return "unreachable"

    return [ClassTool(decorate_class(cls)()) for cls in (SyncTool, AsyncTool)]


def module_tools(kind: type[BaseException]) -> list[AgentTool]:
    spec: ToolSpec = {
        "name": "mod",
        "description": "Module tool.",
        "inputSchema": {"json": {"type": "object"}},
    }

    def mod(tool_use: ToolUse, **kwargs: Any) -> ToolResult:
        _raise(kind)
        raise AssertionError

    async def amod(tool_use: ToolUse, **kwargs: Any) -> ToolResult:
        _raise(kind)
        raise AssertionError

    return [ModuleTool(spec, mod), ModuleTool({**spec, "name": "amod"}, amod)]


class Foreign(AgentTool):
    """A third-party tool with no containment of its own."""

    def __init__(self, kind: type[BaseException]) -> None:
        super().__init__()
        self._kind = kind

    @property
    def tool_name(self) -> str:
        return "foreign"

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": "foreign", "description": "Foreign.", "inputSchema": {"json": {"type": "object"}}}

    @property
    def tool_type(self) -> str:
        return "foreign"

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        _raise(self._kind)
        yield {}


def all_tools(kind: type[BaseException]) -> list[AgentTool]:
    return [*function_tools(kind), *class_tools(kind), *module_tools(kind)]


def in_thread(function: Callable[[], Any]) -> Any:
    """Run ``function`` in a worker thread and return what it returned (or re-raise what it raised)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = function()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive(), "the call did not return"
    if "error" in box:
        raise box["error"]
    return box["value"]


def assert_error(result: ToolResult, kind: type[BaseException]) -> None:
    assert result["status"] == "error", result
    text = result["content"][0].get("text", "")
    assert text.startswith(f"Error: {kind.__name__} - "), text
    if kind is SystemExit:
        assert text == "Error: SystemExit - 3"


async def final_of_stream(tool: AgentTool) -> Any:
    events = [
        event async for event in tool.stream({"toolUseId": "t1", "name": tool.tool_name, "input": {}}, {})
    ]
    return events[-1]


@pytest.mark.parametrize("kind", FAULTS, ids=lambda k: k.__name__)
def test_invoke_turns_any_base_exception_into_an_error_result(kind: type[BaseException]) -> None:
    for tool in all_tools(kind):
        assert_error(in_thread(functools.partial(tool.invoke, {})), kind)


@pytest.mark.parametrize("kind", FAULTS, ids=lambda k: k.__name__)
def test_ainvoke_turns_any_base_exception_into_an_error_result(kind: type[BaseException]) -> None:
    for tool in all_tools(kind):
        assert_error(in_thread(functools.partial(asyncio.run, tool.ainvoke({}))), kind)


@pytest.mark.parametrize("kind", FAULTS, ids=lambda k: k.__name__)
def test_stream_ends_with_an_error_result(kind: type[BaseException]) -> None:
    for tool in all_tools(kind):
        assert_error(in_thread(functools.partial(asyncio.run, final_of_stream(tool))), kind)


@pytest.mark.parametrize("kind", FAULTS, ids=lambda k: k.__name__)
def test_the_registry_contains_every_tool(kind: type[BaseException]) -> None:
    registry = ToolRegistry()
    tools = [*all_tools(kind), Foreign(kind)]
    for tool in tools:
        registry.register(tool)
    for name in registry.names():
        assert_error(in_thread(functools.partial(registry.invoke, name, {})), kind)
        assert_error(in_thread(functools.partial(registry.snapshot().invoke, name, {})), kind)
        assert_error(asyncio.run(registry.ainvoke(name, {})), kind)  # main thread: sync tools run on a lane
    assert registry.names() == tuple(sorted(tool.tool_name for tool in tools))


def test_system_exit_from_a_sync_invoke_in_the_main_thread_is_contained() -> None:
    registry = ToolRegistry()
    registry.register(function_tools(SystemExit)[0])
    assert_error(registry.invoke("plain", {}), SystemExit)


def test_keyboard_interrupt_from_a_sync_invoke_in_the_main_thread_is_taken_as_ctrl_c() -> None:
    """Documented limit: there it cannot be told apart from the user's Ctrl-C, which must win."""
    registry = ToolRegistry()
    registry.register(function_tools(KeyboardInterrupt)[0])
    with pytest.raises(KeyboardInterrupt):
        registry.invoke("plain", {})


def test_a_tool_that_raises_keyboard_interrupt_under_an_event_loop_is_contained() -> None:
    """``asyncio.run`` handles SIGINT itself, so a KeyboardInterrupt seen inside it is the tool's."""
    (tool,) = [t for t in function_tools(KeyboardInterrupt) if t.tool_name == "plain"]
    result = asyncio.run(final_of_stream(tool))
    assert_error(result, KeyboardInterrupt)


def test_a_real_ctrl_c_while_async_code_waits_for_a_sync_tool_propagates() -> None:
    """The host's Ctrl-C stops a waiting caller; the tool's lane thread is left to finish on its own."""
    started = threading.Event()
    release = threading.Event()

    def blocking() -> str:
        """Blocks until released."""
        started.set()
        release.wait(WAIT)
        return "done"

    registry = ToolRegistry()
    registry.register(FunctionTool(blocking))

    def interrupt() -> None:
        if started.wait(WAIT):
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(registry.ainvoke("blocking", {}))
    finally:
        release.set()
        sender.join(WAIT)
    assert registry.invoke("blocking", {})["content"] == [{"text": "done"}]


def test_belongs_to_caller() -> None:
    assert belongs_to_caller(KeyboardInterrupt()) is (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    assert in_thread(lambda: belongs_to_caller(KeyboardInterrupt())) is False
    assert belongs_to_caller(SystemExit(1)) is False
    assert belongs_to_caller(GeneratorExit()) is False
    assert belongs_to_caller(asyncio.CancelledError()) is False  # no loop: nobody cancelled us

    async def cancelled_task() -> bool:
        async def victim() -> bool:
            try:
                await asyncio.sleep(WAIT)
            except asyncio.CancelledError as exc:
                return belongs_to_caller(exc)
            return False

        task = asyncio.create_task(victim())
        await asyncio.sleep(0)
        task.cancel()
        return await task

    assert asyncio.run(cancelled_task()) is True

    async def own_cancelled_error() -> bool:
        return belongs_to_caller(asyncio.CancelledError())

    assert asyncio.run(own_cancelled_error()) is False


def test_a_strands_tool_that_exits_is_an_error_result_too() -> None:
    """Strands contains ``Exception`` only; our wrapper contains the rest."""
    strands = pytest.importorskip("strands")
    from loader.integrations.strands import StrandsFunctionTool

    @strands.tool  # type: ignore[untyped-decorator]
    def leaves(code: int) -> str:
        """Exits.

        Args:
            code: Exit status.
        """
        sys.exit(code)

    wrapped = StrandsFunctionTool(leaves)
    use: ToolUse = {"toolUseId": "t1", "name": "leaves", "input": {"code": 5}}

    async def last() -> Any:
        return [event async for event in wrapped.stream(use, {})][-1]

    result = asyncio.run(last())
    assert result["status"] == "error"
    assert result["content"][0]["text"] == "Error: SystemExit - 5"
