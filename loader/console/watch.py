"""``tool-loader watch``: the live view of a tool folder while you edit it.

The loader reports file events on its scheduler thread and registry commits on
whichever thread committed; both listeners only put the event on a queue. The
main thread owns every piece of console output: it drains the queue, updates
the view and redraws (``rich.live.Live`` on a terminal, one plain flushed line
per event otherwise), so no rendering ever races the loader.
"""

from __future__ import annotations

import argparse
import logging
import queue
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..registry import RegistryChangeSet
from ..reload.loader import ToolLoader
from ..status import LoaderEvent, LoaderEventKind, ScanReport
from .common import add_dirs_argument, stderr_console, stdout_console
from .gate_options import add_gate_arguments, gate_config
from .history_options import add_history_arguments, attach_history
from .isolation_args import loader_config
from .render import (
    STATE_STYLES,
    callback_line,
    columns_for_width,
    display_path,
    existing_dirs,
    load_tools,
    location,
    plain_console,
    plural,
    problem_rows,
    problems_table,
    quiet_logs,
    titled_table,
    tools_table,
)

__all__ = ["HELP", "EventLine", "add_arguments", "describe_event", "run"]

HELP = "load the tool folders and show tools and reload events live as files change (Ctrl-C to stop)"

_WATCH_COLUMNS = ("name", "kind", "source", "description", "parameters", "version", "status")
_GATHER_SECONDS = 0.05  # events of one save arrive within this window: show them together
_POLL_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class EventLine:
    """One row of the event log."""

    time: float
    kind: str
    file: str
    tools: str
    detail: str
    duration_ms: float | None

    def plain(self) -> str:
        """The row as one plain line: ``12:00:01 updated tools/calc.py calculator (3.2 ms)``."""
        parts = [time.strftime("%H:%M:%S", time.localtime(self.time)), self.kind]
        if self.file:
            parts.append(self.file)
        if self.tools:
            parts.append(self.tools)
        if self.detail:
            parts.append(self.detail)
        if self.duration_ms is not None:
            parts.append(f"({self.duration_ms:.1f} ms)")
        return " ".join(parts)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``watch [DIR...] [--events N]``."""
    add_dirs_argument(parser)
    parser.add_argument(
        "--events",
        type=int,
        default=10,
        metavar="N",
        help="how many recent events the live view keeps (default 10)",
    )
    add_history_arguments(parser, recording=True)
    add_gate_arguments(parser)


def describe_event(event: LoaderEvent) -> EventLine:
    """A loader event as a log row: what happened to which file, its tools and the reload time."""
    kind = str(event.kind)
    error = event.error
    file = display_path(event.path)
    tools = ", ".join(event.tools)
    detail = ""
    if event.kind in (LoaderEventKind.FAILED, LoaderEventKind.STUCK, LoaderEventKind.REJECTED) and error:
        file = location(error.file or str(event.path), error.line)
        detail = f"{error.exc_type}: {error.message}"
        tools = f"(still serving {tools})" if tools else ""
    elif event.kind is LoaderEventKind.CONFLICT:
        detail = "; ".join(
            f"{name} is already defined in {display_path(owner)}" for name, owner in event.status.conflicts
        )
    elif event.kind is LoaderEventKind.REMOVED:
        tools = ", ".join(event.removed)
    changes = [f"+{name}" for name in event.added] + [f"-{name}" for name in event.removed]
    if changes and event.kind in (LoaderEventKind.UPDATED, LoaderEventKind.RECOVERED):
        detail = " ".join(filter(None, [detail, f"[{' '.join(changes)}]"]))
    duration = None if event.kind is LoaderEventKind.REMOVED else event.duration_ms
    return EventLine(event.time, kind, file, tools, detail, duration)


def _tool_list_line(before: set[str], after: set[str]) -> EventLine | None:
    """A ``tools changed: +a -b (9 tools)`` row when the set of names changed."""
    added = sorted(after - before)
    removed = sorted(before - after)
    if not added and not removed:
        return None
    change = " ".join([f"+{name}" for name in added] + [f"-{name}" for name in removed])
    return EventLine(
        time.time(),
        "tools changed:",
        "",
        change,
        f"({plural(len(after), 'tool')})",
        None,
    )


class _Feed:
    """Collects events from the loader's threads for the main thread."""

    def __init__(self) -> None:
        self.queue: queue.Queue[LoaderEvent | RegistryChangeSet] = queue.Queue()

    def on_file_event(self, event: LoaderEvent) -> None:
        self.queue.put(event)

    def on_registry_change(self, change_set: RegistryChangeSet) -> None:
        self.queue.put(change_set)

    def gather(self, timeout: float) -> list[LoaderEvent | RegistryChangeSet]:
        """Wait up to ``timeout`` for an event, then take everything that arrives close behind it."""
        try:
            first = self.queue.get(timeout=timeout)
        except queue.Empty:
            return []
        items = [first]
        deadline = time.monotonic() + 10 * _GATHER_SECONDS
        while time.monotonic() < deadline:
            try:
                items.append(self.queue.get(timeout=_GATHER_SECONDS))
            except queue.Empty:
                break
        return items


