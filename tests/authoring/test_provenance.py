"""A promoted version carries its provenance: in the history, over MCP, and ``tool-loader history``."""

from __future__ import annotations

import json
from pathlib import Path

import anyio.to_thread
import pytest
from mcp import Client
from support import eventually, run_cli

from loader import LoaderConfig, ToolLoader
from loader.authoring.gate import GateOptions
from loader.authoring.workflow import promote, propose
from loader.history.recorder import HistoryRecorder
from loader.history.store import HistoryStore
from loader.isolation.sandbox import probe
from loader.mcp import MCPToolServer
from loader.mcp.wire import PROVENANCE_META_KEY

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
    ),
]

TOOL = b'''
from loader import tool


@tool
def shout(text: str) -> str:
    """Shout a text.

    Args:
        text: The text.
    """
    return text.upper()
'''


async def test_provenance_in_the_history_and_the_listing(tmp_path: Path) -> None:
    live = tmp_path / "tools"
    live.mkdir()
    (live / "other.py").write_bytes(TOOL.replace(b"def shout", b"def whisper"))
    record = await anyio.to_thread.run_sync(
        lambda: propose(live, {"shout.py": TOOL}, author="agent-7", options=GateOptions(cases=10))
    )
    recorder = HistoryRecorder()
    with ToolLoader([live], config=LoaderConfig(rescan_interval=0.2), plugins=[recorder]) as loader:
        server = MCPToolServer(loader.registry, loader=loader)
        await anyio.to_thread.run_sync(lambda: promote(live, record.id))
        await anyio.to_thread.run_sync(lambda: eventually(lambda: "shout" in loader.registry))
        async with Client(server.server) as client:
            listed = {tool.name: tool.meta or {} for tool in (await client.list_tools()).tools}
        assert recorder.flush(10)
    provenance = listed["shout"][PROVENANCE_META_KEY]
    assert provenance["author"] == "agent-7" and provenance["proposal"] == record.id
    assert provenance["gate_report_digest"] == record.report_digest
    assert PROVENANCE_META_KEY not in listed["whisper"]
    with HistoryStore(live) as store:
        (version,) = store.versions("shout")
        assert version.provenance == provenance
        assert store.versions("whisper")[0].provenance is None
    shown = run_cli("history", "shout", "--dir", str(live), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"promoted from proposal {record.id} by agent-7" in shown.stdout
    inspected = run_cli("inspect", "shout", "--dir", str(live), "--json", cwd=tmp_path)
    assert json.loads(inspected.stdout)["provenance"] == provenance
    assert (
        json.loads(run_cli("inspect", "whisper", "--dir", str(live), "--json", cwd=tmp_path).stdout)[
            "provenance"
        ]
        is None
    )
    plain = run_cli("inspect", "shout", "--dir", str(live), cwd=tmp_path)
    assert f"promoted from proposal {record.id} by agent-7" in " ".join(plain.stdout.split())
