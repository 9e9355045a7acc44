"""``tool-loader propose FILE... --dir DIR``: keep files as a proposal and gate them in the sandbox."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..authoring.area import ProposalError
from ..authoring.gate import GateOptions
from ..authoring.workflow import propose_files
from ..isolation.sandbox.options import SandboxOptions
from .common import UsageError, add_live_folder_argument, positive_int, stdout_console
from .proposal_view import print_report, proposal_json
from .render import quiet_logs

__all__ = ["HELP", "add_arguments", "run"]

HELP = "propose tool files: kept outside the live folder and gated in the sandbox (exit 0 passed, 1 failed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``propose FILE... --dir DIR [--author NAME] [--cases N] [--seed S] [--json]``."""
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="the tool files to propose")
    add_live_folder_argument(parser)
    parser.add_argument("--author", default=None, help="who wrote it (default: the user name)")
    parser.add_argument(
        "--cases", type=positive_int, default=100, help="property cases per tool (default 100)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the property tests' seed (default 0)")
    parser.add_argument(
        "--sandbox-best-effort",
        action="store_true",
        help="gate with the sandbox layers this machine has, instead of refusing when one is missing",
    )
    parser.add_argument("--json", action="store_true", help="print the proposal and its report as JSON")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the gate passed (the proposal waits for promotion), 1 when it failed."""
    quiet_logs(args.verbose, tool_errors=True)
    if not args.dir.is_dir():
        raise UsageError(f"{args.dir} is not a folder")
    options = GateOptions(
        cases=args.cases, seed=args.seed, sandbox=SandboxOptions(best_effort=args.sandbox_best_effort)
    )
    try:
        record = propose_files(args.dir, args.files, author=args.author, options=options)
    except ProposalError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(proposal_json(record), indent=2))
    else:
        print_report(stdout_console(), record)
    return 0 if record.state.value == "passed" else 1
