"""Skills kept as ``skills/<name>/SKILL.md`` and their files, served over MCP as SEP-2640 says: real files,
the real watcher, the SDK's client speaking ``skills/list``, ``skills/get`` and ``resources/read``."""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict
from serving import stdio_params
from support import MakeLoader, eventually, write

from loader import ComponentKind, FileState, Skill, skill_entries
from loader.mcp import MCPToolServer
from loader.status import LoadErrorKind

pytestmark = pytest.mark.anyio


class Answer(BaseModel):
    """Any result, its fields kept as sent."""

    model_config = ConfigDict(extra="allow")


class SkillsRequest(types.Request[dict[str, Any], str]):
    """A ``skills/*`` request: the SDK client has no method for an extension's requests."""


def skill_md(name: str, description: str = "Fill in PDF forms.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\nSee references/FORMS.md.\n"


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def skills_request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = await client.session.send_request(SkillsRequest(method=method, params=params), Answer)
    return answer.model_dump()


async def read_bytes(client: Client, uri: str, expected: str | None = None) -> bytes:
    meta: Any = None if expected is None else {"tool-loader/expected-digest": expected}
    content = (await client.read_resource(uri, meta=meta)).contents[0]
    if isinstance(content, types.TextResourceContents):
        return content.text.encode("utf-8")
    assert isinstance(content, types.BlobResourceContents)
    return base64.b64decode(content.blob)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


async def test_a_skill_saved_while_a_client_is_connected_is_listed_within_a_second(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    (tools_dir / "skills").mkdir()
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader)
    heard: list[Any] = []

    async def hear(message: Any) -> None:
        heard.append(message)

    async with Client(server.server, mode="legacy", message_handler=hear) as client:
        assert (await skills_request(client, "skills/list", {}))["skills"] == []
        write(tools_dir / "skills" / "pdf" / "references" / "FORMS.md", "Form fields: name, date.\n")
        write(tools_dir / "skills" / "pdf" / "scripts" / "fill.py", "raise SystemExit('never run')\n")
        saved = time.monotonic()
        write(tools_dir / "skills" / "pdf" / "SKILL.md", skill_md("pdf", extra="license: MIT\n"))
        with anyio.fail_after(1.0):
            while not (listed := await skills_request(client, "skills/list", {}))["skills"]:
                await anyio.sleep(0.01)
            while len(listed["skills"][0]["resources"]) < 3:
                listed = await skills_request(client, "skills/list", {})
        took = time.monotonic() - saved
        (entry,) = listed["skills"]
        assert (listed["resultType"], listed["ttlMs"]) == ("complete", 0)
        assert entry["uri"] == "skill://pdf/SKILL.md"
        assert entry["frontmatter"] == {"name": "pdf", "description": "Fill in PDF forms.", "license": "MIT"}
        assert [r["uri"] for r in entry["resources"]] == [
            "skill://pdf/SKILL.md",
            "skill://pdf/references/FORMS.md",
            "skill://pdf/scripts/fill.py",
        ]
        for file in entry["resources"]:
            data = await read_bytes(client, file["uri"])
            assert (digest(data), len(data)) == (file["digest"], file["size"])
        got = await skills_request(client, "skills/get", {"uri": "skill://pdf/SKILL.md"})
        assert got["skill"] == entry
        with anyio.fail_after(5.0):
            while not any(isinstance(m, types.ResourceListChangedNotification) for m in heard):
                await anyio.sleep(0.01)
        with pytest.raises(MCPError) as unknown:
            await skills_request(client, "skills/get", {"uri": "skill://nope/SKILL.md"})
        assert unknown.value.code == types.INVALID_PARAMS
    assert took < 1.0
    assert loader.registry.get("fill") is None  # a skill's script is a file it serves, never imported


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_storm_of_saves_never_serves_bytes_that_differ_from_the_digest_given(
    era: str, tools_dir: Path, make_loader: MakeLoader
) -> None:
    """Handshake era: the connection's manifest is served. 2026-07-28 (no connection): the client names
    the digest it expects, and gets those bytes or an error saying the skill changed."""
    folder = tools_dir / "skills" / "report"
    write(folder / "SKILL.md", skill_md("report", "Version 0 of the report."))
    write(folder / "data.txt", "row 0\n" * 300)
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader)
    saves = 100
    done = threading.Event()

    def rewrite() -> None:
        for n in range(1, saves + 1):
            write(folder / "data.txt", f"row {n}\n" * 300)
            if n % 10 == 0:
                write(folder / "SKILL.md", skill_md("report", f"Version {n} of the report."))
            time.sleep(0.002)  # the writer yields to the reader between saves
        done.set()

    reads = mismatched = changed = 0
    digests: set[str] = set()
    async with Client(server.server, mode="legacy" if era == "legacy" else "auto") as client:
        writer = threading.Thread(target=rewrite)
        writer.start()
        while not done.is_set() or reads < 500:
            skill = (await skills_request(client, "skills/get", {"uri": "skill://report/SKILL.md"}))["skill"]
            for file in skill["resources"]:
                try:
                    data = await read_bytes(client, file["uri"], None if era == "legacy" else file["digest"])
                except MCPError as exc:
                    assert exc.code == types.INVALID_PARAMS and "skill changed" in exc.message
                    changed += 1
                    break
                reads += 1
                mismatched += (digest(data), len(data)) != (file["digest"], file["size"])
                digests.add(file["digest"])
        writer.join()
    assert reads >= 500 and mismatched == 0
    assert len(digests) > 4  # the reads did overlap the saves
    assert changed <= reads // 10


