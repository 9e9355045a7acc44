"""``tool-loader history [NAME]``: every recorded version of a tool or component, newest first.

Without a name: everything the folder's history holds (tools, prompts,
resources, templates, skills and skill files), one row each.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..history.store import HistoryEvent, HistoryEventKind, HistoryStore, ToolVersion
from ..spec_diff.kinds import SpecChangeKind
from ..spec_diff.specs import describe_change
from .common import add_dirs_argument, print_json, stdout_console
from .component_history import (
    KIND_CHOICES,
    component_document,
    component_table,
    overview_document,
    overview_table,
)
from .history_options import Recorded, add_history_arguments, find_recorded, open_history
from .proposal_view import provenance_phrase
from .render import display_path, format_duration

__all__ = ["HELP", "add_arguments", "change_label", "describe_event", "format_duration", "run"]

HELP = (
    "show the recorded versions of a tool, prompt, resource or skill, newest first: when each went live, "
    "for how long, hash and change (no NAME: everything recorded)"
)

_KIND_STYLES = {
    SpecChangeKind.BREAKING: "bold red",
    SpecChangeKind.ADDITIVE: "green",
    SpecChangeKind.COSMETIC: "cyan",
    SpecChangeKind.NONE: "dim",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``history [NAME] [--kind K] [--dir D] [--json] [--state-dir S]``."""
    parser.add_argument(
        "name",
        metavar="NAME",
        nargs="?",
        default=None,
        help="a tool; or a prompt's name, a resource's URI or path, a skill's path (none: list everything)",
    )
    parser.add_argument(
        "--kind",
        choices=KIND_CHOICES,
        default=None,
        help="what NAME names when a tool and a component share it (default: the tool first)",
    )
    add_dirs_argument(parser, positional=False)
    parser.add_argument("--json", action="store_true", help="print the versions as JSON (with their specs)")
    add_history_arguments(parser)


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
    """Print the versions; exit 2 when nothing of that name has history."""
    stores = open_history(args.dirs, args.state_dir)
    try:
        if args.name is None:
            if args.json:
                print_json(overview_document(stores))
            else:
                stdout_console().print(overview_table(stores))
            return 0
        found = find_recorded(stores, args.name, args.kind)
        if found.kind is None:
            return _tool_history(found, as_json=args.json)
        if args.json:
            print_json({**component_document(found), "events": _events_json(found.store)})
        else:
            stdout_console().print(component_table(found))
            _print_events(found.store)
        return 0
    finally:
        for opened in stores:
            opened.close()


def _events_json(store: HistoryStore) -> list[dict[str, Any]]:
    return [{"at": e.at, "kind": str(e.kind), "text": describe_event(e)} for e in store.events()]


def _print_events(store: HistoryStore) -> None:
    """A note for each thing that happened to the record itself (a reset, versions not recorded)."""
    for event in store.events():
        stdout_console().print(
            f"note: {describe_event(event)}", style="yellow", markup=False, highlight=False
        )


def _tool_history(found: Recorded, *, as_json: bool) -> int:
    store, name = found.store, found.key
    versions = store.versions(name)
    if as_json:
        print_json(
            {
                "tool": name,
                "folder": str(store.folder),
                "database": str(store.path),
                "versions": [v.to_json() for v in versions],
                "events": _events_json(store),
            }
        )
        return 0
    now = time.time()
    table = Table(title=f"History of {name} ({display_path(store.folder)})", title_justify="left")
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
    stdout_console().print(table)
    _print_events(store)
    return 0
