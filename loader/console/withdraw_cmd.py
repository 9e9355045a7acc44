"""``tool-loader withdraw ID --dir DIR``: mark a proposal never to be promoted."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from ..authoring.area import ProposalError
from ..authoring.workflow import PromoteRefused, withdraw
from .common import UsageError, stderr_console, stdout_console

__all__ = ["HELP", "add_arguments", "run"]

HELP = "withdraw a proposal: it is never promoted (its files and report stay for the record)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``withdraw ID --dir DIR``."""
    parser.add_argument("id", metavar="ID", help="the proposal id (see `tool-loader proposals`)")
    parser.add_argument(
        "--dir", "-d", dest="dir", type=Path, required=True, metavar="DIR", help="the live tool folder"
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when withdrawn, 1 when refused (it was promoted), 2 for an unknown proposal."""
    try:
        record = withdraw(args.dir, args.id)
    except PromoteRefused as exc:
        stderr_console().print(Text(f"refused: {exc}", style="bold red"), soft_wrap=True)
        return 1
    except ProposalError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise UsageError(f"cannot write into {args.dir}: {exc.strerror or exc}") from exc
    stdout_console().print(Text(f"withdrew {record.id}: it will not be promoted"), soft_wrap=True)
    return 0
