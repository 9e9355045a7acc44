"""Shell completion: the scripts, and the real completion protocol answering commands, options and tool names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import cli_env, run_cli

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nospace"),
        ("zsh", "#compdef tool-loader"),
        ("fish", "complete --command tool-loader"),
    ],
)
def test_completion_prints_a_script_for_each_shell(tmp_path: Path, shell: str, marker: str) -> None:
    done = run_cli("completion", shell, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout
    assert "tool-loader" in done.stdout


def test_an_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("completion", "tcsh", cwd=tmp_path)
    assert done.returncode == 2 and "invalid choice: 'tcsh'" in done.stderr


def complete(line: str, cwd: Path) -> list[str]:
    """What the shell script would get back for the command line ``line`` (cursor at its end)."""
    out = cwd / "completions.txt"
    env = {
        **cli_env(),
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "_ARGCOMPLETE_SUPPRESS_SPACE": "1",
        "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "COMP_TYPE": "9",
    }
    done = subprocess.run(
        [sys.executable, "-m", "loader"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return sorted(word.strip() for word in out.read_text().split("\n") if word.strip())


def test_commands_options_and_tool_names_complete(tmp_path: Path) -> None:
    commands = complete("tool-loader ", tmp_path)
    assert {"list", "watch", "call", "inspect", "check", "new", "serve", "config", "completion"} <= set(
        commands
    )
    assert {"--include", "--exclude", "--recursive", "--json"} <= set(
        complete("tool-loader list --", tmp_path)
    )
    names = complete(f"tool-loader call --dir {SAMPLE_TOOLS} c", tmp_path)
    assert names == ["calculator", "call_info", "count_primes", "currency_converter"]
    assert complete(f"tool-loader inspect --dir {SAMPLE_TOOLS} word", tmp_path) == ["word_count"]


def test_tool_names_come_from_the_configured_folders(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.tool-loader]\ndirs = ["{SAMPLE_TOOLS}"]\n')
    assert complete("tool-loader call sl", tmp_path) == ["slugify"]
