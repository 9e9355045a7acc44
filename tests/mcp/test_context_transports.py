"""The tool context from tool files: in process and in worker processes, in process, over stdio and HTTP.

The same two tool files answer in every combination: a synchronous tool that
reports progress, logs and asks the user, and an async tool that asks the
model and the client's roots. Each test runs both protocol eras against one
server (the handshake era's questions are requests to the client; 2026-07-28's
are rounds of the call).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from pydantic import FileUrl
from serving import serve_http, stdio_params
from support import MakeLoader, text_of, write

from loader.mcp import MCPToolServer

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")

TOOLS = {
    "ask_name.py": '''
from loader import ToolContext, tool

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool(context=True)
def ask_name(greeting: str, tool_context: ToolContext) -> str:
    """Report progress, log, and greet the user by name."""
    tool_context.report_progress(1, 2, "asking")
    tool_context.log("info", "asking for a name")
    answer = tool_context.ask_user("What is your name?", NAME)
    tool_context.report_progress(2, 2, "answered")
    return f"{greeting} {(answer.content or {}).get('name')}"
''',
    "ask_model.py": '''
from loader import ToolContext, tool


@tool(context=True)
async def ask_model(tool_context: ToolContext) -> str:
    """Ask the client's model, then its roots."""
    await tool_context.areport_progress(1, 1)
    reply = await tool_context.aask_model("Capital of France?", max_tokens=20)
    roots = await tool_context.alist_roots()
    return f"{reply.text} / {[root.uri for root in roots]}"
''',
}


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def folder(tools_dir: Path) -> Path:
    for name, source in TOOLS.items():
        write(tools_dir / name, source)
    return tools_dir


class Client_:
    """Callbacks answering every question, remembering the progress and logs that arrived."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.logs: list[str] = []

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(self, context: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="m"
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///work"))])

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(f"{params.level}: {params.data}")

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    def options(self) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.roots,
            "logging_callback": self.log,
        }


async def exercise(connect: Callable[[str, Client_], Client], modes: tuple[str, ...] = MODES) -> None:
    """Both tools in each era against one server."""
    for mode in modes:
        answers = Client_()
        async with connect(mode, answers) as client:
            asked = await client.call_tool(
                "ask_name", {"greeting": "hello"}, progress_callback=answers.on_progress
            )
            modelled = await client.call_tool("ask_model", {}, progress_callback=answers.on_progress)
        assert text_of(asked) == "hello Ada", (mode, asked)
        assert text_of(modelled) == "Paris / ['file:///work']", (mode, modelled)
        assert (1, 2, "asking") in answers.progress and (2, 2, "answered") in answers.progress, mode
        assert answers.progress[-1] == (1, 1, None), mode
        # 2026-07-28 runs the tool again for the round that brings the answer, so what it sent
        # before the question is sent again
        rounds = 1 if mode == "legacy" else 2
        assert answers.logs == ["info: asking for a name"] * rounds, mode


async def test_in_process_server_over_a_loader(folder: Path, make_loader: MakeLoader) -> None:
    loader = make_loader(folder, watch=False)
    server = MCPToolServer(loader.registry, loader=loader)

    def connect(mode: str, answers: Client_) -> Client:
        return Client(server.server, mode=mode, log_level="info", **answers.options())

    await exercise(connect)


@pytest.mark.parametrize(("isolation", "mode"), [("thread", "legacy"), ("process", "2026-07-28")])
async def test_over_stdio(folder: Path, tmp_path: Path, isolation: str, mode: str) -> None:
    """One era per isolation mode: a stdio client starts a server of its own each time."""
    params = stdio_params(
        "serve",
        str(folder),
        "--isolation",
        isolation,
        cwd=tmp_path,
    )
    with (tmp_path / "stderr.log").open("w") as errlog:

        def connect(mode: str, answers: Client_) -> Client:
            return Client(
                stdio_client(params, errlog=errlog), mode=mode, log_level="info", **answers.options()
            )

        await exercise(connect, (mode,))


async def test_over_http(folder: Path, tmp_path: Path, isolation: str) -> None:
    with serve_http(folder, tmp_path, "--isolation", isolation, wait_ready=True) as served:

        def connect(mode: str, answers: Client_) -> Client:
            return Client(served.url, mode=mode, log_level="info", **answers.options())

        await exercise(connect)
