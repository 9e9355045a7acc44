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
