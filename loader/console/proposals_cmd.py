"""``tool-loader proposals --dir DIR``: every proposal with its state, author, age and verdicts."""

from __future__ import annotations

import argparse
import json
import time

from rich.table import Table

from ..authoring.area import ProposalError
from ..authoring.workflow import list_proposals
from .common import UsageError, add_live_folder_argument, stdout_console
from .proposal_view import proposal_json

__all__ = ["HELP", "add_arguments", "run"]

HELP = "list the proposed tool files of a folder: state, author, age, tools, gate and spec verdicts"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``proposals --dir DIR [--json]``."""
    add_live_folder_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the proposals as JSON")


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def run(args: argparse.Namespace) -> int:
    """Exit 0 (also when there is none)."""
    try:
        records = [proposal_json(record) for record in list_proposals(args.dir)]
    except ProposalError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    out = stdout_console()
    if not records:
        out.print(f"no proposals in {args.dir}")
        return 0
    table = Table("id", "state", "author", "age", "tools", "gate", "spec vs live")
    table.columns[0].no_wrap = True
    now = time.time()
    for record in records:
        table.add_row(
            record["id"],
            record["state"],
            record["author"],
            _age(now - record["created"]),
            ", ".join(record["tools"]),
            record["gate"],
            record["spec"],
        )
    out.print(table)
    return 0
