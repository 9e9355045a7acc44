"""``tool-loader history NAME``: every recorded version of a tool, newest first."""

from __future__ import annotations

import argparse
import json
import sys
import time

from rich.markup import escape
from rich.table import Table

from ..history.store import HistoryEvent, HistoryEventKind, ToolVersion
from ..spec_diff.kinds import SpecChangeKind
from ..spec_diff.specs import describe_change
from .common import add_dirs_argument, stdout_console
from .history_options import add_history_arguments, open_history, store_with_tool
from .proposal_view import provenance_phrase
from .render import display_path

__all__ = ["HELP", "add_arguments", "change_label", "describe_event", "format_duration", "run"]

HELP = (
    "show the recorded versions of a tool, newest first: when each went live, for how long, hash and change"
)

_KIND_STYLES = {
    SpecChangeKind.BREAKING: "bold red",
    SpecChangeKind.ADDITIVE: "green",
    SpecChangeKind.COSMETIC: "cyan",
    SpecChangeKind.NONE: "dim",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``history NAME [--dir D] [--json] [--state-dir S]``."""
    parser.add_argument("name", metavar="NAME", help="the tool name")
    add_dirs_argument(parser, positional=False)
    parser.add_argument("--json", action="store_true", help="print the versions as JSON (with their specs)")
    add_history_arguments(parser)


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h``, ``2.0 d``: how long a version served."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def change_label(version: ToolVersion) -> str:
    """``first`` for the oldest recorded version, else the change against the one before."""
    return "first" if version.change is None else str(version.change.kind)


def describe_event(event: HistoryEvent) -> str:
    """One line about something that happened to the record itself (a reset, versions not recorded)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at))
    if event.kind is HistoryEventKind.RESET:
        return (
            f"{when}: the history database was corrupt and was reset; the old one is kept at "
            f"{event.set_aside} ({event.reason})"
        )
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.since)) if event.since else "?"
    return (
        f"{when}: {event.count} tool versions went live but were not recorded (the database was busy "
        f"from {since}); this history has gaps"
    )


def run(args: argparse.Namespace) -> int:
    """Print the versions; exit 2 when the tool has no history."""
    stores = open_history(args.dirs, args.state_dir)
    try:
        store = store_with_tool(stores, args.name)
        versions = store.versions(args.name)
        events = store.events()
        if args.json:
            document = {
                "tool": args.name,
                "folder": str(store.folder),
                "database": str(store.path),
                "versions": [v.to_json() for v in versions],
                "events": [{"at": e.at, "kind": str(e.kind), "text": describe_event(e)} for e in events],
            }
            sys.stdout.write(json.dumps(document, indent=2) + "\n")
            return 0
        now = time.time()
        table = Table(title=f"History of {args.name} ({display_path(store.folder)})", title_justify="left")
        for column in ("hash", "digest", "went live", "live for", "change", "file", "details"):
            table.add_column(
                column, overflow="fold", no_wrap=column in ("hash", "digest", "went live", "live for")
            )
        for version in versions:
            ended = version.replaced_at
            served = format_duration((ended if ended is not None else now) - version.went_live_at)
            kind = version.change.kind if version.change is not None else SpecChangeKind.NONE
            details = describe_change(version.change, limit=2) if version.change is not None else ""
            if version.note:
                details = f"{details}; {version.note}" if details else version.note
            if version.provenance:
                origin = provenance_phrase(version.provenance)
                details = f"{details}; {origin}" if details else origin
            table.add_row(
                version.short_hash,
                version.digest[:12],
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(version.went_live_at)),
                served + (" (live)" if version.live else ""),
                f"[{_KIND_STYLES[kind]}]{change_label(version)}[/]",
                escape(display_path(version.file_path)),
                escape(details),
            )
        console = stdout_console()
        console.print(table)
        for event in events:
            console.print(f"note: {describe_event(event)}", style="yellow", markup=False, highlight=False)
        return 0
    finally:
        for opened in stores:
            opened.close()
