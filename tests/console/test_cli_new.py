"""``tool-loader new``: every style's file loads as written, answers a call and passes ``check --strict``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FAST, run_cli

from loader.console.common import UsageError
from loader.console.new import STYLES, render_template
from loader.reload.loader import ToolLoader
from loader.status import FileState


def test_each_style_loads_calls_and_passes_check_strict(tmp_path: Path) -> None:
    for style in STYLES:
        done = run_cli("new", f"my_{style}", "--style", style, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"created tools/my_{style}.py ({style} tool 'my_{style}')")
    tools = tmp_path / "tools"  # the default folder, created on first use
    assert sorted(p.name for p in tools.iterdir()) == ["my_class.py", "my_function.py", "my_module.py"]

    loader = ToolLoader([tools], config=FAST)
    try:
        report = loader.scan()
        assert [s.state for s in report.files] == [FileState.LOADED] * 3
        assert loader.registry.names() == ("my_class", "my_function", "my_module")
        kinds = {tool.tool_name: tool.tool_type for tool in loader.registry.list()}
        assert kinds == {"my_class": "class", "my_function": "function", "my_module": "module"}
        for name in kinds:
            result = loader.registry.invoke(name, {"text": "hi", "times": 2})
            assert result["status"] == "success", result
            assert result["content"] == [{"text": "hi hi"}]
    finally:
        loader.close()

    check = run_cli("check", "--strict", cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    assert "checked 3 tools in 3 files in tools: no problems found" in check.stdout


def test_refuses_to_overwrite_and_writes_to_the_given_dir(tmp_path: Path) -> None:
    target = tmp_path / "custom" / "deep"
    first = run_cli("new", "greeter", "--dir", str(target), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    written = (target / "greeter.py").read_text()
    (target / "greeter.py").write_text("# mine\n")
    again = run_cli("new", "greeter", "--dir", str(target), "--style", "class", cwd=tmp_path)
    assert again.returncode == 1
    assert "refused: custom/deep/greeter.py already exists; not overwriting it" in again.stderr
    assert (target / "greeter.py").read_text() == "# mine\n"
    assert written == render_template("greeter", "function")


@pytest.mark.parametrize("name", ["my-tool", "1abc", "class", "x" * 65, "loader", ""])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(UsageError):
        render_template(name, "function")


def test_invalid_name_is_a_usage_error_from_the_command(tmp_path: Path) -> None:
    done = run_cli("new", "my-tool", cwd=tmp_path)
    assert done.returncode == 2
    assert "invalid tool name 'my-tool': use a Python identifier" in done.stderr
    assert not (tmp_path / "tools").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("__init__", "__init__.py is a package's own file, which the loader never reads for tools"),
        ("__main__", "a name starting with '_' is for a private helper module"),
        ("_helper", "a name starting with '_' is for a private helper module"),
        (".hidden", "a file whose name starts with '.' is hidden, and the loader never reads it"),
    ],
)
def test_names_that_cannot_be_tool_files_are_refused(tmp_path: Path, name: str, why: str) -> None:
    done = run_cli("new", name, cwd=tmp_path)
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert message.startswith(f"error: {name!r} cannot be a tool file: {why}"), message
    assert "pick a name that starts with a letter" in message
    assert not (tmp_path / "tools").exists()


def test_a_name_the_folder_already_defines_is_refused_naming_file_and_line_unless_forced(
    tmp_path: Path,
) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "weather.py").write_text(
        'from loader import tool\n\n\n@tool\ndef forecast(city: str) -> str:\n    """Forecast."""\n    return city\n'
    )
    refused = run_cli("new", "forecast", cwd=tmp_path)
    assert refused.returncode == 1
    # the @tool line
    assert "a tool named 'forecast' is already defined at tools/weather.py:4" in " ".join(
        refused.stderr.split()
    )
    assert "--force" in refused.stderr
    assert not (tools / "forecast.py").exists()

    forced = run_cli("new", "forecast", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (tools / "forecast.py").is_file()


def test_a_new_skill_is_served_as_written_and_list_shows_it(tmp_path: Path) -> None:
    done = run_cli("new", "--skill", "pdf-forms", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("created tools/skills/pdf-forms/SKILL.md (skill 'pdf-forms')")
    (tmp_path / "tools" / "skills" / "pdf-forms" / "notes.txt").write_text("one file more\n")
    listed = run_cli("list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout
    (skill,) = json.loads(listed.stdout)["skills"]
    assert (skill["path"], skill["status"], skill["frontmatter"]["name"]) == (
        "pdf-forms",
        "serving",
        "pdf-forms",
    )
    assert [r["uri"] for r in skill["resources"]] == [
        "skill://pdf-forms/SKILL.md",
        "skill://pdf-forms/notes.txt",
    ]
    tools = tmp_path / "tools" / "skills" / "pdf-forms" / "tools"
    tools.mkdir()
    (tools / "fill_form.py").write_text(
        'from loader import tool\n\n\n@tool\ndef fill_form() -> str:\n    """Fill it."""\n    return "ok"\n'
    )
    (tool_entry,) = json.loads(run_cli("list", "--json", cwd=tmp_path).stdout)["tools"]
    assert (tool_entry["name"], tool_entry["skill"]) == ("fill_form", "pdf-forms")
    (tools / "fill_form.py").unlink()
    shown = run_cli("list", cwd=tmp_path)
    assert "Skills in tools" in shown.stdout and "serving" in shown.stdout
    assert "0 tools, 1 skill from 2 files in tools" in shown.stdout
    again = run_cli("new", "--skill", "pdf-forms", cwd=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr
    bad = run_cli("new", "--skill", "PDF_Forms", cwd=tmp_path)
    assert bad.returncode == 2 and "lowercase letters, digits and single hyphens" in bad.stderr


def test_check_names_a_bad_skill_md_by_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "skills" / "report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: report\ndescription: ok\nname: other\n---\nbody\n")
    check = run_cli("check", cwd=tmp_path)
    assert check.returncode == 1
    assert "skills/report/SKILL.md:4" in check.stdout and "must equal its folder's name" in check.stdout
