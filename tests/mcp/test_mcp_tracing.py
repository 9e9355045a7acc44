"""A ``tools/call`` through the SDK's own client: the call's span joins the client's trace, in both isolation modes.

The MCP SDK opens a ``tools/call {name}`` server span that continues the
request's ``_meta.traceparent``; the loader's ``execute_tool`` span is its
child, and the tool's code runs inside that (in this process or in a worker).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import anyio
import mcp_types as types
import pytest
from mcp import Client
from opentelemetry import trace
from otel_capture import Captured, captured
from support import MakeLoader, text_of, write

from loader.mcp import MCPToolServer

SEEN = '''
from opentelemetry import trace
from loader import tool

@tool
def seen() -> str:
    """The trace and span this tool's code runs in."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") + "/" + format(context.span_id, "016x")
'''

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def telemetry() -> Iterator[Captured]:
    with captured() as found:
        yield found


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_call_span_continues_the_clients_trace(
    tools_dir: Path, make_loader: MakeLoader, telemetry: Captured, isolation: str, mode: str
) -> None:
    write(tools_dir / "seen.py", SEEN)
    loader = make_loader(tools_dir, watch=False)
    server = MCPToolServer(loader.registry, loader=loader)
    tracer = trace.get_tracer("test agent")

    async def call() -> tuple[str, str]:
        async with Client(server.server, mode=mode) as client:
            with tracer.start_as_current_span("agent turn"):
                injected = await client.call_tool("seen", {})
            # No span on the client's side: the request names its trace in _meta itself.
            meta = cast(types.RequestParamsMeta, {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
            given = await client.call_tool("seen", {}, meta=meta)
        return text_of(injected), text_of(given)

    injected, given = anyio.run(call)
    turn = telemetry.spans("agent turn")[0]
    first, second = telemetry.spans("execute_tool seen")
    server_spans = [s for s in telemetry.spans("tools/call seen") if s.kind is trace.SpanKind.SERVER]
    assert len(server_spans) == 2
    assert first.parent is not None and first.parent.span_id == server_spans[0].context.span_id
    assert first.context.trace_id == turn.context.trace_id
    assert second.parent is not None and second.parent.span_id == server_spans[1].context.span_id
    assert second.context.trace_id == server_spans[1].context.trace_id
    if mode == "auto":  # the handshake-era dispatcher sends its own client span's traceparent instead
        assert format(second.context.trace_id, "032x") == TRACE_ID
        assert server_spans[1].parent is not None
        assert format(server_spans[1].parent.span_id, "016x") == PARENT_ID
    assert (first.attributes or {})["tool_loader.isolation"] == isolation
    # The tool's own code ran in the execute_tool span, wherever it ran.
    for span, seen in ((first, injected), (second, given)):
        assert seen == format(span.context.trace_id, "032x") + "/" + format(span.context.span_id, "016x")
