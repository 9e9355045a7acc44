"""The tool context over MCP with the SDK's real client: progress, logs, questions, in both protocol eras.

``legacy`` is the 2025-11-25 handshake (questions are requests to the client in
the middle of the call); ``modern`` is 2026-07-28 (a question ends the round
with an ``InputRequiredResult``; the client answers and retries, and the tool
runs again with the answer). The tools below are sync (on a lane thread) and
async (on the server's loop) alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import FileUrl
from support import text_of

from loader import ModelAnswer, RootsAnswer, ToolContext, tool
from loader.mcp import MCPToolServer
from loader.registry.tool_registry import ToolRegistry

pytestmark = pytest.mark.anyio

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
MODES = ["legacy", "2026-07-28"]


@tool(context=True)
def steps(tool_context: ToolContext) -> str:
    """A synchronous tool reporting progress and logging at two levels."""
    for step in (0, 50, 100):
        tool_context.report_progress(step, 100, f"step {step}")
    tool_context.log("debug", "fine detail")
    tool_context.log("warning", "watch out", {"code": 7})
    return "done"


@tool(context=True)
async def asteps(tool_context: ToolContext) -> str:
    """The same from an async tool."""
    for step in (0, 50, 100):
        await tool_context.areport_progress(step, 100, f"step {step}")
    await tool_context.alog("debug", "fine detail")
    await tool_context.alog("warning", "watch out", {"code": 7})
    return "done"


@tool(context=True)
def two_questions(tool_context: ToolContext) -> str:
    """A sync tool asking the user twice (two rounds on 2026-07-28)."""
    first = tool_context.ask_user("First name?", NAME)
    second = tool_context.ask_user("Second name?", NAME)
    return f"{(first.content or {}).get('name')} and {(second.content or {}).get('name')}"


@tool(context=True)
async def model_and_roots(tool_context: ToolContext) -> str:
    """An async tool asking the model and the roots in one go."""
    model, roots = await tool_context.aask(
        [tool_context.model_question("Capital of France?", max_tokens=20), tool_context.roots_question()]
    )
    assert isinstance(model, ModelAnswer) and isinstance(roots, RootsAnswer)
    return f"{model.text} from {model.model}; roots {[root.uri for root in roots.roots]}"


@tool(context=True)
def needs_model(tool_context: ToolContext) -> str:
    """Asks the model whatever the client declared."""
    return tool_context.ask_model("hi", max_tokens=5).text


@tool(context=True)
def polite(tool_context: ToolContext) -> str:
    """Asks only what the client can answer, and copes without."""
    if not tool_context.can_ask_user:
        return "nobody to ask"
    answer = tool_context.ask_user("Name?", NAME)
    return f"{answer.action}: {answer.content}"


@pytest.fixture
def server() -> MCPToolServer:
    registry = ToolRegistry()
    for each in (steps, asteps, two_questions, model_and_roots, needs_model, polite):
        registry.register(each)
    return MCPToolServer(registry)


class Answers:
    """Client callbacks that answer every question and remember what they were asked."""

    def __init__(self) -> None:
        self.names = iter(["Ada", "Grace", "Alan"])
        self.asked: list[str] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": next(self.names)})

    async def sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append("model")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="test-model"
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///work"), name="work")])

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)


@asynccontextmanager
async def connect(
    server: MCPToolServer, mode: str, answers: Answers, **options: Any
) -> AsyncIterator[Client]:
    async with Client(
        server.server,
        mode=mode,
        elicitation_callback=answers.elicit,
        sampling_callback=answers.sample,
        list_roots_callback=answers.roots,
        logging_callback=answers.log,
        **options,
    ) as client:
        yield client


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["steps", "asteps"])
async def test_progress_reaches_the_client_in_order_before_the_result(
    server: MCPToolServer, mode: str, name: str
) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with connect(server, mode, Answers()) as client:
        result = await client.call_tool(name, {}, progress_callback=on_progress)
    assert text_of(result) == "done"
    assert updates == [(0, 100, "step 0"), (50, 100, "step 50"), (100, 100, "step 100")]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("name", ["steps", "asteps"])
async def test_handshake_logs_honour_set_level(server: MCPToolServer, name: str) -> None:
    answers = Answers()
    async with connect(server, "legacy", answers) as client:
        assert client.server_capabilities.logging is not None
        await client.call_tool(name, {})
        everything = [entry.level for entry in answers.logs]
        await client.set_logging_level("warning")
        await client.call_tool(name, {})
    assert everything == ["debug", "warning"]
    assert [entry.level for entry in answers.logs[2:]] == ["warning"]
    warning = answers.logs[-1]
    assert warning.logger == name and warning.data == {"message": "watch out", "data": {"code": 7}}


async def test_2026_logs_follow_the_request_log_level_and_are_off_without_it(server: MCPToolServer) -> None:
    quiet, chatty = Answers(), Answers()
    async with connect(server, "2026-07-28", quiet) as client:
        await client.call_tool("steps", {})
    async with connect(server, "2026-07-28", chatty, log_level="info") as client:
        await client.call_tool("asteps", {})
    assert quiet.logs == []
    assert [entry.level for entry in chatty.logs] == ["warning"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_sync_tool_asks_the_user_twice(server: MCPToolServer, mode: str) -> None:
    answers = Answers()
    async with connect(server, mode, answers) as client:
        result = await client.call_tool("two_questions", {})
    assert text_of(result) == "Ada and Grace", result
    assert answers.asked == ["First name?", "Second name?"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_async_tool_asks_the_model_and_the_roots(server: MCPToolServer, mode: str) -> None:
    answers = Answers()
    async with connect(server, mode, answers) as client:
        result = await client.call_tool("model_and_roots", {})
    assert text_of(result) == "Paris from test-model; roots ['file:///work']", result
    assert answers.asked == ["model", "roots"]


async def test_2026_asks_several_questions_in_one_round_and_seals_the_state(server: MCPToolServer) -> None:
    async with connect(server, "2026-07-28", Answers()) as client:
        first = await client.session.call_tool("model_and_roots", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        assert first.input_requests is not None
        assert sorted(first.input_requests) == ["ask_model-1", "list_roots-2"]
        assert first.request_state and "answers" not in first.request_state  # sealed, not readable
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                "model_and_roots", {}, request_state=first.request_state + "x", allow_input_required=True
            )
        assert refused.value.error.code == types.INVALID_PARAMS


async def test_2026_refuses_an_answer_of_the_wrong_kind(server: MCPToolServer) -> None:
    wrong: types.InputResponses = {"ask_user-1": types.ListRootsResult(roots=[])}
    async with connect(server, "2026-07-28", Answers()) as client:
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                "two_questions",
                {},
                input_responses=wrong,
                allow_input_required=True,
            )
    assert refused.value.error.code == types.INVALID_PARAMS
    assert "is not an answer to elicitation/create" in refused.value.error.message


async def test_an_undeclared_capability_is_an_error_result_in_2025_and_refused_in_2026(
    server: MCPToolServer,
) -> None:
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("needs_model", {})
    assert result.is_error
    assert text_of(result) == (
        "Error: ContextUnavailableError - cannot ask the model: "
        "the MCP client did not declare the 'sampling' capability"
    )
    async with Client(server.server, mode="2026-07-28") as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("needs_model", {})
    assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_can_check_what_the_client_can_answer(server: MCPToolServer, mode: str) -> None:
    async with Client(server.server, mode=mode) as client:
        assert text_of(await client.call_tool("polite", {})) == "nobody to ask"
    async with connect(server, mode, Answers()) as client:
        assert text_of(await client.call_tool("polite", {})) == "accept: {'name': 'Ada'}"


async def test_a_question_left_unanswered_when_the_client_cancels_does_not_hang_the_tool(
    server: MCPToolServer,
) -> None:
    asked = asyncio.Event()

    async def never(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async with Client(server.server, mode="legacy", elicitation_callback=never) as client:
        call = asyncio.create_task(client.call_tool("two_questions", {}))
        await asyncio.wait_for(asked.wait(), 20)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # the server goes on answering this client
        assert text_of(await client.call_tool("steps", {})) == "done"


async def test_a_sync_tool_waiting_for_an_answer_holds_up_no_other_call(server: MCPToolServer) -> None:
    asked = asyncio.Event()
    release = asyncio.Event()

    async def slow(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        await release.wait()
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(server.server, mode="legacy", elicitation_callback=slow) as client:
        waiting = asyncio.create_task(client.call_tool("two_questions", {}))
        await asyncio.wait_for(asked.wait(), 20)
        # the tool's thread waits for the client; the server's loop goes on serving
        assert text_of(await client.call_tool("steps", {})) == "done"
        assert not waiting.done()
        release.set()
        assert text_of(await asyncio.wait_for(waiting, 20)) == "Ada and Ada"
