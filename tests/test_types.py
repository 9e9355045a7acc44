"""The AgentTool base class: Strands-compatible surface and the invoke conveniences."""

from __future__ import annotations

import asyncio
from typing import Any

from loader.context.tool_context import ToolContext
from loader.types import AgentTool, ToolGenerator, ToolSpec, ToolUse, new_tool_use_id, run_sync


class Countdown(AgentTool):
    """A hand-written AgentTool that really awaits, yielding progress events."""

    @property
    def tool_name(self) -> str:
        return "countdown"

    @property
    def tool_spec(self) -> ToolSpec:
        return {
            "name": "countdown",
            "description": "Counts down.",
            "inputSchema": {"json": {"type": "object"}},
        }

    @property
    def tool_type(self) -> str:
        return "custom"

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        for n in range(tool_use["input"].get("start", 3), 0, -1):
            await asyncio.sleep(0)
            yield {"progress": n}
        yield {
            "toolUseId": tool_use["toolUseId"],
            "status": "success",
            "content": [{"text": f"liftoff for {invocation_state.get('agent', 'nobody')}"}],
        }


class Silent(Countdown):
    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        for _ in ():
            yield None


def test_base_surface() -> None:
    tool = Countdown()
    assert not tool.is_dynamic
    tool.mark_dynamic()
    assert tool.is_dynamic
    assert tool.supports_hot_reload is False
    assert tool.get_display_properties() == {"Name": "countdown", "Type": "custom"}
    assert tool.category is None and tool.tags == ()
    assert tool.cleanup() is None
    assert repr(tool) == "<Countdown 'countdown' type=custom>"


def test_invoke_outside_a_loop_returns_the_final_result() -> None:
    result = Countdown().invoke({"start": 2}, tool_use_id="t1", agent="ada")
    assert result == {"toolUseId": "t1", "status": "success", "content": [{"text": "liftoff for ada"}]}


def test_invoke_inside_a_running_loop_does_not_reenter_it() -> None:
    async def main() -> Any:
        return Countdown().invoke({"start": 1})

    result = asyncio.run(main())
    assert result["status"] == "success"
    assert result["toolUseId"].startswith("tooluse_")


def test_ainvoke_and_stream_order() -> None:
    async def main() -> list[Any]:
        events = []
        async for event in Countdown().stream(
            {"toolUseId": "x", "name": "countdown", "input": {"start": 3}}, {}
        ):
            events.append(event)
        return events

    events = asyncio.run(main())
    assert events[:3] == [{"progress": 3}, {"progress": 2}, {"progress": 1}]
    assert events[-1]["status"] == "success"
    assert asyncio.run(Countdown().ainvoke({"start": 1}, tool_use_id="y"))["toolUseId"] == "y"


def test_a_stream_that_yields_nothing_is_an_error_result() -> None:
    result = Silent().invoke({}, tool_use_id="z")
    assert result["status"] == "error" and result["toolUseId"] == "z"


def test_run_sync_propagates_exceptions_from_the_worker_thread() -> None:
    async def boom() -> None:
        raise KeyError("inside")

    async def main() -> None:
        try:
            run_sync(boom)
        except KeyError as exc:
            assert exc.args == ("inside",)
        else:
            raise AssertionError("no exception")

    asyncio.run(main())


def test_tool_context_defaults_and_ids() -> None:
    context = ToolContext(tool_use={"toolUseId": "a", "name": "n", "input": {}})
    assert context.agent is None and context.invocation_state == {}
    assert new_tool_use_id() != new_tool_use_id()


def test_tool_use_ids_are_unique_across_forked_children() -> None:
    import os

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports the id it makes, then leaves at once
        os.write(write, new_tool_use_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    os.close(read)
    ours = new_tool_use_id()
    assert child.startswith("tooluse_") and ours.startswith("tooluse_")
    assert child[:20] != ours[:20]  # a new random prefix in the child, not the parent's counter
    assert len({new_tool_use_id() for _ in range(1000)}) == 1000
