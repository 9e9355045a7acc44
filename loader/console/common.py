"""What every console command shares: directory arguments and the output consoles."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

__all__ = ["UsageError", "add_dirs_argument", "resolve_dirs", "stderr_console", "stdout_console"]

DEFAULT_TOOLS_DIR = Path("tools")


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit status 2."""


def stdout_console() -> Console:
    """The console for a command's output (soft wrap off so JSON stays intact)."""
    return Console(soft_wrap=False)


def stderr_console() -> Console:
    """The console for errors and progress."""
    return Console(stderr=True)


def add_dirs_argument(parser: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """Add the tool directories argument (positional ``DIR...`` or ``--dir DIR``)."""
    help_text = "tool directories to load (default: ./tools if it exists)"
    if positional:
        parser.add_argument("dirs", nargs="*", metavar="DIR", type=Path, help=help_text)
    else:
        parser.add_argument(
            "--dir", "-d", dest="dirs", action="append", default=[], type=Path, metavar="DIR", help=help_text
        )


def resolve_dirs(dirs: Sequence[Path] | None) -> list[Path]:
    """The directories a command works on: the given ones, else ``./tools`` if it exists."""
    if dirs:
        return [Path(d) for d in dirs]
    if DEFAULT_TOOLS_DIR.is_dir():
        return [DEFAULT_TOOLS_DIR]
    raise UsageError(
        "no tool directory given and ./tools does not exist; pass one, e.g. `tool-loader list sample_tools`"
    )
