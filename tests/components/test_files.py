"""Prompts kept as ``prompts/*.md`` and resources kept as plain files under ``resources/``: real files,
the real watcher, the SDK's client; the loader reads them itself, in thread and process modes alike."""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from support import FAST, MakeLoader, eventually, write

from loader import ComponentKind, FileState, Prompt, Resource
from loader.mcp import MCPToolServer
from loader.status import LoadErrorKind

pytestmark = pytest.mark.anyio

REVIEW = """---
title: Review
description: Ask for a code review.
arguments:
  - name: code
    description: The code to review.
    required: true
values:
  tone: [friendly, formal]
---
VERSION: review {{code}} in a {{tone}} tone.
"""


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Notes:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)

    def prompts_changed(self) -> int:
        return sum(isinstance(m, types.PromptListChangedNotification) for m in self.messages)


async def until(predicate: Any, timeout: float = 20.0) -> Any:
    with anyio.fail_after(timeout):
        while not (value := predicate()):
            await anyio.sleep(0.005)
    return value


def prompt_text(result: types.GetPromptResult) -> str:
    content = result.messages[0].content
    assert isinstance(content, types.TextContent)
    return content.text


async def test_a_saved_prompt_file_reaches_a_connected_client(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "prompts" / "review.md", REVIEW.replace("VERSION", "v1"))
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader)
    notes = Notes()
    async with Client(server.server, mode="legacy", message_handler=notes) as client:
        listed = (await client.list_prompts()).prompts
        assert [(p.name, p.title, p.description) for p in listed] == [
            ("review", "Review", "Ask for a code review.")
        ]
        arguments = [(a.name, a.required) for a in listed[0].arguments or []]
        assert arguments == [("code", True), ("tone", False)]
        got = await client.get_prompt("review", {"code": "x = 1", "tone": "formal"})
        assert prompt_text(got) == "v1: review x = 1 in a formal tone."
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.code == types.INVALID_PARAMS and "'code'" in missing.value.message
        tone = await client.complete(types.PromptReference(name="review"), {"name": "tone", "value": "f"})
        assert tone.completion.values == ["friendly", "formal"]

        aside = tools_dir / "prompts" / ".review.md.saving"  # saved as editors do: aside, then renamed
        aside.write_text(REVIEW.replace("VERSION", "v2"))
        os.replace(aside, tools_dir / "prompts" / "review.md")
        await until(notes.prompts_changed)
        got = await client.get_prompt("review", {"code": "y", "tone": "friendly"})
        assert prompt_text(got) == "v2: review y in a friendly tone."


def test_a_prompt_is_named_by_its_path_unless_its_front_matter_says(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "prompts" / "team" / "standup.md", "Say what you did.\n")
    write(tools_dir / "prompts" / "other.md", "---\nname: renamed\n---\nHello {{who}}\n")
    loader = make_loader(tools_dir, watch=False)
    names = [c.key for c in loader.registry.snapshot().components(ComponentKind.PROMPT)]
    assert names == ["renamed", "team/standup"]
    renamed = loader.registry.snapshot().component(ComponentKind.PROMPT, "renamed")
    assert (
        isinstance(renamed, Prompt) and renamed.messages({"who": "Ann"})[0]["content"]["text"] == "Hello Ann"
    )


def test_a_broken_front_matter_keeps_the_last_good_prompt_and_names_its_line(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    path = write(tools_dir / "prompts" / "review.md", REVIEW.replace("VERSION", "v1"))
    loader = make_loader(tools_dir)
    write(path, "---\ntitle: Review\narguments: [unclosed\nvalues: {}\n---\nv2\n")
    status = eventually(
        lambda: (s := loader.file_status(path)) is not None and s.state is FileState.FAILED and s,
        message="failed",
    )
    assert status.error is not None
    assert (status.error.exc_type, status.error.file, status.error.line) == (
        "FileComponentError",
        str(path),
        4,
    )
    assert "front matter" in status.error.message
    assert status.components == ("prompt:review",)
    served = loader.registry.snapshot().component(ComponentKind.PROMPT, "review")
    assert isinstance(served, Prompt) and served.messages({"code": "c"})[0]["content"]["text"].startswith(
        "v1:"
    )


async def test_a_resource_file_rewritten_while_a_client_reads_it_never_mixes_two_versions(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    path = tools_dir / "resources" / "data.txt"

    def version(n: int) -> str:
        return f"version {n:04d}\n" * 500

    write(path, version(0))
    # Each save truncates first: a moment of an empty file must not drop the resource on a busy machine.
    loader = make_loader(tools_dir, config=replace(FAST, empty_grace=10.0))
    server = MCPToolServer(loader.registry, loader=loader)
    saves = 150
    done = threading.Event()

    def rewrite() -> None:
        for n in range(1, saves + 1):
            path.write_text(version(n))  # truncate, then write: a reader could catch it half done
        done.set()

    seen: set[str] = set()
    reads = 0
    async with Client(server.server, mode="legacy") as client:
        writer = threading.Thread(target=rewrite)
        writer.start()
        while not done.is_set() or reads < 200:
            content = (await client.read_resource("tool-loader:///resources/data.txt")).contents[0]
            assert isinstance(content, types.TextResourceContents)
            lines = content.text.split("\n")
            whole = set(lines[:-1])
            assert len(whole) <= 1, f"one read mixed versions {sorted(whole)[:3]}"
            seen.update(whole)
            reads += 1
            await anyio.sleep(0)  # the writer thread gets its turns
        writer.join()
    assert reads >= 200 and len(seen) >= 1
    final = eventually(
        lambda: (
            (
                r := loader.registry.snapshot().component(
                    ComponentKind.RESOURCE, "tool-loader:///resources/data.txt"
                )
            )
            is not None
            and isinstance(r, Resource)
            and r.read() == version(saves)
        ),
        message="the last save served",
    )
    assert final


async def test_a_link_out_of_resources_is_never_served(
    tmp_path: Path, tools_dir: Path, make_loader: MakeLoader
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve")
    (tools_dir / "resources").mkdir()
    os.symlink(secret, tools_dir / "resources" / "leak.txt")
    write(tools_dir / "resources" / "fine.json", '{"ok": true}')
    loader = make_loader(tools_dir, watch=False)
    server = MCPToolServer(loader.registry, loader=loader)
    async with Client(server.server, mode="legacy") as client:
        resources = (await client.list_resources()).resources
        assert [(str(r.uri), r.name, r.mime_type) for r in resources] == [
            ("tool-loader:///resources/fine.json", "resources/fine.json", "application/json")
        ]
        with pytest.raises(MCPError) as refused:
            await client.read_resource("tool-loader:///resources/leak.txt")
        assert refused.value.code == types.INVALID_PARAMS
    leak = loader.file_status(tools_dir / "resources" / "leak.txt")
    assert leak is not None and leak.error is not None and leak.error.kind is LoadErrorKind.LINK_REFUSED


def test_a_resource_file_larger_than_a_result_may_be_is_refused_and_named(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    big = tools_dir / "resources" / "big.bin"
    big.parent.mkdir()
    big.write_bytes(b"\x00" * 2048)
    loader = make_loader(tools_dir, watch=False, config=replace(FAST, max_result_bytes=1024))
    status = loader.file_status(big)
    assert status is not None and status.state is FileState.FAILED and status.error is not None
    assert "2,048 bytes, over the 1,024 bytes" in status.error.message
    assert not loader.registry.snapshot().components()
