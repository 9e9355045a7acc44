"""Where each option's value comes from: flags > ``TOOL_LOADER_<OPTION>`` > ``pyproject.toml`` > defaults.

Generic over the parser: every option of every command (and the ``DIR``
positional) can be set in the environment as ``TOOL_LOADER_<OPTION>`` (the
option's name in capitals, ``-`` as ``_``: ``TOOL_LOADER_CALL_TIMEOUT``) or in
the ``[tool.tool-loader]`` table of the nearest ``pyproject.toml`` that has one
(walking up from the working directory past files without it, as ruff and
pytest do: a sub-project's own ``pyproject.toml`` does not hide the settings
above it), where ``[tool.tool-loader.<command>]`` overrides the table for one
command. A command that adds an option gets all of this
without a line of its own.

How it works: before parsing, every such option's default is set to ``None``,
so after parsing ``None`` (or an empty list) means "not on the command line";
those are then filled from the environment, the file, or the original default,
and the source of each value is remembered for ``tool-loader config``.
"""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import UsageError

__all__ = [
    "ENV_PREFIX",
    "FileConfig",
    "Setting",
    "Settings",
    "load_file_config",
    "prepare",
    "resolve",
]

ENV_PREFIX = "TOOL_LOADER_"
TABLE = "tool-loader"
_SKIP = frozenset({"help", "version", "command"})
_POSITIONALS = frozenset({"dirs"})
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


@dataclass(frozen=True, slots=True)
class Setting:
    """One option's effective value and where it came from."""

    key: str
    value: Any
    source: str


@dataclass(slots=True)
class FileConfig:
    """The ``[tool.tool-loader]`` table of the nearest ``pyproject.toml`` having one (empty when none has)."""

    path: Path | None = None
    table: dict[str, Any] = field(default_factory=dict)

    def value(self, command: str | None, key: str) -> tuple[Any, str] | None:
        """The value for ``key`` (command table first) and where it was found."""
        where = f"{self.path} [tool.{TABLE}"
        sub = self.table.get(command) if command else None
        for table, label in ((sub, f"{where}.{command}]"), (self.table, f"{where}]")):
            if isinstance(table, Mapping):
                for spelling in (key, key.replace("_", "-")):
                    if spelling in table and not isinstance(table[spelling], Mapping):
                        return table[spelling], label
        return None


def _read_table(path: Path) -> dict[str, Any] | None:
    """The ``[tool.tool-loader]`` table of one ``pyproject.toml``, None when it has none.

    Raises:
        UsageError: The file is not valid TOML, or the entry is not a table.
    """
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read configuration from {path}: {exc}") from None
    tool = document.get("tool", {})
    if not isinstance(tool, dict) or TABLE not in tool:
        return None
    table = tool[TABLE]
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.{TABLE}] must be a table")
    return table


def load_file_config(start: Path | None = None) -> FileConfig:
    """Read ``[tool.tool-loader]`` from the nearest ``pyproject.toml`` that has the table.

    Raises:
        UsageError: A file on the way is not valid TOML (naming the file and the error).
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and (table := _read_table(candidate)) is not None:
            return FileConfig(candidate, table)
    return FileConfig()


def _configurable(action: argparse.Action) -> bool:
    if action.dest in _SKIP or isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
        return False
    if isinstance(action, argparse._SubParsersAction) or action.default is argparse.SUPPRESS:
        return False
    return bool(action.option_strings) or action.dest in _POSITIONALS


def configurable_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options of ``parser`` that configuration can set."""
    return [action for action in parser._actions if _configurable(action)]


def prepare(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Set every configurable option's default to ``None``; return the original defaults by ``dest``."""
    defaults: dict[str, Any] = {}
    for action in configurable_actions(parser):
        defaults.setdefault(action.dest, action.default)
        action.default = None
    return defaults


def env_name(dest: str) -> str:
    """``call_timeout`` → ``TOOL_LOADER_CALL_TIMEOUT``."""
    return ENV_PREFIX + dest.upper().replace("-", "_")


def _is_list(action: argparse.Action) -> bool:
    return isinstance(action, argparse._AppendAction) or action.nargs in ("*", "+")


def _is_flag(action: argparse.Action) -> bool:
    return isinstance(
        action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse.BooleanOptionalAction)
    )


def _label(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def convert(action: argparse.Action, raw: Any, source: str, base: Path | None) -> Any:
    """A value from the environment (a string) or the file (TOML) as the option's own type.

    Relative paths from the file are taken relative to the file's folder.

    Raises:
        UsageError: The value does not fit the option, naming where it came from.
    """

    def fail(why: str) -> UsageError:
        return UsageError(f"{source}: invalid value {raw!r} for {_label(action)}: {why}")

    if _is_flag(action):
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise fail("expected true or false")
    if isinstance(action, argparse._CountAction):
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise fail("expected a number") from None
    if _is_list(action):
        if isinstance(raw, str):
            items: list[Any] = [p for p in raw.split(os.pathsep if action.dest == "dirs" else ",") if p]
        elif isinstance(raw, list):
            items = raw
        else:
            raise fail("expected a list")
        return [_one(action, item, fail, base) for item in items]
    return _one(action, raw, fail, base)


def _one(action: argparse.Action, raw: Any, fail: Any, base: Path | None) -> Any:
    value = raw
    convert_type = action.type
    if callable(convert_type):
        try:
            value = convert_type(str(raw))
        except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
            raise fail(str(exc) or type(exc).__name__) from None
    if action.choices is not None and value not in action.choices:
        raise fail(f"choose from {', '.join(map(str, action.choices))}")
    if isinstance(value, Path) and base is not None and not value.is_absolute():
        value = base / value
    return value


@dataclass(slots=True)
class Settings:
    """The effective value of every configurable option of one command, with its source."""

    values: dict[str, Setting] = field(default_factory=dict)
    file: FileConfig = field(default_factory=FileConfig)


def resolve(
    args: argparse.Namespace,
    actions: Iterable[argparse.Action],
    defaults: Mapping[str, Any],
    *,
    command: str | None,
    file: FileConfig,
    environ: Mapping[str, str],
) -> Settings:
    """Fill every option not given on the command line from env, then file, then its default."""
    settings = Settings(file=file)
    seen: set[str] = set()
    for action in actions:
        dest = action.dest
        if dest in seen:
            continue
        seen.add(dest)
        given = getattr(args, dest, None)
        if given is not None and given != []:
            settings.values[dest] = Setting(dest, given, "command line")
            continue
        name = env_name(dest)
        if name in environ:
            value = convert(action, environ[name], f"environment {name}", None)
            source = f"environment {name}"
        elif (found := file.value(command, dest)) is not None:
            raw, source = found
            value = convert(action, raw, source, file.path.parent if file.path else None)
        else:
            value, source = defaults.get(dest), "default"
            if _is_list(action) and value is None:
                value = []
        setattr(args, dest, value)
        settings.values[dest] = Setting(dest, value, source)
    return settings
