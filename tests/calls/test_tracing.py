"""OpenTelemetry for tool calls and reloads, recorded by the real SDK with in-memory exporters.

Each call is an ``execute_tool {name}`` span carrying the identity of the
version that ran, a child of the caller's span; the tool's own code sees the
caller's trace on every path (the caller's thread, a lane thread, a stream, a
worker process). Tools read ``opentelemetry.trace.get_current_span()`` and
return what they see.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from otel_capture import Captured, captured
from support import EVENTS_ONLY, MakeLoader, eventually, write

from loader.calls import tracing
from loader.calls.runner import CallLimits
from loader.registry.tool_registry import ToolRegistry
from loader.tools.function_tool import FunctionTool

SEEN = '''
from opentelemetry import trace
from loader import tool

@tool
def seen(word: str = "x") -> str:
    """The trace and span this tool's code runs in."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") + "/" + format(context.span_id, "016x")

@tool
async def aseen() -> str:
    """The same, from an async tool."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") + "/" + format(context.span_id, "016x")

@tool
def fails() -> str:
    """Always fails."""
    raise ValueError("no")
'''


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Both isolation modes: the caller's trace reaches the tool's code in each."""
    return str(request.param)


@pytest.fixture
def telemetry() -> Iterator[Captured]:
    with captured() as found:
        yield found


def ids(span: trace.Span | ReadableSpan) -> str:
    context = span.get_span_context()
    assert context is not None
    return format(context.trace_id, "032x") + "/" + format(context.span_id, "016x")


def text(result: Any) -> str:
    return str(result["content"][0].get("text"))


def only(spans: list[ReadableSpan]) -> ReadableSpan:
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


def test_a_call_is_a_child_span_that_names_the_version_that_ran(
    tools_dir: Path, make_loader: MakeLoader, telemetry: Captured, isolation: str
) -> None:
    path = write(tools_dir / "seen.py", SEEN)
    loader = make_loader(tools_dir, watch=False)
    tracer = trace.get_tracer("test")
    snapshot = loader.registry.snapshot()
    with tracer.start_as_current_span("agent turn") as turn:
        result = loader.registry.invoke("seen", {}, tool_use_id="call-1")
    span = only(telemetry.spans("execute_tool seen"))
    assert span.parent is not None and span.parent.span_id == turn.get_span_context().span_id
    assert span.kind is trace.SpanKind.INTERNAL
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "seen",
        "gen_ai.tool.call.id": "call-1",
        "tool_loader.registry.generation": snapshot.generation,
        "tool_loader.isolation": isolation,
        "tool_loader.tool.digest": snapshot.digest("seen"),
        "code.file.path": str(path),
        "code.line.number": 4,
    }
    assert span.status.is_ok
    # The tool's code ran inside the call's span, in this process or in a worker.
    assert text(result) == ids(span)


@pytest.mark.parametrize("name", ["seen", "aseen"])
def test_the_tool_sees_the_callers_trace_from_async_callers_and_streams(
    tools_dir: Path, make_loader: MakeLoader, telemetry: Captured, isolation: str, name: str
) -> None:
    write(tools_dir / "seen.py", SEEN)
    loader = make_loader(tools_dir, watch=False)
    tracer = trace.get_tracer("test")

    async def calls() -> tuple[str, str]:
        with tracer.start_as_current_span("agent turn"):
            awaited = await loader.registry.ainvoke(name, {})  # a sync tool runs on a lane thread
            last: Any = None
            async for event in loader.registry.snapshot().astream(name, {}):
                last = event
        return text(awaited), text(last)

    awaited, streamed = asyncio.run(calls())
    turn = only(telemetry.spans("agent turn"))
    first, second = telemetry.spans(f"execute_tool {name}")
    assert first.parent is not None and second.parent is not None
    assert first.parent.span_id == second.parent.span_id == turn.context.span_id
    assert (awaited, streamed) == (ids(first), ids(second))


