"""``tool-loader config``: the effective settings of every command, and where each value came from."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.text import Text

from . import settings
from .common import stdout_console
from .render import titled_table

__all__ = ["HELP", "add_arguments", "effective_settings", "run"]

HELP = "print the effective settings (flags > TOOL_LOADER_* > pyproject.toml > defaults) and their sources"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``config [--json]``."""
    parser.add_argument("--json", action="store_true", help="print the settings as JSON")


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
    """Print every setting; the global ones once (under ``list``'s row they apply to every command)."""
    records = effective_settings()
    file = settings.load_file_config()
    where = str(file.path) if file.path else None
    if args.json:
        document = {"pyproject": where, "settings": records}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
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
    table = titled_table("Effective settings (flags on a command line override them)")
    table.add_column("command", no_wrap=True)
    table.add_column("option", no_wrap=True, style="bold")
    table.add_column("value", overflow="fold")
    table.add_column("source", overflow="fold")
    for record in records:
        command = "(all)" if record["option"] in ("verbose", "quiet", "no-color") else record["command"]
        value = record["value"]
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        style = "dim" if record["source"] == "default" else "green"
        table.add_row(command, record["option"], Text(shown or "-"), Text(record["source"], style=style))
    console.print(table)
    console.print(Text("environment variables: TOOL_LOADER_<OPTION>, e.g. TOOL_LOADER_DIRS", style="dim"))
    return 0
