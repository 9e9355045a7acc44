"""A command added by another module gets flags, TOOL_LOADER_<OPTION> and pyproject.toml support for free."""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

import pytest

from loader.console import cli
from loader.console.common import UsageError, positive_float


def _timeout_command() -> types.ModuleType:
    """A command module as another engineer would write it: HELP, add_arguments, run."""
    module = types.ModuleType("fake_timeout_command")
    module.HELP = "a command with one option of its own"  # type: ignore[attr-defined]

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--call-timeout", type=positive_float, default=30.0, help="seconds (default 30)")
        parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
        parser.add_argument("--host", default="127.0.0.1")

    module.add_arguments = add_arguments  # type: ignore[attr-defined]
    module.run = lambda args: 0  # type: ignore[attr-defined]
    module.APPLIES_ONLY_WITH = {"host": ("transport", "http")}  # type: ignore[attr-defined]
    return module


@pytest.fixture
def with_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "fake_timeout_command", _timeout_command())
    monkeypatch.setitem(cli.COMMANDS, "timed", "fake_timeout_command")
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("with_command")
def test_a_new_option_reads_flags_then_environment_then_pyproject_then_its_default(tmp_path: Path) -> None:
    assert cli.parse(["timed"], environ={}).args.call_timeout == 30.0
    (tmp_path / "pyproject.toml").write_text("[tool.tool-loader]\ncall-timeout = 5\n")
    from_file = cli.parse(["timed"], environ={})
    assert from_file.args.call_timeout == 5.0
    assert from_file.settings.values["call_timeout"].source.endswith("pyproject.toml [tool.tool-loader]")
    from_env = cli.parse(["timed"], environ={"TOOL_LOADER_CALL_TIMEOUT": "2.5"})
    assert from_env.args.call_timeout == 2.5
    assert from_env.settings.values["call_timeout"].source == "environment TOOL_LOADER_CALL_TIMEOUT"
    from_flag = cli.parse(["timed", "--call-timeout", "1"], environ={"TOOL_LOADER_CALL_TIMEOUT": "2.5"})
    assert (from_flag.args.call_timeout, from_flag.settings.values["call_timeout"].source) == (
        1.0,
        "command line",
    )


@pytest.mark.usefixtures("with_command")
def test_its_checks_and_rules_apply_to_every_source() -> None:
    with pytest.raises(UsageError, match="environment TOOL_LOADER_CALL_TIMEOUT: invalid value '0'"):
        cli.parse(["timed"], environ={"TOOL_LOADER_CALL_TIMEOUT": "0"})
    with pytest.raises(UsageError, match="timed --host applies only with --transport http"):
        cli.parse(["timed", "--host", "0.0.0.0"], environ={})
    # A configured host is not an error: configuration applies to every transport it may meet.
    assert cli.parse(["timed"], environ={"TOOL_LOADER_HOST": "0.0.0.0"}).args.host == "0.0.0.0"
    assert cli.parse(["timed", "--transport", "http", "--host", "::"], environ={}).args.host == "::"


# One command line per command, with the global options before and after it.
_COMMAND_LINES = [
    ["list", "tools", "--isolation", "process"],
    ["-v", "call", "echo", "--dir", "tools", "text=hi", "--call-timeout", "2"],
    ["serve", "tools", "--transport", "http", "--port", "0", "-q"],
    ["--no-color", "search", "weather", "--dir", "tools", "--limit", "3"],
    ["config"],
    ["new", "weather"],
    ["history", "--dir", "tools"],
    ["mcp-config", "tools"],
]


@pytest.mark.parametrize(
    "argv", _COMMAND_LINES, ids=lambda argv: next(w for w in argv if not w.startswith("-"))
)
def test_a_command_line_parses_the_same_with_only_its_command_built(argv: list[str]) -> None:
    command = cli.command_named(argv)
    assert command is not None and command in argv
    alone = cli.parse(argv, environ={}, parser=cli.build_parser(only=command))
    full = cli.parse(argv, environ={}, parser=cli.build_parser())
    assert vars(alone.args) == vars(full.args)
    assert alone.settings.values == full.settings.values


@pytest.mark.parametrize(
    "argv", [["--help"], ["-v", "--version"], [], ["-q"], ["lsit", "tools"], ["-v", "-h", "list"]]
)
def test_help_version_no_command_or_an_unknown_one_get_the_full_parser(argv: list[str]) -> None:
    assert cli.command_named(argv) is None


def test_running_a_command_imports_no_other_commands_module(tmp_path: Path) -> None:
    """Every run of ``tool-loader`` paid for importing all twenty commands' modules before it parsed."""
    import subprocess

    code = (
        "import sys\n"
        "from loader.console.cli import COMMANDS, main\n"
        "status = main(['list', '--json', sys.argv[1]])\n"
        "print(sorted(n for n, m in COMMANDS.items() if m in sys.modules), status)\n"
    )
    folder = tmp_path / "tools"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "['list'] 0"
