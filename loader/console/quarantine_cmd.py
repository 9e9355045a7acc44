"""``tool-loader quarantine NAME --dir DIR`` and ``unquarantine``: a live tool out of listings and calls."""

from __future__ import annotations

import argparse

from rich.text import Text

from ..authoring.quarantine import QUARANTINE_FILE, set_quarantined
from .common import UsageError, add_live_folder_argument, stdout_console

__all__ = ["HELP", "add_arguments", "run"]

HELP = (
    "quarantine a tool: out of listings, its calls refused, in every loader serving the folder "
    "(unquarantine: back); kept across restarts"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``quarantine NAME --dir DIR`` (and ``unquarantine NAME --dir DIR``)."""
    parser.add_argument("name", metavar="NAME", help="the tool name")
    add_live_folder_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Exit 0 (also when the tool already was in that state)."""
    if not args.dir.is_dir():
        raise UsageError(f"{args.dir} is not a folder")
    quarantined = args._command == "quarantine"
    try:
        changed = set_quarantined(args.dir, args.name, quarantined)
    except OSError as exc:
        raise UsageError(f"cannot write {args.dir / QUARANTINE_FILE}: {exc.strerror or exc}") from exc
    state = "quarantined" if quarantined else "released from quarantine"
    already = "" if changed else " (it already was)"
    stdout_console().print(Text(f"{args.name} {state} in {args.dir}{already}"), soft_wrap=True)
    return 0
