"""``tool-loader serve --isolation process``: a tool that kills its process does not kill the server."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from serving import stdio_params
from support import text_of, write

pytestmark = pytest.mark.anyio

TOOLS = {
    "crash.py": '''
import os
from loader import tool

@tool
def crash() -> str:
    """Kill the process running this tool."""
    os._exit(7)
''',
    "echo.py": '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo the text back."""
    print("printed by echo")
    return text
''',
}


async def test_a_crashing_call_is_an_error_and_the_server_keeps_serving(
    tools_dir: Path, tmp_path: Path
) -> None:
    for name, source in TOOLS.items():
        write(tools_dir / name, source)
    params = stdio_params(
        "serve",
        str(tools_dir),
        "--isolation",
        "process",
        cwd=tmp_path,
    )
    log_path = tmp_path / "stderr.log"
    with log_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == ["crash", "echo"]
            for _ in range(2):
                crashed = await client.call_tool("crash", {})
                assert crashed.is_error is True
                assert "crashed its worker process (it exited with status 7)" in text_of(crashed)
                echoed = await client.call_tool("echo", {"text": "still here"})
                assert echoed.is_error is not True and text_of(echoed) == "still here"
    assert "printed by echo" in log_path.read_text()
