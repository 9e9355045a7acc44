"""Issue 37 item 6: a SEP-2640 host lists and installs a skill from ``tool-loader serve``, before and after a save.

The host is the MCP SDK's client speaking the extension's methods, as a host
does: ``skills/list``, ``skills/get``, then ``resources/read`` of every
``skill://`` URI in the manifest, each file's bytes checked against the
manifest's digest and size before anything is installed; the user's approval
is tied to the manifest, so a changed manifest revokes it and the skill is
installed again. ``fast-agent-mcp`` (a SEP-2640 client on the package index)
is not used: its releases that speak SEP-2640 need Python 3.12 or newer, and
this project supports 3.11 (``pip install --dry-run fast-agent-mcp==0.10.48``:
"requires a different Python: 3.11.7 not in '<3.16,>=3.12'").

The server is the real command (stdio, and streamable HTTP), in thread and
process isolation; every wait has a deadline.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import rfc8785
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict
from serving import serve_http, stdio_params
from support import write

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/skills"
DEADLINE = 20.0

SKILL_V1 = (
    "---\nname: pdf\ndescription: Fill in PDF forms.\nlicense: MIT\n---\n# pdf\nSee references/FORMS.md.\n"
)
SKILL_V2 = SKILL_V1.replace("Fill in PDF forms.", "Fill in and sign PDF forms.")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class _SkillsRequest(types.Request[dict[str, Any], str]):
    """A ``skills/*`` request (the SDK's client has no method of its own for an extension's requests)."""


class SkillHost:
    """What a SEP-2640 host does with a server's skills: list, fetch, verify, install, approve."""

    def __init__(self, client: Client, install_dir: Path) -> None:
        self.client = client
        self.install_dir = install_dir
        self.approved: dict[str, str] = {}  # skill URI -> the manifest digest the user approved
        self.mismatches = 0  # files whose bytes did not match the manifest they were read under
        self.changed_errors = 0  # reads refused because the skill changed after its manifest was given

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = await self.client.session.send_request(_SkillsRequest(method=method, params=params), _Answer)
        return answer.model_dump()

    async def skills(self) -> list[dict[str, Any]]:
        listed = await self.request("skills/list", {})
        assert listed["resultType"] == "complete"
        return list(listed["skills"])

    async def read(self, uri: str) -> bytes:
        (content,) = (await self.client.read_resource(uri)).contents
        if isinstance(content, types.TextResourceContents):
            return content.text.encode("utf-8")
        assert isinstance(content, types.BlobResourceContents)
        return base64.b64decode(content.blob)

    async def install(self, uri: str) -> dict[str, Any]:
        """Fetch the skill at ``uri`` whole, every file matching its manifest, then write it and approve it."""
        for _ in range(5):
            entry = (await self.request("skills/get", {"uri": uri}))["skill"]
            files: dict[str, bytes] = {}
            for resource in entry["resources"]:
                try:
                    data = await self.read(resource["uri"])
                except MCPError as error:  # the file went with a save since skills/get: the skill changed
                    assert error.code == types.INVALID_PARAMS, error
                    self.changed_errors += 1
                    break
                if (digest(data), len(data)) != (resource["digest"], resource["size"]):
                    self.mismatches += 1
                    break  # changed since skills/get (its own digest is in the content's _meta): ask again
                files[resource["uri"]] = data
            else:
                self._write(uri, files)
                self.approved[uri] = manifest_digest(entry)
                return dict(entry)
        raise AssertionError(f"{uri}: no manifest whose files all matched in five tries")

    def revoked(self, entries: list[dict[str, Any]]) -> list[str]:
        """The approved skills whose manifest is not the one approved any more."""
        now = {entry["uri"]: manifest_digest(entry) for entry in entries}
        return [uri for uri, approved in self.approved.items() if now.get(uri) != approved]

    def _write(self, uri: str, files: dict[str, bytes]) -> None:
        folder = uri.removeprefix("skill://").rsplit("/", 1)[0]
        target = self.install_dir / folder
        for old in sorted(target.rglob("*"), reverse=True) if target.exists() else ():
            old.unlink() if old.is_file() else old.rmdir()
        for file_uri, data in files.items():
            path = self.install_dir / file_uri.removeprefix("skill://")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def manifest_digest(entry: dict[str, Any]) -> str:
    return hashlib.sha256(rfc8785.dumps(entry["resources"])).hexdigest()


def tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()
    }


@asynccontextmanager
async def connected(
    transport: str, isolation: str, tools: Path, cwd: Path, mode: str
) -> AsyncIterator[Client]:
    """The SDK's client (protocol ``mode``) on ``tool-loader serve TOOLS --isolation ISOLATION``."""
    if transport == "http":
        with serve_http(tools, cwd, "--isolation", isolation, "--no-history", wait_ready=True) as served:
            async with Client(served.url, mode=mode) as client:
                yield client
        return
    params = stdio_params(
        "serve",
        str(tools),
        "--isolation",
        isolation,
        "--no-history",
        cwd=str(cwd),
    )
    with (cwd / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client


@pytest.mark.parametrize(
    ("transport", "isolation", "mode"), [("stdio", "process", "auto"), ("http", "thread", "legacy")]
)
async def test_a_sep_2640_host_installs_a_skill_verifies_it_and_reinstalls_it_after_a_save(
    tmp_path: Path, transport: str, isolation: str, mode: str
) -> None:
    tools = tmp_path / "tools"
    skill = tools / "skills" / "pdf"
    write(skill / "SKILL.md", SKILL_V1)
    write(skill / "references" / "FORMS.md", "Form fields: name, date.\n")
    write(skill / "scripts" / "fill.py", "raise SystemExit('a script the host may run, never the server')\n")
    (skill / "assets").mkdir()
    (skill / "assets" / "logo.bin").write_bytes(bytes(range(256)) * 4)  # a blob, not text
    installed = tmp_path / "installed"

    async with connected(transport, isolation, tools, tmp_path, mode) as client:
        if mode != "legacy":  # SEP-2133 extensions are declared from 2026-07-28 on
            assert EXTENSION in (client.server_capabilities.extensions or {})
        host = SkillHost(client, installed)
        (entry,) = await host.skills()
        assert entry["uri"] == "skill://pdf/SKILL.md"
        assert entry["frontmatter"] == {"name": "pdf", "description": "Fill in PDF forms.", "license": "MIT"}
        await host.install(entry["uri"])
        assert tree(installed / "pdf") == tree(skill)
        assert host.revoked(await host.skills()) == []

        write(skill / "SKILL.md", SKILL_V2)
        write(skill / "references" / "FORMS.md", "Form fields: name, date, signature.\n")
        write(skill / "references" / "SIGNING.md", "Sign on the last page.\n")
        (skill / "scripts" / "fill.py").unlink()
        final = {f"skill://pdf/{name}" for name in tree(skill)}
        with anyio.fail_after(DEADLINE):
            while True:  # a host re-lists on resources/list_changed, or on its own schedule
                entries = await host.skills()
                if {resource["uri"] for resource in entries[0]["resources"]} == final:
                    break
                await anyio.sleep(0.05)
        assert host.revoked(entries) == ["skill://pdf/SKILL.md"]  # the approval no longer holds
        await host.install("skill://pdf/SKILL.md")
        assert tree(installed / "pdf") == tree(skill)
        assert not (installed / "pdf" / "scripts").exists()
        assert host.revoked(await host.skills()) == []
    assert host.mismatches == 0  # no save landed during an install: every file read matched its manifest
