"""``tool-loader list``: load the folders once and show every tool, then every file that failed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.text import Text

from ..status import FileState
from .common import add_dirs_argument, stderr_console, stdout_console
from .render import (
    display_path,
    load_from_args,
    plural,
    print_tracebacks,
    problem_rows,
    problems_phrase,
    problems_table,
    quiet_logs,
    status_record,
    tool_record,
    tools_table,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "load the tool folders once and list every tool (exit status 1 if a file failed or conflicts)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``list [DIR...] [--json]``."""
    add_dirs_argument(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print machine-readable JSON (tools with specs, files with status)",
    )


def run(args: argparse.Namespace) -> int:
    """Scan without watching; exit 1 when any file failed, got stuck or lost a name to another file."""
    quiet_logs(args.verbose)
    loader, report = load_from_args(args, progress_console=stderr_console())
    try:
        tools = loader.registry.snapshot().tools()
        if args.json:
            document: dict[str, Any] = {
                "directories": [str(path) for path in loader.paths],
                "tools": [tool_record(tool, loader) for tool in tools],
                "files": [status_record(status) for status in report.files],
                "summary": {
                    "tools": len(tools),
                    "files": len(report.files),
                    "failed": sum(1 for s in report.failed if s.state is not FileState.CONFLICT),
                    "conflicts": sum(1 for s in report.failed if s.state is FileState.CONFLICT),
                    "seconds": round(report.seconds, 4),
                },
            }
            sys.stdout.write(json.dumps(document, indent=2, default=repr) + "\n")
            sys.stdout.flush()
        else:
            console = stdout_console()
            where = ", ".join(display_path(path) for path in loader.paths)
            if tools:
                console.print(tools_table(tools, loader, title=f"Tools in {where}", width=console.width))
            problems = problems_table(report.failed, title="Files that did not load")
            if problems is not None:
                console.print(problems)
            if args.verbose:
                print_tracebacks(console, problem_rows(report.failed))
            summary = Text(
                f"{plural(len(tools), 'tool')} from {plural(len(report.files), 'file')} in {where} "
                f"({report.seconds:.2f} s)"
            )
            if report.failed:
                summary.append(f"; {problems_phrase(report.failed)}", style="bold red")
            console.print(summary, highlight=False)
        return 1 if report.failed else 0
    finally:
        loader.close()
