"""What every console command shares: folder arguments, number types and the output consoles."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

__all__ = [
    "UsageError",
    "add_dirs_argument",
    "add_live_folder_argument",
    "error_console",
    "positive_float",
    "positive_int",
    "print_json",
    "resolve_dirs",
    "set_quiet",
    "stderr_console",
    "stdout_console",
]

DEFAULT_TOOLS_DIR = Path("tools")

_quiet = False


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit status 2."""


def set_quiet(quiet: bool) -> None:
    """``-q``: progress, summaries and stream events on stderr go silent (errors still show)."""
    global _quiet
    _quiet = quiet


def print_json(document: Any, default: Callable[[Any], Any] | None = None) -> None:
    """``document`` on stdout as indented JSON (``--json``); ``default`` turns what JSON cannot hold."""
    sys.stdout.write(json.dumps(document, indent=2, default=default) + "\n")
    sys.stdout.flush()


def stdout_console() -> Console:
    """The console for a command's output (soft wrap off so JSON stays intact)."""
    return Console(soft_wrap=False)


def stderr_console() -> Console:
    """The console for progress and chatter on stderr (silent under ``-q``)."""
    return Console(stderr=True, quiet=_quiet)


def error_console() -> Console:
    """The console for errors: shown even under ``-q``."""
    return Console(stderr=True)


# ----------------------------------------------------------------- numbers
def _number(kind: type[int] | type[float], text: str, *, least: float, inclusive: bool) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
    if value < least or (not inclusive and value == least):
        bound = f"at least {least:g}" if inclusive else f"more than {least:g}"
        raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer of 1 or more (``--events 0`` is a usage error)."""
    return int(_number(int, text, least=1, inclusive=True))


def positive_float(text: str) -> float:
    """An argparse type: a number of seconds above 0 (timeouts)."""
    return float(_number(float, text, least=0, inclusive=False))


# ----------------------------------------------------------------- folders
def add_live_folder_argument(parser: argparse.ArgumentParser) -> None:
    """``--dir DIR``: the one live tool folder of the authoring commands (propose, promote, quarantine...)."""
    parser.add_argument(
        "--dir", "-d", dest="dir", type=Path, required=True, metavar="DIR", help="the live tool folder"
    )


def add_dirs_argument(parser: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """The tool folders (positional ``DIR...`` or ``--dir DIR``) and which files in them load."""
    help_text = "tool directories to load (default: ./tools if it exists)"
    if positional:
        parser.add_argument("dirs", nargs="*", metavar="DIR", type=Path, help=help_text)
    else:
        parser.add_argument(
            "--dir", "-d", dest="dirs", action="append", default=[], type=Path, metavar="DIR", help=help_text
        )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="load only files matching GLOB (a name like 'calc*.py', or a path below the folder "
        "like 'math/*.py'); repeatable",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files matching GLOB (as --include); repeatable; wins over --include",
    )
    recursive = parser.add_argument("--recursive", action=argparse.BooleanOptionalAction, default=True)
    recursive.help = "also load sub-folders (default: yes)"


def resolve_dirs(dirs: Sequence[Path] | None) -> list[Path]:
    """The directories a command works on: the given ones, else ``./tools`` if it exists."""
    if dirs:
        return [Path(d) for d in dirs]
    if DEFAULT_TOOLS_DIR.is_dir():
        return [DEFAULT_TOOLS_DIR]
    raise UsageError(
        "no tool directory given and ./tools does not exist; pass one, e.g. `tool-loader list sample_tools`"
    )
