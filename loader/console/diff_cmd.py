"""``tool-loader diff NAME [A] [B]``: what changed between two recorded versions of a tool."""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Iterable

from rich.console import Console
from rich.text import Text

from ..history.store import HistoryError, HistoryStore, ToolVersion
from ..spec_diff.specs import compare_specs, describe_change
from .common import UsageError, add_dirs_argument, stdout_console
from .history_options import add_history_arguments, open_history, store_with_tool

__all__ = ["HELP", "add_arguments", "run", "unified"]

HELP = "compare two recorded versions of a tool (default: the last two): spec change, JSON diff, --source"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``diff NAME [A] [B] [--source] [--dir D] [--state-dir S]``."""
    parser.add_argument("name", metavar="NAME", help="the tool name")
    parser.add_argument("old", nargs="?", metavar="A", help="hash (prefix) of the older version")
    parser.add_argument(
        "new", nargs="?", metavar="B", help="hash (prefix) of the newer version (default: newest)"
    )
    parser.add_argument("--source", action="store_true", help="also show a unified diff of the file content")
    add_dirs_argument(parser, positional=False)
    add_history_arguments(parser)


def unified(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    """The lines of a unified diff (empty when the texts are equal)."""
    return list(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name, lineterm="\n"
        )
    )


def _pick(
    store: HistoryStore, name: str, old: str | None, new: str | None
) -> tuple[ToolVersion, ToolVersion]:
    versions = store.versions(name)
    try:
        after = store.find(name, new) if new else versions[0]
        if old:
            before = store.find(name, old)
        else:
            older = [v for v in versions if v.id < after.id]
            if not older:
                raise UsageError(
                    f"tool {name!r} has no version older than {after.short_hash} to compare with"
                )
            before = older[0]
    except HistoryError as exc:
        raise UsageError(str(exc)) from exc
    return before, after


def _print_diff(console: Console, lines: Iterable[str]) -> None:
    for line in lines:
        style = None
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        console.print(Text(line.rstrip("\n"), style=style or ""), highlight=False, soft_wrap=True)


def run(args: argparse.Namespace) -> int:
    """Print the classification, the spec diff and, with ``--source``, the source diff."""
    stores = open_history(args.dirs, args.state_dir)
    try:
        store = store_with_tool(stores, args.name)
        before, after = _pick(store, args.name, args.old, args.new)
        console = stdout_console()
        change = compare_specs(before.spec, after.spec)
        console.print(
            Text(
                f"{args.name} {before.short_hash} -> {after.short_hash}: {describe_change(change, limit=1)}"
            ),
            highlight=False,
            soft_wrap=True,
        )
        for reason, kind in zip(change.reasons, change.reason_kinds, strict=True):
            console.print(Text(f"  {kind}: {reason}"), highlight=False, soft_wrap=True)
        spec_lines = unified(
            json.dumps(before.spec, indent=2, sort_keys=True) + "\n",
            json.dumps(after.spec, indent=2, sort_keys=True) + "\n",
            f"spec@{before.short_hash}",
            f"spec@{after.short_hash}",
        )
        _print_diff(console, spec_lines)
        if args.source:
            if before.content is None or after.content is None:
                missing = before if before.content is None else after
                raise UsageError(
                    f"version {missing.short_hash} was recorded without its content ({missing.note})"
                )
            _print_diff(
                console,
                unified(
                    before.content.decode("utf-8", "replace"),
                    after.content.decode("utf-8", "replace"),
                    f"{before.file_path.name}@{before.short_hash}",
                    f"{after.file_path.name}@{after.short_hash}",
                ),
            )
        return 0
    finally:
        for opened in stores:
            opened.close()
