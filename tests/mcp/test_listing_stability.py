"""At a thousand tools, a save changes the listing entry of the tool it changed and no other.

Listings are taken with the SDK's own client in the current protocol era and
compared as JSON, entry by entry; a second loader on a copy of the folder at
another path gives the same JSON, and the cache hints say what they promise.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from support import FAST, eventually, write

from loader.mcp import MCPToolServer
from loader.mcp.wire import DIGEST_META_KEY, FINGERPRINT_META_KEY
from loader.reload.loader import ToolLoader

FILES = 50
TOOLS_PER_FILE = 20
EDITED = ("f13", 7)


def tool_file(index: int, edited: int | None = None) -> str:
    lines = ["from loader import tool", ""]
    for number in range(TOOLS_PER_FILE):
        words = f"Tool {index}.{number}" + (", edited." if number == edited else ".")
        lines += [
            "@tool",
            f"def t_{index:02d}_{number:02d}(a: int, b: str = 'x') -> str:",
            f'    """{words}',
            "",
            "    Args:",
            "        a: A number.",
            "        b: A word.",
            '    """',
            "    return b * a",
            "",
        ]
    return "\n".join(lines)


def listing(loader: ToolLoader) -> dict[str, Any]:
    """The current-era ``tools/list`` result as JSON, as the SDK's client received it."""
    server = MCPToolServer(loader.registry, loader=loader)

    async def listed() -> dict[str, Any]:
        async with Client(server.server) as client:
            result = await client.list_tools()
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    return anyio.run(listed)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "thousand" / "tools"
    for index in range(FILES):
        write(root / f"f{index:02d}.py", tool_file(index))
    return root


def test_one_edit_among_a_thousand_tools_changes_one_entry(folder: Path, tmp_path: Path) -> None:
    replica = shutil.copytree(folder, tmp_path / "replica" / "at" / "another" / "path")
    loader = ToolLoader([folder], config=FAST)
    other = ToolLoader([replica], config=FAST)
    try:
        loader.scan()
        other.scan()
        before = listing(loader)
        assert listing(other) == before  # another folder path, another loader: the same JSON
        entries = before["tools"]
        assert len(entries) == FILES * TOOLS_PER_FILE
        assert [entry["name"] for entry in entries] == sorted(entry["name"] for entry in entries)
        assert (before["ttlMs"], before["cacheScope"]) == (0, "private")

        loader.start()
        name = f"t_{int(EDITED[0][1:]):02d}_{EDITED[1]:02d}"
        old_digest = loader.published.snapshot.digest(name)
        write(folder / f"{EDITED[0]}.py", tool_file(int(EDITED[0][1:]), edited=EDITED[1]))
        eventually(lambda: loader.published.snapshot.digest(name) != old_digest, message="edit applied")
        after = listing(loader)
    finally:
        loader.close()
        other.close()
    changed = [
        old["name"]
        for old, new in zip(before["tools"], after["tools"], strict=True)
        if old != new  # every field, the digest in _meta included
    ]
    assert changed == [name]
    (edited,) = [entry for entry in after["tools"] if entry["name"] == name]
    assert edited["description"].endswith(", edited.")
    assert edited["_meta"][DIGEST_META_KEY] != old_digest
    assert after["_meta"][FINGERPRINT_META_KEY] != before["_meta"][FINGERPRINT_META_KEY]