BROKEN = {
    "bad name": ("---\nname: Report_V2\ndescription: d\n---\nbody\n", 2, "lowercase letters"),
    "name is not its folder": ("---\nname: other\ndescription: d\n---\nbody\n", 2, "folder's name"),
    "no description": ("---\nname: report\nlicense: MIT\n---\nbody\n", 1, "'description'"),
    "broken YAML": ("---\nname: report\ndescription: [unclosed\n---\nbody\n", 4, "not valid YAML"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_malformed_skill_md_is_reported_with_its_line_and_the_last_good_keeps_serving(
    case: str, tools_dir: Path, make_loader: MakeLoader
) -> None:
    path = write(tools_dir / "skills" / "report" / "SKILL.md", skill_md("report", "The good one."))
    loader = make_loader(tools_dir)
    text, line, words = BROKEN[case]
    write(path, text)
    status = eventually(
        lambda: (s := loader.file_status(path)) is not None and s.state is FileState.FAILED and s,
        message="failed",
    )
    assert status.error is not None
    assert (status.error.exc_type, status.error.file, status.error.line) == ("SkillError", str(path), line)
    assert words in status.error.message
    served = loader.registry.snapshot().component(ComponentKind.SKILL, "report")
    assert isinstance(served, Skill) and served.description == "The good one."


async def test_a_link_out_of_a_skill_is_never_served(
    tmp_path: Path, tools_dir: Path, make_loader: MakeLoader
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve")
    write(tools_dir / "skills" / "pdf" / "SKILL.md", skill_md("pdf"))
    os.symlink(secret, tools_dir / "skills" / "pdf" / "leak.txt")
    loader = make_loader(tools_dir, watch=False)
    server = MCPToolServer(loader.registry, loader=loader)
    async with Client(server.server, mode="legacy") as client:
        (entry,) = (await skills_request(client, "skills/list", {}))["skills"]
        assert [r["uri"] for r in entry["resources"]] == ["skill://pdf/SKILL.md"]
        with pytest.raises(MCPError) as refused:
            await client.read_resource("skill://pdf/leak.txt")
        assert refused.value.code == types.INVALID_PARAMS
    leak = loader.file_status(tools_dir / "skills" / "pdf" / "leak.txt")
    assert leak is not None and leak.error is not None and leak.error.kind is LoadErrorKind.LINK_REFUSED


def test_a_manifest_lists_every_file_once_from_one_snapshot_nested_skills_included(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "skills" / "acme" / "billing" / "SKILL.md", skill_md("billing"))
    write(tools_dir / "skills" / "acme" / "billing" / "refunds" / "SKILL.md", skill_md("refunds"))
    write(tools_dir / "skills" / "acme" / "billing" / "refunds" / "email.md", "Dear customer,\n")
    (tools_dir / "skills" / "acme" / "billing" / "logo.png").write_bytes(b"\x89PNG\x00\x01")
    loader = make_loader(tools_dir, watch=False)
    entries = {e.skill.key: e for e in skill_entries(loader.registry.snapshot().components())}
    assert sorted(entries) == ["acme/billing", "acme/billing/refunds"]
    outer, inner = entries["acme/billing"].wire(), entries["acme/billing/refunds"].wire()
    assert [r["uri"] for r in outer["resources"]] == [
        "skill://acme/billing/SKILL.md",
        "skill://acme/billing/logo.png",
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/email.md",
    ]
    assert [r["uri"] for r in inner["resources"]] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/email.md",
    ]
    for file in entries["acme/billing"].files:
        on_disk = (tools_dir / "skills" / file.path).read_bytes()
        assert (file.digest, file.size) == ("sha256:" + hashlib.sha256(on_disk).hexdigest(), len(on_disk))


async def test_the_extension_is_declared_and_a_digest_no_generation_holds_is_a_clear_error(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "skills" / "pdf" / "SKILL.md", skill_md("pdf"))
    loader = make_loader(tools_dir, watch=False)
    server = MCPToolServer(loader.registry, loader=loader)
    async with Client(server.server) as client:
        assert client.server_capabilities.extensions == {"io.modelcontextprotocol/skills": {}}
        (entry,) = (await skills_request(client, "skills/list", {}))["skills"]
        current = entry["resources"][0]["digest"]
        assert digest(await read_bytes(client, entry["uri"], current)) == current
        with pytest.raises(MCPError) as changed:
            await read_bytes(client, entry["uri"], "sha256:" + "0" * 64)
        assert changed.value.code == types.INVALID_PARAMS and "skill changed" in changed.value.message
        assert changed.value.error.data == {
            "uri": entry["uri"],
            "expected": "sha256:" + "0" * 64,
            "current": current,
        }


async def test_tool_loader_serve_over_stdio_serves_a_skill_and_its_change(
    tools_dir: Path, tmp_path: Path
) -> None:
    """The real command, process isolation, the SDK's stdio client speaking the SEP-2640 methods."""
    write(tools_dir / "skills" / "pdf" / "SKILL.md", skill_md("pdf", "Version one."))
    params = stdio_params(
        "serve",
        str(tools_dir),
        "--isolation",
        "process",
        cwd=tmp_path,
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            assert client.server_capabilities.extensions == {"io.modelcontextprotocol/skills": {}}
            (entry,) = (await skills_request(client, "skills/list", {}))["skills"]
            assert entry["frontmatter"]["description"] == "Version one."
            write(tools_dir / "skills" / "pdf" / "SKILL.md", skill_md("pdf", "Version two."))
            write(tools_dir / "skills" / "pdf" / "more.md", "More.\n")
            with anyio.fail_after(20.0):
                while len(entry["resources"]) < 2 or entry["frontmatter"]["description"] != "Version two.":
                    await anyio.sleep(0.05)
                    entry = (await skills_request(client, "skills/get", {"uri": "skill://pdf/SKILL.md"}))[
                        "skill"
                    ]
            for file in entry["resources"]:
                data = await read_bytes(client, file["uri"], file["digest"])
                assert (digest(data), len(data)) == (file["digest"], file["size"])


async def test_a_tool_in_a_skills_tools_folder_is_listed_tagged_with_its_skill(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "skills" / "pdf-forms" / "SKILL.md", skill_md("pdf-forms"))
    tool_source = '''
        from loader import tool

        @tool
        def fill_form(field: str) -> str:
            """Fill one field.

            Args:
                field: The field.
            """
            return "filled " + field
    '''
    write(tools_dir / "skills" / "pdf-forms" / "tools" / "fill_form.py", tool_source)
    write(tools_dir / "plain.py", tool_source.replace("fill_form", "plain"))
    loader = make_loader(tools_dir)
    server = MCPToolServer(loader.registry, loader=loader)
    async with Client(server.server, mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(listed) == ["fill_form", "plain"]
        assert (listed["fill_form"].meta or {}).get("tool-loader/skill") == "pdf-forms"
        assert "tool-loader/skill" not in (listed["plain"].meta or {})
        called = await client.call_tool("fill_form", {"field": "date"})
        assert [getattr(block, "text", None) for block in called.content] == ["filled date"]
        (entry,) = (await skills_request(client, "skills/list", {}))["skills"]
        assert [r["uri"] for r in entry["resources"]] == ["skill://pdf-forms/SKILL.md"]  # its tools are tools

        write(tools_dir / "skills" / "pdf-forms" / "SKILL.md", "---\nname: pdf-forms\n---\nno description\n")
        write(
            tools_dir / "skills" / "other" / "tools" / "untagged.py",
            tool_source.replace("fill_form", "untagged"),
        )
        with anyio.fail_after(20.0):
            while "untagged" not in (names := {t.name: t for t in (await client.list_tools()).tools}):
                await anyio.sleep(0.02)
        assert "tool-loader/skill" not in (names["untagged"].meta or {})  # no SKILL.md: no skill to tag
        assert (names["fill_form"].meta or {}).get("tool-loader/skill") == "pdf-forms"  # the last good one
