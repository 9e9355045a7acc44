"""``tool-loader promote ID --dir DIR``: write a passed proposal's gated bytes into the live folder."""

from __future__ import annotations

import argparse

from rich.text import Text

from ..authoring.workflow import promote
from .common import add_live_folder_argument, stdout_console
from .proposal_step import take_step
from .render import display_path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "promote a passed proposal into the live folder, with its provenance (refused if its bytes changed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``promote ID --dir DIR [--allow-breaking]``."""
    parser.add_argument("id", metavar="ID", help="the proposal id (see `tool-loader proposals`)")
    add_live_folder_argument(parser)
    parser.add_argument(
        "--allow-breaking", action="store_true", help="promote even when it breaks the callers of a live tool"
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when promoted, 1 when refused, 2 for an unknown proposal."""
    promotion = take_step(lambda: promote(args.dir, args.id, allow_breaking=args.allow_breaking), args.dir)
    if promotion is None:
        return 1
    out = stdout_console()
    for path in promotion.written:
        out.print(Text(f"promoted {promotion.record.id} into {display_path(path)}"), soft_wrap=True)
    return 0
