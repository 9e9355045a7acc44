"""``tool-loader config``: the effective settings of every command, and where each value came from."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.text import Text

from . import settings
from .common import print_json, stdout_console
from .render import titled_table

__all__ = ["HELP", "add_arguments", "effective_settings", "run"]

HELP = "print the effective settings (flags > TOOL_LOADER_* > pyproject.toml > defaults) and their sources"


_GLOBAL = ("verbose", "quiet", "no-color")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``config [--all] [--json]``."""
    parser.add_argument(
        "--all", action="store_true", help="also list the options left at their defaults (--json always does)"
    )
    parser.add_argument("--json", action="store_true", help="print every setting as JSON")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def effective_settings() -> list[dict[str, Any]]:
    """One record per command option: its value and source with no flags given (env, file, default)."""
    from .cli import COMMANDS, settings_for

    records: list[dict[str, Any]] = []
    for command in COMMANDS:
        if command in ("config", "completion"):
            continue
        for key, setting in settings_for(command).values.items():
            if key in ("verbose", "quiet", "no_color") and command != "list":
                continue
            records.append(
                {
                    "command": command,
                    "option": key.replace("_", "-"),
                    "env": settings.env_name(key),
                    "value": _jsonable(setting.value),
                    "source": setting.source,
                }
            )
    return records


def run(args: argparse.Namespace) -> int:
    """Print what is set (``--all``: every setting) and where each value came from.

    The same value from the same place for several commands is one row naming
    them; the global options (``-v``, ``-q``, ``--no-color``) show as ``(all)``.
    """
    records = effective_settings()
    file = settings.load_file_config()
    where = str(file.path) if file.path else None
    if args.json:
        document = {"pyproject": where, "settings": records}
        print_json(document)
        return 0
    console = stdout_console()
    console.print(
        Text(
            f"configuration file: {where} [tool.tool-loader]"
            if where
            else f"configuration file: none (no pyproject.toml with a [tool.tool-loader] table "
            f"at or above {os.getcwd()})",
        ),
        highlight=False,
        soft_wrap=True,
    )
    rows = _rows(records, everything=args.all)
    if not rows:
        console.print(
            Text("nothing set: every option has its default (tool-loader config --all lists them)"),
            highlight=False,
        )
        return 0
    title = (
        "Effective settings (flags on a command line override them)"
        if args.all
        else "Settings that are set (flags on a command line override them; "
        "tool-loader config --all adds the defaults)"
    )
    table = titled_table(title)
    table.add_column("commands", overflow="fold")
    table.add_column("option", no_wrap=True, style="bold")
    table.add_column("value", overflow="fold")
    table.add_column("source", overflow="fold")
    for (option, shown, source), commands in rows.items():
        style = "dim" if source == "default" else "green"
        table.add_row(", ".join(commands), option, Text(shown or "-"), Text(source, style=style))
    console.print(table)
    console.print(Text("environment variables: TOOL_LOADER_<OPTION>, e.g. TOOL_LOADER_DIRS", style="dim"))
    return 0


def _rows(records: list[dict[str, Any]], *, everything: bool) -> dict[tuple[str, str, str], list[str]]:
    """``(option, value as shown, source)`` -> the commands it applies to; defaults only if ``everything``."""
    rows: dict[tuple[str, str, str], list[str]] = {}
    for record in records:
        if record["source"] == "default" and not everything:
            continue
        value = record["value"]
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        command = "(all)" if record["option"] in _GLOBAL else record["command"]
        rows.setdefault((record["option"], shown, record["source"]), []).append(command)
    return rows