class _WatchState:
    """The names being served and the recent event rows."""

    def __init__(self, loader: ToolLoader, keep: int) -> None:
        self.loader = loader
        self.names = set(loader.registry.names())
        self.log: deque[EventLine] = deque(maxlen=max(1, keep))

    def absorb(self, items: list[LoaderEvent | RegistryChangeSet]) -> list[EventLine]:
        """New log rows for a gathered batch: file events first, then the tool-list change."""
        rows = [describe_event(item) for item in items if isinstance(item, LoaderEvent)]
        if any(isinstance(item, RegistryChangeSet) for item in items):
            after = set(self.loader.registry.names())
            line = _tool_list_line(self.names, after)
            self.names = after
            if line is not None:
                rows.append(line)
        self.log.extend(rows)
        return rows

    def render(self, header: str, width: int) -> RenderableType:
        """Tools table, current problems and the event log, for a terminal ``width`` wide."""
        tools = self.loader.registry.snapshot().tools()
        parts: list[RenderableType] = [
            tools_table(
                tools,
                self.loader,
                title=f"{header}: {len(tools)} tools",
                columns=columns_for_width(width + 40, _WATCH_COLUMNS),
            )
        ]
        problems = problems_table(self.loader.status(include_removed=False))
        if problems is not None:
            parts.append(problems)
        parts.append(_event_table(self.log))
        parts.append(Text("Ctrl-C to stop", style="dim"))
        return Group(*parts)


def _event_table(rows: deque[EventLine]) -> Table:
    table = titled_table("Events")
    table.add_column("time", no_wrap=True, style="dim")
    table.add_column("event", no_wrap=True)
    table.add_column("file", overflow="fold")
    table.add_column("tools", overflow="fold")
    table.add_column("details", overflow="fold")
    table.add_column("ms", justify="right", no_wrap=True)
    if not rows:
        table.add_row("", Text("waiting for changes…", style="dim"), "", "", "", "")
    for row in rows:
        style = STATE_STYLES.get(row.kind, "bold cyan" if row.kind.startswith("tools") else "")
        table.add_row(
            time.strftime("%H:%M:%S", time.localtime(row.time)),
            Text(row.kind.rstrip(":"), style=style),
            Text(row.file),
            Text(row.tools),
            Text(row.detail, style="red" if row.kind in ("failed", "stuck") else ""),
            "" if row.duration_ms is None else f"{row.duration_ms:.1f}",
        )
    return table


def _summary(report: ScanReport, loader: ToolLoader) -> str:
    where = ", ".join(display_path(path) for path in loader.paths)
    text = (
        f"loaded {plural(report.tool_count, 'tool')} from {plural(len(report.files), 'file')} in {where} "
        f"({report.seconds * 1000:.0f} ms)"
    )
    if report.failed:
        text += f", {len(report.failed)} file(s) did not load"
    return text


def _route_logs_to(console: Console) -> None:
    """Send log records through rich on ``console``, above the live view instead of through it.

    The loader's own warnings (a file failed) are already events, so only
    errors are shown unless ``-v`` lowered the root level.
    """
    from rich.logging import RichHandler

    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(RichHandler(console=console, show_path=False, rich_tracebacks=False))


def run(args: argparse.Namespace) -> int:
    """Scan, print a summary, then watch until Ctrl-C (exit status 0)."""
    quiet_logs(args.verbose)
    dirs = existing_dirs(args.dirs)
    interactive = sys.stdout.isatty() and not stdout_console().is_dumb_terminal
    console = stdout_console() if interactive else plain_console()
    if interactive:
        _route_logs_to(console)
    progress = stderr_console() if interactive else None
    loader, report = load_tools(
        dirs, progress_console=progress, config=gate_config(args, loader_config(args))
    )
    attach_history(loader, args)
    feed = _Feed()
    unsubscribe: list[Callable[[], None]] = [
        loader.subscribe(feed.on_file_event),
        loader.registry.subscribe(feed.on_registry_change),
    ]
    state = _WatchState(loader, args.events)
    try:
        loader.start()
        if interactive:
            _run_live(console, loader, report, feed, state)
        else:
            _run_plain(console, loader, report, feed, state)
    except KeyboardInterrupt:
        pass
    finally:
        for stop in unsubscribe:
            stop()
        try:
            loader.close()
        except KeyboardInterrupt:
            pass
    console.print("stopped watching", style="dim", highlight=False)
    return 0


def _run_live(
    console: Console, loader: ToolLoader, report: ScanReport, feed: _Feed, state: _WatchState
) -> None:
    from rich.live import Live

    console.print(Text(_summary(report, loader), style="bold"))
    header = "watching " + ", ".join(display_path(path) for path in loader.paths)
    with Live(
        state.render(header, console.width), console=console, auto_refresh=False, transient=False
    ) as live:
        while True:
            items = feed.gather(_POLL_SECONDS)
            if items:
                state.absorb(items)
                live.update(state.render(header, console.width), refresh=True)


def _run_plain(
    console: Console, loader: ToolLoader, report: ScanReport, feed: _Feed, state: _WatchState
) -> None:
    say = callback_line(console)
    say(_summary(report, loader))
    for where, status, what in problem_rows(report.failed):
        say(f"  {status} {where} {what}")
    say("watching " + ", ".join(display_path(path) for path in loader.paths) + " (Ctrl-C to stop)")
    while True:
        for row in state.absorb(feed.gather(_POLL_SECONDS)):
            say(row.plain())
