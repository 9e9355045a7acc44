"""Quarantine: a live tool out of listings and its calls refused, in one commit, across restarts."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
from pathlib import Path

import warm_cli
from support import LineReader, cli_env, eventually, run_cli

from loader import LoaderConfig, ToolLoader
from loader.authoring.quarantine import QuarantineFollower, read_quarantine, set_quarantined

TOOLS = '''
from loader import tool


@tool
def shout(text: str) -> str:
    """Shout a text.

    Args:
        text: The text.
    """
    return text.upper()


@tool
def whisper(text: str) -> str:
    """Whisper a text.

    Args:
        text: The text.
    """
    return text.lower()
'''


def _folder(tmp_path: Path) -> Path:
    live = tmp_path / "tools"
    live.mkdir()
    (live / "voice.py").write_text(TOOLS)
    return live


def test_quarantine_takes_one_tool_out_in_one_commit_and_unquarantine_brings_it_back(tmp_path: Path) -> None:
    live = _folder(tmp_path)
    follower = QuarantineFollower()
    commits: list[list[tuple[str, str]]] = []
    try:
        with ToolLoader([live], config=LoaderConfig(rescan_interval=0.2), plugins=[follower]) as loader:
            loader.registry.subscribe(lambda c: commits.append([(x.kind.value, x.name) for x in c.changes]))
            assert set_quarantined(live, "shout", True)
            eventually(lambda: "shout" not in loader.registry, message="shout leaves the registry")
            assert loader.registry.names() == ("whisper",)
            refused = loader.registry.invoke("shout", {"text": "a"})
            assert refused["status"] == "error"
            edited = (TOOLS + "\n# edited\n").encode()
            (live / "voice.py").write_bytes(edited)
            digest = hashlib.sha256(edited).hexdigest()
            eventually(
                lambda: digest.startswith(loader.status()[0].content_hash or "-"), message="the edit loads"
            )
            assert "shout" not in loader.registry  # an edit does not bring it back
            assert set_quarantined(live, "shout", False)
            eventually(lambda: "shout" in loader.registry, message="shout comes back")
            assert loader.registry.invoke("shout", {"text": "a"})["content"][0]["text"] == "A"
            assert commits[0] == [("removed", "shout")]
            assert [("added", "shout")] in commits
    finally:
        follower.close()


def test_the_quarantine_outlasts_a_restart(tmp_path: Path) -> None:
    live = _folder(tmp_path)
    set_quarantined(live, "whisper", True)
    assert read_quarantine(live) == {"whisper"}
    follower = QuarantineFollower()
    try:
        with ToolLoader([live], plugins=[follower]) as loader:
            assert loader.registry.names() == ("shout",)
            assert loader.quarantined == {"whisper"}
    finally:
        follower.close()


def test_quarantine_from_the_command_line(tmp_path: Path) -> None:
    live = _folder(tmp_path)
    done = run_cli("quarantine", "shout", "--dir", "tools", cwd=tmp_path)
    assert done.returncode == 0 and "shout quarantined" in done.stdout, done.stderr
    listed = run_cli("list", "tools", "--json", cwd=tmp_path)
    document = json.loads(listed.stdout)
    assert [tool["name"] for tool in document["tools"]] == ["whisper"]
    assert document["quarantined"] == ["shout"]
    plain = run_cli("list", "tools", cwd=tmp_path)
    assert "quarantined (not listed, calls refused): shout" in plain.stdout
    called = run_cli("call", "shout", "--dir", "tools", cwd=tmp_path)
    assert called.returncode == 2 and "tool 'shout' is quarantined" in called.stderr, called.stderr
    back = run_cli("unquarantine", "shout", "--dir", "tools", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    document = json.loads(run_cli("list", "tools", "--json", cwd=tmp_path).stdout)
    assert [tool["name"] for tool in document["tools"]] == ["shout", "whisper"]
    assert live.joinpath(".tool-loader", "quarantine.json").is_file()


def test_watch_names_the_quarantine_and_follows_it(tmp_path: Path) -> None:
    live = _folder(tmp_path)
    set_quarantined(live, "whisper", True)
    process = subprocess.Popen(
        warm_cli.command(["watch", "tools"], cli_env()),
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out = LineReader(process.stdout)
        out.wait_for(
            r"^loaded 2 tools from 1 file in tools .*; quarantined \(not listed, calls refused\): whisper$"
        )
        out.wait_for(r"^watching tools")
        assert run_cli("quarantine", "shout", "--dir", "tools", cwd=tmp_path).returncode == 0
        out.wait_for(r"tools changed: -shout \(0 tools\)$")
        assert run_cli("unquarantine", "whisper", "--dir", "tools", cwd=tmp_path).returncode == 0
        out.wait_for(r"tools changed: \+whisper \(1 tool\)$")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
