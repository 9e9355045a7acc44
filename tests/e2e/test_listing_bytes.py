"""``tools/list`` is byte-identical for an unchanged folder: across restarts, replicas and folder paths.

The real command over stdio, spoken to in raw JSON-RPC lines, so the bytes
compared are the bytes a client reads (the handshake era: its wire form is one
JSON line per message).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from support import LineReader, cli_env

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"

REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bytes", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def listing_line(folder: Path, cwd: Path) -> str:
    """The raw ``tools/list`` response line of a fresh ``tool-loader serve FOLDER`` over stdio."""
    process = subprocess.Popen(
        [sys.executable, "-m", "loader", "serve", str(folder), "--no-history"],
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdin is not None
        process.stdin.write("".join(json.dumps(request) + "\n" for request in REQUESTS))
        process.stdin.flush()
        reader = LineReader(process.stdout)
        return reader.wait_for(r'^\{"jsonrpc":"2.0","id":2,').string
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_an_unchanged_folder_lists_the_same_bytes_after_a_restart_and_at_another_path(tmp_path: Path) -> None:
    here = shutil.copytree(SAMPLE_TOOLS, tmp_path / "replica-a" / "tools")
    there = shutil.copytree(SAMPLE_TOOLS, tmp_path / "replica-b" / "deeper" / "elsewhere")
    first = listing_line(here, tmp_path)
    listed = json.loads(first)["result"]
    names = [tool["name"] for tool in listed["tools"]]
    assert len(names) == 8 and names == sorted(names)
    assert all(len(tool["_meta"]["tool-loader/digest"]) == 64 for tool in listed["tools"])
    assert str(tmp_path) not in first  # nothing path-dependent leaks into the listing
    assert listing_line(here, tmp_path) == first  # a restart
    assert listing_line(there, tmp_path) == first  # a replica watching another path
