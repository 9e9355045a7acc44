"""Configuration layers on the real command: flags > TOOL_LOADER_<OPTION> > pyproject.toml > defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import run_cli, write


def _tool(name: str) -> str:
    return f'from loader import tool\n\n@tool\ndef {name}() -> str:\n    """Say {name}."""\n    return "{name}"\n'


def _project(tmp_path: Path, table: str) -> Path:
    """A project with tools in a/ and b/, configured by ``table``, and a sub-folder to run from."""
    write(tmp_path / "a" / "alpha.py", _tool("alpha"))
    write(tmp_path / "b" / "beta.py", _tool("beta"))
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.tool-loader]\n{table}\n')
    deep = tmp_path / "src" / "deep"
    deep.mkdir(parents=True)
    return deep


def _names(done: object) -> list[str]:
    stdout = getattr(done, "stdout", "")
    assert getattr(done, "returncode", None) == 0, getattr(done, "stderr", "")
    return sorted(tool["name"] for tool in json.loads(stdout)["tools"])


def test_the_nearest_pyproject_sets_options_with_paths_relative_to_it(tmp_path: Path) -> None:
    deep = _project(tmp_path, 'dirs = ["a"]\n\n[tool.tool-loader.call]\ndirs = ["b"]')
    assert _names(run_cli("list", "--json", cwd=deep)) == ["alpha"]  # found walking up from src/deep
    assert run_cli("call", "beta", cwd=deep).stdout == "beta\n"  # the command's own table wins


def test_precedence_is_flags_then_environment_then_file_then_defaults(tmp_path: Path) -> None:
    deep = _project(tmp_path, 'dirs = ["a"]\nevents = 3')
    env = {"TOOL_LOADER_DIRS": str(tmp_path / "b")}
    assert _names(run_cli("list", "--json", cwd=deep)) == ["alpha"]
    assert _names(run_cli("list", "--json", cwd=deep, env=env)) == ["beta"]
    assert _names(run_cli("list", "--json", str(tmp_path / "a"), cwd=deep, env=env)) == ["alpha"]
    both = {"TOOL_LOADER_DIRS": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}
    assert _names(run_cli("list", "--json", cwd=deep, env=both)) == ["alpha", "beta"]


def test_config_shows_each_value_and_where_it_came_from(tmp_path: Path) -> None:
    deep = _project(tmp_path, 'dirs = ["a"]\nevents = 3')
    done = run_cli("config", "--json", cwd=deep, env={"TOOL_LOADER_RECURSIVE": "false"})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["pyproject"] == str(tmp_path / "pyproject.toml")
    rows = {(r["command"], r["option"]): r for r in document["settings"]}
    assert rows[("watch", "events")]["value"] == 3
    assert rows[("watch", "events")]["source"] == f"{tmp_path / 'pyproject.toml'} [tool.tool-loader]"
    assert rows[("list", "dirs")]["value"] == [str(tmp_path / "a")]
    assert rows[("list", "recursive")] == {
        "command": "list",
        "option": "recursive",
        "env": "TOOL_LOADER_RECURSIVE",
        "value": False,
        "source": "environment TOOL_LOADER_RECURSIVE",
    }
    assert rows[("serve", "transport")]["source"] == "default"
    assert rows[("serve", "transport")]["value"] == "stdio"

    text = run_cli("config", cwd=deep, env={"TOOL_LOADER_RECURSIVE": "false"})
    assert f"configuration file: {tmp_path / 'pyproject.toml'}" in text.stdout
    assert "environment TOOL_LOADER_RECURSIVE" in text.stdout


def test_bad_configured_values_are_usage_errors_naming_their_source(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    done = run_cli("watch", cwd=tmp_path, env={"TOOL_LOADER_EVENTS": "0"})
    assert done.returncode == 2
    assert "environment TOOL_LOADER_EVENTS: invalid value '0' for --events: must be at least 1" in done.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.tool-loader]\ntransport = "carrier-pigeon"\n')
    done = run_cli("serve", cwd=tmp_path)
    assert done.returncode == 2
    assert "invalid value 'carrier-pigeon' for --transport: choose from stdio, http" in done.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.tool-loader\n")
    done = run_cli("list", cwd=tmp_path)
    assert (
        done.returncode == 2
        and f"cannot read configuration from {tmp_path / 'pyproject.toml'}" in done.stderr
    )


def test_help_lists_the_configuration_sources(tmp_path: Path) -> None:
    done = run_cli("--help", cwd=tmp_path)
    assert done.returncode == 0
    for words in (
        "options on the command line",
        "TOOL_LOADER_<OPTION>",
        "[tool.tool-loader] table of the nearest pyproject.toml",
        "tool-loader config",
        "130 interrupted",
    ):
        assert words in done.stdout


def test_a_nearer_pyproject_without_the_table_does_not_hide_a_parent_that_has_one(tmp_path: Path) -> None:
    deep = _project(tmp_path, 'dirs = ["a"]\nevents = 3')
    (deep.parent / "pyproject.toml").write_text(
        '[project]\nname = "inner"\n\n[tool.ruff]\nline-length = 99\n'
    )
    assert _names(run_cli("list", "--json", cwd=deep)) == ["alpha"]  # read from the parent's table
    document = json.loads(run_cli("config", "--json", cwd=deep).stdout)
    assert document["pyproject"] == str(tmp_path / "pyproject.toml")
    rows = {(r["command"], r["option"]): r for r in document["settings"]}
    assert rows[("watch", "events")]["source"] == f"{tmp_path / 'pyproject.toml'} [tool.tool-loader]"


def test_config_names_no_table_when_no_pyproject_has_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    done = run_cli("config", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"configuration file: none (no pyproject.toml with a [tool.tool-loader] table at or above {tmp_path})"
    )
    assert json.loads(run_cli("config", "--json", cwd=tmp_path).stdout)["pyproject"] is None


def _rows(stdout: str) -> list[list[str]]:
    """The table's rows as [commands, option, value, source] (columns are two spaces or more apart)."""
    rows = []
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in re.split(r"\s{2,}", line.strip())]
        if len(cells) == 4 and cells[0] != "commands":
            rows.append(cells)
    return rows


