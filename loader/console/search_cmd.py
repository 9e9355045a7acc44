"""``tool-loader search``: the tools best matching a query, ranked as ``search_tools`` ranks them."""

from __future__ import annotations

import argparse

from rich.table import Table

from ..registry.snapshot import SearchHit
from .common import add_dirs_argument, print_json, stderr_console, stdout_console
from .render import load_from_args, plural, quiet_logs

__all__ = ["HELP", "add_arguments", "run"]

HELP = "find tools by what they do, ranked as an agent's search_tools sees them (exit status 1: no match)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``search QUERY... [--dir DIR...] [--limit N] [--json]``."""
    parser.add_argument("query", nargs="+", metavar="QUERY", help="what the tool should do, in words")
    add_dirs_argument(parser, positional=False)
    parser.add_argument("--limit", type=int, default=5, help="how many tools to show (default: 5)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the hits as JSON (name, description, inputSchema, digest, score)",
    )


def run(args: argparse.Namespace) -> int:
    """Load the folders once, search, print the hits best first."""
    quiet_logs(args.verbose)
    query = " ".join(args.query)
    loader, _report = load_from_args(args, progress_console=stderr_console())
    try:
        hits = loader.search_tools(query, max(args.limit, 0))
    finally:
        loader.close()
    if args.json:
        print_json([_record(hit) for hit in hits])
    else:
        _print(query, hits)
    return 0 if hits else 1


def _record(hit: SearchHit) -> dict[str, object]:
    return {**hit.to_json(), "score": round(hit.score, 4)}


def _print(query: str, hits: list[SearchHit]) -> None:
    console = stdout_console()
    if not hits:
        console.print(f"no tool matches {query!r}", highlight=False)
        return
    table = Table(title=f"{plural(len(hits), 'tool')} for {query!r}", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Tool", style="bold")
    table.add_column("Score", justify="right")
    table.add_column("Description")
    for rank, hit in enumerate(hits, 1):
        table.add_row(str(rank), hit.name, f"{hit.score:.2f}", hit.description.split("\n", 1)[0])
    console.print(table)
