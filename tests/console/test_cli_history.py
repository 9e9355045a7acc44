"""``tool-loader history``, ``diff`` and ``rollback``, and history recording in ``watch``: the real CLI."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import warm_cli
from serving import INITIALIZE, post_json, serve_http
from support import LineReader, call_text, cli_env, eventually, run_cli, write

from loader import ToolLoader
from loader.fingerprint import spec_digest
from loader.history.recorder import HistoryRecorder
from loader.history.rollback import backup_dir
from loader.history.store import HistoryEvent, HistoryEventKind, HistoryStore, database_path

CALC_V1 = '''
from loader import tool

@tool
def calc(a: int, b: int) -> str:
    """Add two numbers."""
    return f"v1 {a + b}"
'''

CALC_V2 = '''
from loader import tool

@tool
def calc(b: int) -> str:
    """Add two numbers."""
    return f"v2 {b}"
'''

PAIR_V1 = '''
from loader import tool

@tool
def calc(a: int, b: int) -> str:
    """Add two numbers."""
    return f"v1 {a + b}"

@tool
def echo(text: str) -> str:
    """Echo."""
    return text
'''

PAIR_V2_CALC_ONLY = PAIR_V1.replace("def calc(a: int, b: int)", "def calc(b: int)").replace("a + b", "b")
PAIR_V2_BOTH = PAIR_V2_CALC_ONLY.replace("def echo(text: str)", "def echo(text: str, loud: bool = False)")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _recorded(
    tmp_path: Path, make_loader: Callable[..., ToolLoader], *sources: str, name: str = "calc.py"
) -> tuple[ToolLoader, HistoryStore, Path, list[str]]:
    """A watching loader that recorded each of ``sources`` in turn; returns the hashes, oldest first."""
    tools = tmp_path / "tools"
    path = write(tools / name, sources[0])
    recorder = HistoryRecorder(tmp_path / "state")
    loader = make_loader(tools, plugins=[recorder])
    assert recorder.flush(30)
    store = recorder.store_for(path)
    assert store is not None
    hashes = [_sha(path)]
    for source in sources[1:]:
        write(path, source)
        hashes.append(_sha(path))
        eventually(lambda: store.versions("calc")[0].content_hash == hashes[-1], message="version recorded")
    return loader, store, path, hashes


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--dir", "tools", "--state-dir", str(tmp_path / "state"), cwd=tmp_path)


def test_history_lists_versions_newest_first(tmp_path: Path, make_loader: Callable[..., ToolLoader]) -> None:
    _, _, _, hashes = _recorded(tmp_path, make_loader, CALC_V1, CALC_V2)
    result = _cli(tmp_path, "history", "calc")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if hashes[1][:12] in line)
    second = next(i for i, line in enumerate(lines) if hashes[0][:12] in line)
    assert first < second
    assert "breaking" in lines[first] and "(live)" in lines[first]
    assert "first" in lines[second] and "(live)" not in lines[second]
    assert "tools/calc.py" in lines[first]

    as_json = json.loads(_cli(tmp_path, "history", "calc", "--json").stdout)
    assert [v["content_hash"] for v in as_json["versions"]] == hashes[::-1]
    assert as_json["versions"][0]["change"]["kind"] == "breaking"
    assert as_json["versions"][0]["change"]["reasons"][0]["reason"] == "parameter 'a' removed"
    assert as_json["versions"][1]["change"] is None
    assert as_json["versions"][0]["replaced_at"] is None
    digests = [v["digest"] for v in as_json["versions"]]
    assert digests == [spec_digest(v["spec"]) for v in as_json["versions"]] and digests[0] != digests[1]
    assert digests[0][:12] in lines[first] and digests[1][:12] in lines[second]


def test_history_without_any_record_says_where_it_looked(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    result = _cli(tmp_path, "history", "calc")
    assert result.returncode == 2
    assert "no tool history for tools" in result.stderr
    assert str(database_path(tmp_path / "tools", tmp_path / "state")) in result.stderr.replace("\n", "")


def test_history_of_an_unknown_tool_names_the_known_ones(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    _recorded(tmp_path, make_loader, CALC_V1)
    result = _cli(tmp_path, "history", "nope")
    assert result.returncode == 2
    assert "no recorded versions of tool 'nope'; tools with history: calc" in result.stderr
    typo = _cli(tmp_path, "history", "cacl")
    assert typo.returncode == 2
    assert "no recorded versions of tool 'cacl'; did you mean 'calc'? tools with history: calc" in " ".join(
        typo.stderr.split()
    )


def test_diff_defaults_to_the_last_two(tmp_path: Path, make_loader: Callable[..., ToolLoader]) -> None:
    _, _, _, hashes = _recorded(tmp_path, make_loader, CALC_V1, CALC_V2, CALC_V1.replace("v1", "v3"))
    result = _cli(tmp_path, "diff", "calc")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # a comes back, and required: callers of the middle version break
    assert f"calc {hashes[1][:12]} -> {hashes[2][:12]}: BREAKING: required parameter 'a' added" in out
    assert "  breaking: required parameter 'a' added" in out
    assert '+        "a": {' in out
    assert "def calc" not in out  # no source without --source

    explicit = _cli(tmp_path, "diff", "calc", hashes[0][:8], hashes[1][:8], "--source")
    assert explicit.returncode == 0, explicit.stderr
    assert f"calc {hashes[0][:12]} -> {hashes[1][:12]}: BREAKING: parameter 'a' removed" in explicit.stdout
    assert "-def calc(a: int, b: int) -> str:" in explicit.stdout
    assert "+def calc(b: int) -> str:" in explicit.stdout

    unknown = _cli(tmp_path, "diff", "calc", "ffffffff")
    assert unknown.returncode == 2
    assert "no recorded version with hash 'ffffffff'" in unknown.stderr


def test_rollback_restores_the_previous_version_and_the_loader_serves_it(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    loader, store, path, hashes = _recorded(tmp_path, make_loader, CALC_V1, CALC_V2)
    v1_bytes = store.find("calc", hashes[0]).content
    assert call_text(loader, "calc", {"b": 2}) == "v2 2"

    result = _cli(tmp_path, "rollback", "calc")
    assert result.returncode == 0, result.stderr
    assert f"rolled back calc to {hashes[0][:12]} in tools/calc.py" in result.stdout
    assert path.read_bytes() == v1_bytes
    backup = Path(result.stdout.split("backup of the replaced file: ")[1].strip())
    assert backup.name == f"calc.py.bak-{hashes[1][:12]}"
    assert not backup.is_relative_to(tmp_path / "tools")
    assert backup.read_text() == CALC_V2.lstrip()
    assert not [
        p.name for p in (tmp_path / "tools").iterdir() if p.name.startswith(".")
    ]  # no temporaries left

    eventually(lambda: call_text(loader, "calc", {"a": 1, "b": 2}) == "v1 3", message="v1 serving again")
    eventually(lambda: store.versions("calc")[0].content_hash == hashes[0], message="rollback recorded")

    again = _cli(tmp_path, "rollback", "calc", "--to", hashes[0][:10])
    assert again.returncode == 0
    assert "already holds calc" in again.stdout


def test_rollback_refuses_when_another_tool_in_the_file_would_change(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    loader, _, path, hashes = _recorded(tmp_path, make_loader, PAIR_V1, PAIR_V2_BOTH)
    refused = _cli(tmp_path, "rollback", "calc")
    assert refused.returncode == 1
    assert "refused: rolling back calc rewrites tools/calc.py" in refused.stderr
    assert "these tools defined in tools/calc.py would change too: echo" in refused.stderr
    assert _sha(path) == hashes[1]  # untouched

    forced = _cli(tmp_path, "rollback", "calc", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "also changed: echo" in forced.stdout
    assert _sha(path) == hashes[0]
    eventually(lambda: call_text(loader, "calc", {"a": 1, "b": 1}) == "v1 2")


def test_rollback_allowed_when_other_tools_keep_their_definition(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    _, _, path, hashes = _recorded(tmp_path, make_loader, PAIR_V1, PAIR_V2_CALC_ONLY)
    result = _cli(tmp_path, "rollback", "calc", "--to", hashes[0][:12])
    assert result.returncode == 0, result.stderr
    assert "also changed" not in result.stdout
    assert _sha(path) == hashes[0]


def test_rollback_by_default_restores_the_version_before_the_live_one_not_the_oldest(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    calc_v3 = CALC_V1.replace("v1", "v3")
    loader, _, path, hashes = _recorded(tmp_path, make_loader, CALC_V1, CALC_V2, calc_v3)
    result = _cli(tmp_path, "rollback", "calc")
    assert result.returncode == 0, result.stderr
    assert f"rolled back calc to {hashes[1][:12]} in tools/calc.py" in result.stdout
    assert _sha(path) == hashes[1]
    eventually(lambda: call_text(loader, "calc", {"b": 2}) == "v2 2", message="v2 serving again")


def test_rollback_of_a_deleted_file_restores_the_version_that_served_last(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    loader, store, path, hashes = _recorded(tmp_path, make_loader, CALC_V1, CALC_V2)
    path.unlink()
    eventually(lambda: not store.versions("calc")[0].live, message="the removal recorded")
    result = _cli(tmp_path, "rollback", "calc")
    assert result.returncode == 0, result.stderr
    assert f"rolled back calc to {hashes[1][:12]} in tools/calc.py" in result.stdout
    assert _sha(path) == hashes[1]
    assert "backup" not in result.stdout  # nothing was replaced
    eventually(lambda: "calc" in loader.registry and call_text(loader, "calc", {"b": 2}) == "v2 2")


def test_rollback_whose_backup_cannot_be_written_says_so_and_changes_nothing(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    _, store, path, hashes = _recorded(tmp_path, make_loader, CALC_V1, CALC_V2)
    backups = backup_dir(store)
    assert not backups.parent.exists()
    backups.parent.write_text("a file where the backups folder goes")
    result = _cli(tmp_path, "rollback", "calc")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert f"cannot back up tools/calc.py into {backups}" in message, message
    assert "Not a directory" in message or "File exists" in message, message
    assert "cannot write tools/calc.py" not in message
    assert _sha(path) == hashes[1]  # untouched


def test_rollback_with_a_single_version_says_so(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    _recorded(tmp_path, make_loader, CALC_V1)
    result = _cli(tmp_path, "rollback", "calc")
    assert result.returncode == 2
    assert "only one recorded version" in result.stderr


def _watch(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], LineReader]:
    process = subprocess.Popen(
        warm_cli.command(["watch", "tools", *extra], cli_env()),
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = LineReader(process.stdout)
    out.wait_for(r"^watching tools")
    return process, out


def _stop(process: subprocess.Popen[str], out: LineReader) -> None:
    process.send_signal(signal.SIGINT)
    out.wait_for(r"^stopped watching$")
    assert process.wait(timeout=20) == 0


def test_watch_records_history_by_default(tmp_path: Path, private_state_dir: Path) -> None:
    path = write(tmp_path / "tools" / "calc.py", CALC_V1)
    first = _sha(path)
    process, out = _watch(tmp_path)
    try:
        write(path, CALC_V2)
        out.wait_for(r"updated tools/calc\.py calc")
        _stop(process, out)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # The default state directory ($TOOL_LOADER_STATE_DIR here) holds it.
    with HistoryStore(tmp_path / "tools", private_state_dir) as store:
        assert [v.content_hash for v in store.versions("calc")] == [_sha(path), first]
    listed = run_cli("history", "calc", "--dir", "tools", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["versions"]) == 2


def test_watch_no_history_records_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = write(tmp_path / "tools" / "calc.py", CALC_V1)
    process, out = _watch(tmp_path, "--no-history", "--state-dir", str(state))
    try:
        write(path, CALC_V2)
        out.wait_for(r"updated tools/calc\.py calc")
        _stop(process, out)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not database_path(tmp_path / "tools", state).exists()


def test_watch_with_an_unusable_state_dir_says_so(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "calc.py", CALC_V1)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state directory should be\n")
    result = run_cli("watch", "tools", "--state-dir", str(blocker), cwd=tmp_path)
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "cannot open the tool history" in message
    assert "pass --state-dir, or --no-history to run without it" in message


def test_serve_and_watch_take_the_history_and_gate_options(tmp_path: Path) -> None:
    for command in ("watch", "serve"):
        result = run_cli(command, "--help", cwd=tmp_path)
        assert result.returncode == 0
        for option in ("--no-history", "--state-dir", "--gate", "--example-timeout"):
            assert option in result.stdout, (command, option)


def test_serve_with_a_corrupt_history_starts_and_history_says_it_was_reset(tmp_path: Path) -> None:
    """An auxiliary file never stops the server: the corrupt database is set aside, a fresh one started."""
    state = tmp_path / "state"
    tools = tmp_path / "tools"
    write(tools / "calc.py", CALC_V1)
    database = database_path(tools, state)
    database.parent.mkdir(parents=True)
    database.write_bytes(b"\x00garbage, not SQLite\n" * 64)
    with serve_http(tools, tmp_path, "--state-dir", str(state), wait_ready=True) as served:
        assert post_json(served.url, INITIALIZE).status == 200
        eventually(lambda: any("corrupt" in line for line in served.lines), message="no warning")
    set_aside = list(database.parent.glob(database.name + ".corrupt-*"))
    assert len(set_aside) == 1
    assert any(str(set_aside[0]) in line for line in served.lines), served.lines
    result = _cli(tmp_path, "history", "calc")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "the history database was corrupt and was reset" in text
    assert str(set_aside[0]) in text


def test_history_says_when_versions_were_dropped(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    _, store, _, _ = _recorded(tmp_path, make_loader, CALC_V1)
    store.note_event(HistoryEvent(time.time(), HistoryEventKind.DROPPED, count=4, since=time.time() - 60))
    result = _cli(tmp_path, "history", "calc")
    assert result.returncode == 0, result.stderr
    assert "4 tool versions went live but were not recorded" in " ".join(result.stdout.split())
    events = json.loads(_cli(tmp_path, "history", "calc", "--json").stdout)["events"]
    assert [event["kind"] for event in events] == ["dropped"]


PROMPT_V1 = "---\ndescription: Say hello.\n---\nHello {{who}}\n"
PROMPT_V2 = "---\ndescription: Say hello warmly.\n---\nHello dear {{who}}\n"
SKILL_MD = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\n# pdf\n"


def test_history_of_a_prompt_a_resource_a_skill_and_of_everything(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    tools = tmp_path / "tools"
    write(tools / "calc.py", CALC_V1)
    prompt = write(tools / "prompts" / "greet.md", PROMPT_V1)
    schema = write(tools / "resources" / "schema.sql", "create table t (id int);\n")
    write(tools / "skills" / "pdf" / "SKILL.md", SKILL_MD)
    forms = write(tools / "skills" / "pdf" / "references" / "FORMS.md", "Fields: name.\n")
    recorder = HistoryRecorder(tmp_path / "state")
    make_loader(tools, plugins=[recorder])
    store = recorder.store_for(tools)
    assert store is not None
    write(prompt, PROMPT_V2)
    write(forms, "Fields: name, date.\n")
    eventually(
        lambda: (
            len(store.component_versions("prompt", "greet")) == 2
            and len(store.component_versions("skill", "pdf")) == 2
        ),
        message="the new versions recorded",
    )
    assert recorder.flush(30)

    shown = _cli(tmp_path, "history", "greet")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].rstrip() == "History of prompt greet (tools)"
    newest = next(line for line in lines if hashlib.sha256(PROMPT_V2.encode()).hexdigest()[:12] in line)
    oldest = next(line for line in lines if hashlib.sha256(PROMPT_V1.encode()).hexdigest()[:12] in line)
    assert "(live)" in newest and "changed" in newest and "Say hello warmly." in newest
    assert "(live)" not in oldest and "first" in oldest and "tools/prompts/greet.md" in oldest

    skill = _cli(tmp_path, "history", "pdf").stdout.splitlines()
    assert skill[0].rstrip() == "History of skill pdf (tools)"
    assert any("~references/FORMS.md" in line and "(live)" in line for line in skill), skill
    assert any("first" in line for line in skill)

    by_path = json.loads(_cli(tmp_path, "history", "resources/schema.sql", "--json").stdout)
    assert (by_path["kind"], by_path["key"]) == ("resource", "tool-loader:///resources/schema.sql")
    assert by_path["versions"][0]["digest"] == "sha256:" + _sha(schema)

    everything = json.loads(_cli(tmp_path, "history", "--json").stdout)
    assert [(row["kind"], row["name"], row["versions"]) for row in everything["recorded"]] == [
        ("tool", "calc", 1),
        ("prompt", "greet", 2),
        ("resource", "tool-loader:///resources/schema.sql", 1),
        ("skill", "pdf", 2),
        ("skill file", "skill://pdf/SKILL.md", 1),
        ("skill file", "skill://pdf/references/FORMS.md", 2),
    ]
    table = _cli(tmp_path, "history").stdout
    assert "Recorded in tools" in table and "skill://pdf/references/FORMS.md" in table

    wrong_kind = _cli(tmp_path, "history", "pdf", "--kind", "prompt")
    assert wrong_kind.returncode == 2
    message = " ".join(wrong_kind.stderr.split())
    assert "no recorded versions of prompt 'pdf'; tools with history: calc; " in message
    assert "prompts, resources and skills with history: prompt greet, resource tool-loader:///" in message


def test_watch_records_the_prompts_and_skills_it_found_at_start_and_each_save(
    tmp_path: Path, private_state_dir: Path
) -> None:
    """The first scan runs before the recorder is attached: what it loaded is recorded all the same."""
    prompt = write(tmp_path / "tools" / "prompts" / "greet.md", PROMPT_V1)
    write(tmp_path / "tools" / "skills" / "pdf" / "SKILL.md", SKILL_MD)
    process, out = _watch(tmp_path)
    try:
        write(prompt, PROMPT_V2)
        out.wait_for(r"updated tools/prompts/greet\.md prompt greet")
        _stop(process, out)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    greet = json.loads(run_cli("history", "greet", "--dir", "tools", "--json", cwd=tmp_path).stdout)
    assert [v["content_hash"] for v in greet["versions"]] == [
        hashlib.sha256(text.encode()).hexdigest() for text in (PROMPT_V2, PROMPT_V1)
    ]
    pdf = json.loads(run_cli("history", "pdf", "--dir", "tools", "--json", cwd=tmp_path).stdout)
    assert (pdf["kind"], len(pdf["versions"])) == ("skill", 1)
    assert pdf["versions"][0]["facts"]["manifest"][0]["uri"] == "skill://pdf/SKILL.md"
