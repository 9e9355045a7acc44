"""``serve --agent-authoring`` through the MCP SDK's own client: propose, list, and promote only with ``auto``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from serving import stdio_params
from support import text_of

from loader.isolation.sandbox import probe

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
    ),
]

SOURCE = '''from loader import tool


@tool
def shout(text: str) -> str:
    """Shout a text.

    Args:
        text: The text.
    """
    return text.upper()
'''


def _params(live: Path, tmp_path: Path, *extra: str) -> StdioServerParameters:
    return stdio_params(
        "serve",
        str(live),
        "--agent-authoring",
        *extra,
        cwd=str(tmp_path),
    )


def _json(result: Any) -> Any:
    return json.loads(text_of(result))


async def test_an_agent_proposes_and_a_person_promotes(tmp_path: Path) -> None:
    live = tmp_path / "tools"
    live.mkdir()
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(_params(live, tmp_path), errlog=errlog), mode="legacy") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"propose_tool", "list_proposals"}
            proposed = _json(
                await client.call_tool("propose_tool", {"filename": "shout.py", "source": SOURCE})
            )
            assert proposed["state"] == "passed" and proposed["tools"] == ["shout"]
            assert proposed["report"]["properties"]["runs"][0]["ran"] > 0
            listed = _json(await client.call_tool("list_proposals", {}))
            assert [p["id"] for p in listed] == [proposed["id"]]
            assert "shout" not in {tool.name for tool in (await client.list_tools()).tools}
    assert not (live / "shout.py").exists()


async def test_with_autonomy_auto_the_agent_promotes_and_the_tool_goes_live(tmp_path: Path) -> None:
    live = tmp_path / "tools"
    live.mkdir()
    with (tmp_path / "stderr.log").open("w") as errlog:
        params = _params(live, tmp_path, "--autonomy", "auto")
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            proposed = _json(
                await client.call_tool("propose_tool", {"filename": "shout.py", "source": SOURCE})
            )
            promoted = _json(await client.call_tool("promote_proposal", {"proposal_id": proposed["id"]}))
            assert promoted["state"] == "promoted"
            with anyio.fail_after(30):
                while "shout" not in {tool.name for tool in (await client.list_tools()).tools}:
                    await anyio.sleep(0.05)
            assert text_of(await client.call_tool("shout", {"text": "hi"})) == "HI"
            bad = SOURCE.replace("text.upper()", "1 // 0")
            failed = _json(await client.call_tool("propose_tool", {"filename": "bad.py", "source": bad}))
            refused = await client.call_tool("promote_proposal", {"proposal_id": failed["id"]})
            assert refused.is_error and "only a passed proposal is promoted" in text_of(refused)
