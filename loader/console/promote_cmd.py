"""``tool-loader promote ID --dir DIR``: write a passed proposal's gated bytes into the live folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from ..authoring.area import ProposalError
from ..authoring.workflow import PromoteRefused, promote
from .common import UsageError, stderr_console, stdout_console
from .render import display_path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "promote a passed proposal into the live folder, with its provenance (refused if its bytes changed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``promote ID --dir DIR [--allow-breaking]``."""
    parser.add_argument("id", metavar="ID", help="the proposal id (see `tool-loader proposals`)")
    parser.add_argument(
        "--dir", "-d", dest="dir", type=Path, required=True, metavar="DIR", help="the live tool folder"
    )
    parser.add_argument(
        "--allow-breaking", action="store_true", help="promote even when it breaks the callers of a live tool"
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when promoted, 1 when refused, 2 for an unknown proposal."""
    try:
        promotion = promote(args.dir, args.id, allow_breaking=args.allow_breaking)
    except PromoteRefused as exc:
        stderr_console().print(Text(f"refused: {exc}", style="bold red"), soft_wrap=True)
        return 1
    except ProposalError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise UsageError(f"cannot write into {args.dir}: {exc.strerror or exc}") from exc
    out = stdout_console()
    for path in promotion.written:
        out.print(Text(f"promoted {promotion.record.id} into {display_path(path)}"), soft_wrap=True)
    return 0
