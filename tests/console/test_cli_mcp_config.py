"""``tool-loader mcp-config``: the client JSON, and merging it into an existing client file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import run_cli


@pytest.mark.parametrize(
    ("client", "section"), [("claude", "mcpServers"), ("cursor", "mcpServers"), ("vscode", "servers")]
)
def test_prints_what_the_client_needs_with_absolute_paths_and_this_interpreter(
    tmp_path: Path, client: str, section: str
) -> None:
    (tmp_path / "tools").mkdir()
    done = run_cli("mcp-config", "--client", client, "tools", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)[section]["tool-loader"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "loader", "serve", str((tmp_path / "tools").resolve())]
    assert ("type" in entry) == (client == "vscode")


def test_the_printed_command_starts_a_server_that_lists_the_tools(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    entry = json.loads(run_cli("mcp-config", "tools", cwd=tmp_path).stdout)["mcpServers"]["tool-loader"]
    # The client launches it from anywhere: here from the root folder.
    request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    done = subprocess.run(
        [entry["command"], *entry["args"]],
        cwd="/",
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "serving over stdio" in done.stderr, done.stderr


def test_write_merges_atomically_keeping_other_entries_and_a_backup(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    target = tmp_path / "claude_desktop_config.json"
    original = {"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}
    target.write_text(json.dumps(original))
    done = run_cli("mcp-config", "tools", "--write", str(target), "--name", "mine", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    merged = json.loads(target.read_text())
    assert merged["theme"] == "dark"
    assert merged["mcpServers"]["other"] == {"command": "x"}
    assert merged["mcpServers"]["mine"]["args"][-1] == str((tmp_path / "tools").resolve())
    assert json.loads((tmp_path / "claude_desktop_config.json.bak").read_text()) == original
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "claude_desktop_config.json",
        "claude_desktop_config.json.bak",
        "tools",
    ]  # no temporary left behind

    fresh = tmp_path / "new" / "mcp.json"
    assert (
        run_cli("mcp-config", "tools", "--client", "vscode", "--write", str(fresh), cwd=tmp_path).returncode
        == 0
    )
    assert list(json.loads(fresh.read_text())["servers"]) == ["tool-loader"]


def test_a_broken_client_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    target = tmp_path / "mcp.json"
    target.write_text('{"mcpServers": {\n  "other": }\n')
    done = run_cli("mcp-config", "tools", "--write", str(target), cwd=tmp_path)
    assert done.returncode == 2
    assert f"{target} line 2 column 12: not valid JSON" in done.stderr
    assert target.read_text() == '{"mcpServers": {\n  "other": }\n'
