"""``list`` and ``check`` show prompts and resources (a kind column) and a broken front matter at file:line."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_cli, write

BROKEN = "---\ntitle: Broken\narguments: [unclosed\nvalues: {}\n---\nHi\n"


def fill(tools: Path) -> None:
    write(
        tools / "kit.py",
        'from loader import resource\n\n@resource("data://motd")\ndef motd() -> str:\n    return "hi"\n',
    )
    write(tools / "prompts" / "greet.md", "---\ndescription: Say hello.\n---\nHello {{who}}\n")
    write(tools / "resources" / "schema.sql", "create table t (id int);\n")
    write(tools / "prompts" / "broken.md", BROKEN)


def test_list_shows_each_prompt_and_resource_with_its_kind(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    fill(tools)
    shown = run_cli("list", str(tools), cwd=tmp_path, env={"COLUMNS": "160"})
    assert shown.returncode == 1  # the broken prompt file
    rows = [line.split() for line in shown.stdout.splitlines()]
    assert ["prompt", "greet"] == rows[[r[:2] for r in rows].index(["prompt", "greet"])][:2]
    assert any(r[:2] == ["resource", "data://motd"] for r in rows)
    assert any(r[:2] == ["resource", "tool-loader:///resources/schema.sql"] for r in rows)
    assert "1 prompt, 2 resources" in shown.stdout
    assert "prompts/broken.md:4" in shown.stdout

    document = json.loads(run_cli("list", str(tools), "--json", cwd=tmp_path).stdout)
    assert [(c["kind"], c["key"]) for c in document["components"]] == [
        ("prompt", "greet"),
        ("resource", "data://motd"),
        ("resource", "tool-loader:///resources/schema.sql"),
    ]


def test_check_reports_a_broken_front_matter_at_its_line(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    fill(tools)
    checked = run_cli("check", str(tools), cwd=tmp_path, env={"COLUMNS": "200"})
    assert checked.returncode == 1
    assert "prompts/broken.md:4" in checked.stdout
    assert "front matter is not valid YAML" in checked.stdout


def test_inspect_shows_a_prompt_or_a_resource_by_name_or_uri(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    fill(tools)
    shown = run_cli("inspect", "greet", "--dir", str(tools), cwd=tmp_path, env={"COLUMNS": "120"})
    assert shown.returncode == 0, shown.stderr
    assert "prompt greet" in shown.stdout and "Say hello." in shown.stdout
    assert "who" in shown.stdout  # its argument, from the {{who}} placeholder
    record = json.loads(
        run_cli("inspect", "resources/schema.sql", "--dir", str(tools), "--json", cwd=tmp_path).stdout
    )
    assert (record["kind"], record["key"], record["name"]) == (
        "resource",
        "tool-loader:///resources/schema.sql",
        "resources/schema.sql",
    )
