"""Prompts, resources, templates and completion over MCP, from a real folder, with the SDK's own client."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from support import MakeLoader, write

from loader.mcp import MCPToolServer

pytestmark = pytest.mark.anyio

KIT = """
import os
from typing import Literal

from loader import prompt, resource

@prompt
def where() -> str:
    return str(os.getpid())

@prompt(title="Review")
def review(code: str, tone: Literal["friendly", "formal"] = "friendly") -> str:
    \"\"\"Ask for a review.

    Args:
        code: The code to review.
    \"\"\"
    return f"VERSION review ({tone}): {code}"

@prompt
def picture() -> list[object]:
    return [{"type": "image", "data": "AAAA", "mimeType": "image/png"}, "What is this?"]

@resource("data://motd", mime_type="text/plain")
def motd() -> str:
    \"\"\"Message of the day.\"\"\"
    return "VERSION motd"

@resource("data://logo", mime_type="image/png")
def logo() -> bytes:
    return b"\\x89PNG"

@resource("data://users/{user}", mime_type="application/json")
def user(user: Literal["ann", "bob"]) -> str:
    return '{"user": "' + user + '"}'
"""


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def until(predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
    with anyio.fail_after(timeout):
        while not (value := predicate()):
            await anyio.sleep(0.005)
    return value


def text_of(result: types.GetPromptResult, index: int = 0) -> str:
    content = result.messages[index].content
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_prompts_resources_templates_and_completion_are_served(
    tools_dir: Path, make_loader: MakeLoader, mode: str, isolation: str
) -> None:
    write(tools_dir / "kit.py", KIT.replace("VERSION", "v1"))
    server = MCPToolServer(make_loader(tools_dir, watch=False).registry)
    async with Client(server.server, mode=mode) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.prompts.list_changed
        assert capabilities.resources is not None and capabilities.resources.list_changed
        assert capabilities.completions is not None

        prompts = (await client.list_prompts()).prompts
        assert [(p.name, p.title) for p in prompts] == [
            ("picture", None),
            ("review", "Review"),
            ("where", None),
        ]
        ran_in = int(text_of(await client.get_prompt("where")))
        assert (ran_in == os.getpid()) is (isolation == "thread")  # a prompt runs where tool code runs
        assert [(a.name, a.description, a.required) for a in prompts[1].arguments or []] == [
            ("code", "The code to review.", True),
            ("tone", None, False),
        ]
        got = await client.get_prompt("review", {"code": "x = 1", "tone": "formal"})
        assert text_of(got) == "v1 review (formal): x = 1"
        picture = await client.get_prompt("picture")
        assert isinstance(picture.messages[0].content, types.ImageContent)
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.code == types.INVALID_PARAMS and "'code'" in missing.value.message
        with pytest.raises(MCPError) as unknown_prompt:
            await client.get_prompt("nope")
        assert unknown_prompt.value.code == types.INVALID_PARAMS

        resources = (await client.list_resources()).resources
        assert [(str(r.uri), r.mime_type) for r in resources] == [
            ("data://logo", "image/png"),
            ("data://motd", "text/plain"),
        ]
        text = (await client.read_resource("data://motd")).contents[0]
        assert isinstance(text, types.TextResourceContents) and text.text == "v1 motd"
        blob = (await client.read_resource("data://logo")).contents[0]
        assert isinstance(blob, types.BlobResourceContents) and base64.b64decode(blob.blob) == b"\x89PNG"
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["data://users/{user}"]
        filled = (await client.read_resource("data://users/ann")).contents[0]
        assert isinstance(filled, types.TextResourceContents) and filled.text == '{"user": "ann"}'
        with pytest.raises(MCPError) as unknown_uri:
            await client.read_resource("data://nothing-here")
        assert unknown_uri.value.code == types.INVALID_PARAMS
        assert unknown_uri.value.data == {"uri": "data://nothing-here"}

        tone = await client.complete(types.PromptReference(name="review"), {"name": "tone", "value": "fo"})
        assert tone.completion.values == ["formal"]
        users = await client.complete(
            types.ResourceTemplateReference(uri="data://users/{user}"), {"name": "user", "value": ""}
        )
        assert users.completion.values == ["ann", "bob"]


def save(path: Path, text: str) -> None:
    """Save as editors do (written aside, renamed over): one save, one commit, counted exactly."""
    aside = path.with_name(f".{path.name}.saving")
    aside.write_text(text)
    os.replace(aside, path)


class Notes:
    """The notifications one handshake-era client received."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)

    def count(self, kind: type) -> int:
        return sum(isinstance(m, kind) for m in self.messages)

    def updated(self) -> list[str]:
        return [str(m.params.uri) for m in self.messages if isinstance(m, types.ResourceUpdatedNotification)]


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_a_save_reaches_a_handshake_client_as_list_changed_and_resource_updated(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "kit.py", KIT.replace("VERSION", "v1"))
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader)
    notes = Notes()
    async with Client(server.server, mode="legacy", message_handler=notes) as client:
        await client.subscribe_resource("data://motd")
        save(tools_dir / "kit.py", KIT.replace("VERSION", "v2"))
        await until(lambda: notes.count(types.PromptListChangedNotification) and notes.updated())
        assert notes.updated() == ["data://motd"]
        assert notes.count(types.ToolListChangedNotification) == 0  # no tool changed
        assert text_of(await client.get_prompt("review", {"code": "y"})) == "v2 review (friendly): y"
        motd = (await client.read_resource("data://motd")).contents[0]
        assert isinstance(motd, types.TextResourceContents) and motd.text == "v2 motd"

        await client.unsubscribe_resource("data://motd")
        save(tools_dir / "kit.py", KIT.replace("VERSION", "v3").replace("def picture", "def photo"))
        await until(lambda: notes.count(types.PromptListChangedNotification) == 2)
        assert notes.updated() == ["data://motd"]  # unsubscribed: not told again
        assert [p.name for p in (await client.list_prompts()).prompts] == ["photo", "review", "where"]


