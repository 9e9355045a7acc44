"""``tool-loader rollback NAME [--to HASH]``: put a recorded version back; the running loader reloads it."""

from __future__ import annotations

import argparse

from rich.text import Text

from ..history.rollback import BackupFailed, RollbackRefused, apply_rollback, plan_rollback
from ..history.store import HistoryError
from .common import UsageError, add_dirs_argument, stderr_console, stdout_console
from .history_options import add_history_arguments, open_history, store_with_tool
from .render import display_path

__all__ = ["HELP", "add_arguments", "run"]

HELP = (
    "write a recorded version of a tool back to its file (default: the previous version, or the last "
    "one if the tool is gone), keeping a backup"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``rollback NAME [--to HASH] [--dir D] [--force] [--state-dir S]``."""
    parser.add_argument("name", metavar="NAME", help="the tool name")
    parser.add_argument(
        "--to",
        metavar="HASH",
        help="hash (prefix) of the version to restore (default: previous; the last one if the tool is gone)",
    )
    add_dirs_argument(parser, positional=False)
    parser.add_argument(
        "--force",
        action="store_true",
        help="roll back even if other tools defined in the same file change too",
    )
    add_history_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when written (or already there), 1 when refused, 2 for a usage error."""
    stores = open_history(args.dirs, args.state_dir)
    try:
        store = store_with_tool(stores, args.name)
        try:
            plan = plan_rollback(store, args.name, args.to)
        except HistoryError as exc:
            raise UsageError(str(exc)) from exc
        where = display_path(plan.path)
        out = stdout_console()
        if not plan.needed:
            out.print(Text(f"{where} already holds {args.name} {plan.target.short_hash}; nothing to do"))
            return 0
        try:
            backup = apply_rollback(plan, store, force=args.force)
        except RollbackRefused as exc:
            err = stderr_console()
            err.print(Text(f"refused: rolling back {args.name} rewrites {where}", style="bold red"))
            if exc.others:
                err.print(Text(f"  these tools defined in {where} would change too: {', '.join(exc.others)}"))
            if exc.moved_to is not None:
                err.print(
                    Text(
                        f"  {args.name} now lives in {display_path(exc.moved_to)}; "
                        f"{where} would define it twice"
                    )
                )
            err.print(Text("  pass --force to roll back anyway"))
            return 1
        except BackupFailed as exc:
            reason = exc.error.strerror or exc.error
            raise UsageError(
                f"cannot back up {where} into {exc.folder}: {reason}; {where} was left as it was"
            ) from exc
        except OSError as exc:
            raise UsageError(f"cannot write {where}: {exc.strerror or exc}") from exc
        out.print(Text(f"rolled back {args.name} to {plan.target.short_hash} in {where}"), soft_wrap=True)
        if plan.others:
            out.print(Text(f"also changed: {', '.join(plan.others)}"), soft_wrap=True)
        if backup is not None:
            out.print(Text(f"backup of the replaced file: {backup}"), soft_wrap=True)
        return 0
    finally:
        for opened in stores:
            opened.close()
