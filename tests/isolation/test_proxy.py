"""``ProxyTool``: the same interface and wire shapes as the in-process tools it stands in for."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import FAST, MakeLoader, call_text, child_pids, eventually, write

from loader.isolation import ProxyTool
from loader.registry.tool_registry import ToolRegistry
from loader.reload.loader import ToolLoader
from loader.tools.class_tool import get_tool_metadata
from loader.types import AgentTool, ToolUse

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"
PROCESS = replace(FAST, isolation="process")


@pytest.fixture(scope="module")
def both() -> Iterator[dict[str, ToolLoader]]:
    """The sample tools loaded once per mode."""
    loaders = {mode: ToolLoader([SAMPLE_TOOLS], isolation=mode) for mode in ("thread", "process")}
    for loader in loaders.values():
        loader.scan()
    yield loaders
    for loader in loaders.values():
        loader.close()


def _facts(tool: AgentTool) -> dict[str, Any]:
    """What a listing or a model sees; private module names differ only by the loader's tag."""
    display = {
        key: re.sub(r"_tool_loader\.\w+\.", "_tool_loader.*.", value)
        for key, value in tool.get_display_properties().items()
    }
    display.pop("Isolation", None)
    return {
        "spec": tool.tool_spec,
        "type": tool.tool_type,
        "source": (getattr(tool, "source_file", None), getattr(tool, "source_line", None)),
        "category": tool.category,
        "tags": tool.tags,
        "hot_reload": tool.supports_hot_reload,
        # A proxy always runs on the caller's loop; its description says what the body is.
        "body_is_async": tool.description.is_async if isinstance(tool, ProxyTool) else tool.is_async,
        "display": display,
    }


def test_every_sample_tool_describes_itself_the_same_in_both_modes(both: dict[str, ToolLoader]) -> None:
    thread, process = both["thread"].registry, both["process"].registry
    assert thread.names() == process.names()
    assert process.specs() == thread.specs()
    for name in thread.names():
        proxy = process.get(name)
        assert isinstance(proxy, ProxyTool) and proxy.is_dynamic
        original = thread.get(name)
        assert original is not None, name
        assert _facts(proxy) == _facts(original), name
    assert process.tool_config() == thread.tool_config()


def test_a_class_tool_keeps_its_metadata_and_version(both: dict[str, ToolLoader]) -> None:
    proxy = both["process"].registry.get("currency_converter")
    assert isinstance(proxy, ProxyTool)
    original = both["thread"].registry.get("currency_converter")
    assert proxy.metadata == getattr(original, "metadata", None)
    assert get_tool_metadata(proxy) == proxy.metadata  # what list, inspect and check read
    assert proxy.version == "1.2.0"
    assert get_tool_metadata(both["process"].registry.get("slugify")) is None


def _count_primes(registry: ToolRegistry) -> AgentTool:
    tool = registry.get("count_primes")
    assert tool is not None
    return tool


def _collect(tool: AgentTool, input: dict[str, Any]) -> list[Any]:
    use: ToolUse = {"toolUseId": "tooluse_same", "name": tool.tool_name, "input": input}

    async def drain() -> list[Any]:
        return [event async for event in tool.stream(use, {})]

    return asyncio.run(drain())


def test_stream_events_and_results_are_the_same_in_both_modes(both: dict[str, ToolLoader]) -> None:
    thread, process = both["thread"].registry, both["process"].registry
    events = {
        mode: _collect(_count_primes(registry), {"limit": 500, "chunks": 4})
        for mode, registry in (("thread", thread), ("process", process))
    }
    assert events["process"] == events["thread"]
    assert [e["progress"] for e in events["process"][:4]] == [0.25, 0.5, 0.75, 1.0]
    assert events["process"][-1]["toolUseId"] == "tooluse_same"


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("calculator", {"operation": "divide", "a": 1, "b": 0}),
        ("slugify", {"title": "Crème brûlée"}),
        ("unit_converter", {"value": 3, "from_unit": "km", "to_unit": "m"}),
        ("word_count", {"text": "a b a"}),
        ("calculator", {"operation": "nope"}),
    ],
)
def test_results_are_the_same_in_both_modes(
    both: dict[str, ToolLoader], name: str, input: dict[str, Any]
) -> None:
    thread = both["thread"].registry.invoke(name, input, tool_use_id="tooluse_x")
    process = both["process"].registry.invoke(name, input, tool_use_id="tooluse_x")
    assert process == thread


def test_ainvoke_runs_off_the_event_loop(both: dict[str, ToolLoader]) -> None:
    async def run() -> Any:
        return await both["process"].registry.ainvoke("slugify", {"title": "A B"}, tool_use_id="tooluse_a")

    assert asyncio.run(run()) == {"toolUseId": "tooluse_a", "status": "success", "content": [{"text": "a-b"}]}


BYTES_TOOL = """
TOOL_SPEC = {"name": "picture", "description": "An image.", "inputSchema": {"json": {"type": "object"}}}

def picture(tool_use, **kwargs):
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "success",
        "content": [
            {"image": {"format": "png", "source": {"bytes": bytes(range(256))}}},
            {"json": {"inf": float("inf"), "nested": [1, [2, {"x": None}]]}},
        ],
    }
"""

STATE_TOOL = """
import json
import re
from loader import tool

@tool(context=True)
def state(tool_context) -> str:
    '''Show what crossed.'''
    return json.dumps({
        "keys": sorted(tool_context.invocation_state),
        "agent": tool_context.agent is None,
        "use": tool_context.tool_use["toolUseId"],
    })
"""


def test_bytes_and_non_finite_floats_cross_unchanged(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "picture.py", BYTES_TOOL)
    thread = make_loader(tools_dir, config=FAST, watch=False)
    process = make_loader(tools_dir, config=PROCESS, watch=False)
    expected = thread.registry.invoke("picture", {}, tool_use_id="tooluse_b")
    assert process.registry.invoke("picture", {}, tool_use_id="tooluse_b") == expected
    assert expected["content"][0]["image"]["source"]["bytes"] == bytes(range(256))


def test_only_json_safe_invocation_state_crosses_and_never_the_agent(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "state.py", STATE_TOOL)
    ld = make_loader(tools_dir, config=PROCESS, watch=False)
    state = {"request": {"id": 1}, "live": object(), "agent": "ignored"}
    result = ld.registry.invoke("state", {}, tool_use_id="tooluse_s", invocation_state=state, agent=object())
    assert json.loads(result["content"][0]["text"]) == {
        "keys": ["request"],
        "agent": True,
        "use": "tooluse_s",
    }


LOOP_TOOL = """
import pathlib
from loader import tool

@tool
def spin(marker: str) -> str:
    '''Spin until stopped.'''
    pathlib.Path(marker).touch()
    while True:
        pass
"""


def test_cancelling_an_awaited_call_stops_its_worker(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "spin.py", LOOP_TOOL)
    write(
        tools_dir / "ok.py",
        "from loader import tool\n\n@tool\ndef ok() -> str:\n    '''Ok.'''\n    return 'ok'\n",
    )
    ld = make_loader(tools_dir, config=PROCESS, watch=False)
    assert call_text(ld, "ok") == "ok"
    marker = tools_dir.parent / "spinning"

    async def run() -> None:
        task = asyncio.ensure_future(ld.registry.ainvoke("spin", {"marker": str(marker)}))
        while not marker.exists():
            await asyncio.sleep(0.01)
        spinning = child_pids()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        eventually(lambda: len(spinning - child_pids()) == 1, message="the spinning worker was stopped")

    asyncio.run(run())
    assert call_text(ld, "ok") == "ok"