async def test_a_save_reaches_a_listening_client(tools_dir: Path, make_loader: MakeLoader) -> None:
    from mcp.client.subscriptions import PromptsListChanged, ResourceUpdated

    write(tools_dir / "kit.py", KIT.replace("VERSION", "v1"))
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader)
    events: list[Any] = []
    async with (
        Client(server.server, mode="auto") as client,
        client.listen(prompts_list_changed=True, resource_subscriptions=["data://motd"]) as subscription,
    ):

        async def collect() -> None:
            async for event in subscription:
                events.append(event)

        async with anyio.create_task_group() as group:
            group.start_soon(collect)
            write(tools_dir / "kit.py", KIT.replace("VERSION", "v2"))
            await until(lambda: len(events) >= 2)
            assert text_of(await client.get_prompt("review", {"code": "y"})) == "v2 review (friendly): y"
            group.cancel_scope.cancel()
    assert sorted(map(repr, events)) == sorted(
        map(repr, [PromptsListChanged(), ResourceUpdated(uri="data://motd")])
    )


ASKING = """
from loader import ToolContext, prompt

TOPIC = {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}

@prompt
def brainstorm(style: str, tool_context: ToolContext) -> str:
    answer = tool_context.ask_user("Which topic?", TOPIC, key="topic")
    return f"{style} ideas about {(answer.content or {}).get('topic')}"
"""


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_prompt_asks_the_user_as_a_tool_does(
    tools_dir: Path, make_loader: MakeLoader, mode: str
) -> None:
    write(tools_dir / "asking.py", ASKING)
    server = MCPToolServer(make_loader(tools_dir, watch=False).registry)
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"topic": "tides"})

    async with Client(server.server, mode=mode, elicitation_callback=elicit) as client:
        listed = (await client.list_prompts()).prompts
        assert [a.name for a in listed[0].arguments or []] == ["style"]  # the context is no argument
        got = await client.get_prompt("brainstorm", {"style": "wild"})
    assert text_of(got) == "wild ideas about tides"
    assert asked == ["Which topic?"]