def test_config_shows_what_is_set_and_where_and_all_adds_the_defaults(tmp_path: Path) -> None:
    deep = _project(tmp_path, 'dirs = ["a"]\nevents = 3')
    state = tmp_path / "state"
    env = {"TOOL_LOADER_RECURSIVE": "false", "TOOL_LOADER_STATE_DIR": str(state), "COLUMNS": "400"}
    done = run_cli("config", cwd=deep, env=env)
    assert done.returncode == 0, done.stderr
    pyproject = f"{tmp_path / 'pyproject.toml'} [tool.tool-loader]"
    rows = {row[1]: row for row in _rows(done.stdout)}
    assert set(rows) == {"dirs", "recursive", "events", "state-dir"}, done.stdout
    assert rows["dirs"][2:] == [str(tmp_path / "a"), pyproject]
    assert rows["dirs"][0].startswith("list, watch, call, inspect, check, serve")
    assert rows["recursive"][2:] == ["False", "environment TOOL_LOADER_RECURSIVE"]
    assert rows["events"] == ["watch", "events", "3", pyproject]
    assert rows["state-dir"][2:] == [str(state), "environment TOOL_LOADER_STATE_DIR"]
    assert "tool-loader config --all" in done.stdout

    everything = run_cli("config", "--all", cwd=deep, env=env)
    all_rows = _rows(everything.stdout)
    assert len(all_rows) > len(rows)
    assert ["(all)", "verbose", "0", "default"] in all_rows
    assert any(row[1] == "transport" and row[2:] == ["stdio", "default"] for row in all_rows)


def test_config_with_nothing_set_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOL_LOADER_STATE_DIR")  # set for every test, so none writes to the user's
    done = run_cli("config", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _rows(done.stdout) == []
    assert "nothing set: every option has its default (tool-loader config --all lists them)" in done.stdout