def test_failures_and_timeouts_set_error_type_and_the_duration_is_recorded(
    tools_dir: Path, make_loader: MakeLoader, telemetry: Captured, isolation: str
) -> None:
    write(tools_dir / "seen.py", SEEN)
    loader = make_loader(tools_dir, watch=False)
    assert loader.registry.invoke("fails", {})["status"] == "error"
    failed = only(telemetry.spans("execute_tool fails"))
    assert (failed.attributes or {})["error.type"] == tracing.TOOL_ERROR
    assert not failed.status.is_ok
    points = telemetry.histogram(
        tracing.CALL_DURATION, **{"gen_ai.tool.name": "fails", "error.type": tracing.TOOL_ERROR}
    )
    assert sum(point.count for point in points) >= 1
    ok = telemetry.histogram(tracing.CALL_DURATION, **{"gen_ai.tool.name": "seen"})
    loader.registry.invoke("seen", {})
    after = telemetry.histogram(tracing.CALL_DURATION, **{"gen_ai.tool.name": "seen"})
    assert sum(p.count for p in after) == sum(p.count for p in ok) + 1
    assert all("error.type" not in (p.attributes or {}) for p in after)


async def sleepy() -> str:
    """Sleeps past any short deadline."""
    await asyncio.sleep(30)
    return "late"


def raises() -> str:
    """A tool whose body raises through the runner."""
    raise RuntimeError("boom")


def test_a_timeout_and_a_raising_tool_are_named_in_error_type(telemetry: Captured) -> None:
    registry = ToolRegistry(limits=CallLimits(timeout=0.2))
    registry.register(FunctionTool(sleepy))

    class Raw(FunctionTool[..., Any]):
        def invoke(self, input: Any = None, **kwargs: Any) -> Any:  # raises past FunctionTool's handling
            raise RuntimeError("boom")

    registry.register(Raw(raises))
    assert registry.invoke("sleepy", {})["status"] == "error"
    assert (only(telemetry.spans("execute_tool sleepy")).attributes or {})["error.type"] == tracing.TIMEOUT
    assert registry.invoke("raises", {})["status"] == "error"
    raised = only(telemetry.spans("execute_tool raises"))
    assert (raised.attributes or {})["error.type"] == "RuntimeError"
    assert [event.name for event in raised.events] == ["exception"]


NO_PROVIDER = """
import json, sys
from pathlib import Path
import opentelemetry.trace  # imported, as an application would, but no provider is ever set
from loader import ToolLoader
from loader.calls import tracing

with ToolLoader([Path(sys.argv[1])]) as loader:
    loader.scan()
    seen = loader.registry.invoke("seen", {})
    assert tracing.instruments() is None and tracing.start_call(loader.registry.get("seen"), "id", 1) is None
    print(json.dumps({"seen": seen["content"][0]["text"], "status": seen["status"]}))
"""


def test_nothing_is_recorded_without_a_provider(tools_dir: Path) -> None:
    """In a process where nobody set a provider (a fresh interpreter: this one has the test SDK's)."""
    write(tools_dir / "seen.py", SEEN)
    done = subprocess.run(
        [sys.executable, "-c", NO_PROVIDER, str(tools_dir)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # The call ran, and its tool saw no trace at all: no span was made for it.
    assert json.loads(done.stdout) == {"seen": "0" * 32 + "/" + "0" * 16, "status": "success"}


def test_each_reload_is_a_span_with_its_outcome_and_tools(
    tools_dir: Path, make_loader: MakeLoader, telemetry: Captured
) -> None:
    path = write(tools_dir / "seen.py", SEEN)
    loader = make_loader(tools_dir, config=EVENTS_ONLY)
    added = only(telemetry.spans("reload seen.py"))
    attributes = dict(added.attributes or {})
    assert attributes["code.file.path"] == str(path)
    assert attributes["tool_loader.reload.outcome"] == "added"
    assert attributes["tool_loader.tools.added"] == ("aseen", "fails", "seen")
    assert added.parent is None  # a trace of its own
    assert added.end_time is not None and added.start_time is not None and added.end_time >= added.start_time
    telemetry.exporter.clear()
    write(path, SEEN.replace("The same, from an async tool.", "Another word."))
    eventually(lambda: telemetry.spans("reload seen.py"), message="update traced")
    updated = dict(only(telemetry.spans("reload seen.py")).attributes or {})
    assert updated["tool_loader.reload.outcome"] == "updated"
    assert updated["tool_loader.tools.changed"] == ("aseen", "fails", "seen")
    assert updated["tool_loader.registry.generation"] == loader.registry.generation
    telemetry.exporter.clear()
    write(path, "def broken(:\n")
    eventually(lambda: telemetry.spans("reload seen.py"), message="failure traced")
    failed = only(telemetry.spans("reload seen.py"))
    assert (failed.attributes or {})["error.type"] == "SyntaxError" and not failed.status.is_ok
    points = telemetry.histogram(tracing.RELOAD_DURATION, **{"tool_loader.reload.outcome": "failed"})
    assert sum(point.count for point in points) >= 1
