"""``tool-loader withdraw ID --dir DIR``: mark a proposal never to be promoted."""

from __future__ import annotations

import argparse

from rich.text import Text

from ..authoring.workflow import withdraw
from .common import add_live_folder_argument, stdout_console
from .proposal_step import take_step

__all__ = ["HELP", "add_arguments", "run"]

HELP = "withdraw a proposal: it is never promoted (its files and report stay for the record)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``withdraw ID --dir DIR``."""
    parser.add_argument("id", metavar="ID", help="the proposal id (see `tool-loader proposals`)")
    add_live_folder_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when withdrawn, 1 when refused (it was promoted), 2 for an unknown proposal."""
    record = take_step(lambda: withdraw(args.dir, args.id), args.dir)
    if record is None:
        return 1
    stdout_console().print(Text(f"withdrew {record.id}: it will not be promoted"), soft_wrap=True)
    return 0
