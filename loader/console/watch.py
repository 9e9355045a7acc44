"""``tool-loader watch``: the live view of a tool folder while you edit it.

The loader reports file events on its scheduler thread and registry commits on
whichever thread committed; both listeners only put the event on a queue. The
main thread owns every piece of console output: it drains the queue, updates
the view and redraws (a full-screen view on a terminal, one plain flushed line
per event otherwise), so no rendering ever races the loader.

Ctrl-C and terminal resizes arrive the same way: their signal handlers only put
a token on that queue (``SimpleQueue.put`` is safe inside a signal handler), so
a Ctrl-C can never be raised, and lost, inside a finalizer or a half-drawn
frame; the main loop sees it and shuts down in order.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from types import FrameType
from typing import Final

from rich.console import Console, Group
from rich.live import Live

from ..registry.changes import RegistryChangeSet
from ..reload.loader import ToolLoader
from ..reload.roots import root_as_given
from ..status import FileStatus, LoaderEvent, ScanReport
from ..types import AgentTool
from .common import add_dirs_argument, positive_int, stderr_console, stdout_console
from .components_view import components_phrase
from .history_options import add_history_arguments, attach_history
from .loader_options import add_gate_arguments
from .proposal_view import quarantine_phrase
from .render import (
    callback_line,
    display_path,
    load_from_args,
    plain_console,
    plural,
    problem_rows,
    problems_phrase,
    quiet_logs,
    tool_location,
)
from .tool_output import CapturedOutput
from .watch_events import (
    EventDeriver,
    EventLine,
    component_list_lines,
    describe_event,
    scan_lines,
    tool_list_line,
)
from .watch_view import OUTPUT_LINES, WatchFrame, component_rows, render_frame, tool_row

__all__ = ["HELP", "EventLine", "add_arguments", "describe_event", "final_state", "run"]

HELP = "load the tool folders and show tools and reload events live as files change (Ctrl-C to stop)"

_GATHER_SECONDS = 0.05  # events of one save arrive within this window: show them together
_POLL_SECONDS = 0.25  # how often an import in progress is re-checked
_FALLBACK_SIZE = (80, 24)


class _Token:
    def __init__(self, name: str) -> None:
        self.name = name


_STOP: Final = _Token("stop")
_RESIZE: Final = _Token("resize")


class _Output(str):
    """A line a tool (or a log record) wrote to stdout or stderr while the live view is up."""


_Item = LoaderEvent | RegistryChangeSet | _Token | _Output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``watch [DIR...] [--events N]``."""
    add_dirs_argument(parser)
    parser.add_argument(
        "--events",
        type=positive_int,
        default=10,
        metavar="N",
        help="how many recent events the live view keeps (default 10)",
    )
    add_history_arguments(parser, recording=True)
    add_gate_arguments(parser)


class _Feed:
    """Collects events from the loader's threads and tokens from signal handlers for the main thread."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()

    def put(self, item: _Item) -> None:
        self.queue.put(item)

    def gather(self, timeout: float) -> list[_Item]:
        """Wait up to ``timeout`` for an item, then take everything that arrives close behind it."""
        try:
            first = self.queue.get(timeout=timeout)
        except queue.Empty:
            return []
        items = [first]
        deadline = time.monotonic() + 10 * _GATHER_SECONDS
        while time.monotonic() < deadline and not any(isinstance(i, _Token) for i in items):
            try:
                items.append(self.queue.get(timeout=_GATHER_SECONDS))
            except queue.Empty:
                break
        return items


class _Signals:
    """Ctrl-C (and, on a terminal, resizes) as tokens on the feed; a second Ctrl-C interrupts at once."""

    def __init__(self, feed: _Feed, *, resize: bool) -> None:
        self._feed = feed
        self._resize = resize and hasattr(signal, "SIGWINCH")
        self._previous: dict[int, object] = {}
        self._interrupted = False

    def __enter__(self) -> _Signals:
        self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._on_interrupt)
        if self._resize:
            self._previous[signal.SIGWINCH] = signal.signal(signal.SIGWINCH, self._on_resize)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]

    def _on_interrupt(self, signum: int, frame: FrameType | None) -> None:
        if self._interrupted:
            raise KeyboardInterrupt
        self._interrupted = True
        self._feed.put(_STOP)

    def _on_resize(self, signum: int, frame: FrameType | None) -> None:
        self._feed.put(_RESIZE)


class _WatchState:
    """The names being served and the recent event rows."""

    def __init__(self, loader: ToolLoader, keep: int) -> None:
        self.loader = loader
        self.keep = keep
        self.names = set(loader.registry.names())
        self.components = self._component_ids()
        self.log: deque[EventLine] = deque(maxlen=max(1, keep))
        self.output: deque[str] = deque(maxlen=OUTPUT_LINES)
        self._deriver = EventDeriver(loader.status())

    def absorb(self, items: list[_Item]) -> list[EventLine]:
        """New log rows for a gathered batch: file events first, then the tool-list change."""
        self.output.extend(item for item in items if isinstance(item, _Output))
        rows = self._deriver.rows([item for item in items if isinstance(item, LoaderEvent)])
        if any(isinstance(item, RegistryChangeSet) for item in items):
            after = set(self.loader.registry.names())
            line = tool_list_line(self.names, after)
            self.names = after
            if line is not None:
                rows.append(line)
            served = self._component_ids()
            rows.extend(component_list_lines(self.components, served))
            self.components = served
        for row in rows:
            merged = self.log[-1].repeated_by(row) if self.log else None
            if merged is not None:
                self.log[-1] = merged
            else:
                self.log.append(row)
        return rows

    def _component_ids(self) -> set[str]:
        return {c.component_id for c in self.loader.registry.snapshot().components()}

    def frame(self) -> WatchFrame:
        """What the screen shows now."""
        loader = self.loader
        snapshot = loader.registry.snapshot()
        # The statuses are read once, for the table and the problems both: read per tool, a file that
        # failed between the two reads showed in the problems while its tools' rows still said ok.
        statuses = tuple(loader.status(include_removed=False))
        by_path = {status.path: status for status in statuses}

        def status_of(tool: AgentTool) -> FileStatus | None:
            source = snapshot.source_of(tool.tool_name)
            return None if source is None else by_path.get(root_as_given(source))

        rows = tuple(
            tool_row(tool, status_of(tool), tool_location(tool, loader)) for tool in snapshot.tools()
        )
        components = snapshot.components()
        slow = loader.imports_in_progress()
        return WatchFrame(
            folders=", ".join(display_path(path) for path in loader.paths),
            tools=rows,
            statuses=statuses,
            events=tuple(self.log),
            keep_events=self.keep,
            output=tuple(self.output),
            importing=None if not slow else (display_path(slow[0].path), time.time() - slow[0].since),
            components=component_rows(components, statuses),
            components_phrase=components_phrase(components),
        )


def served_phrase(tools: int, loader: ToolLoader) -> str:
    """``3 tools, 1 prompt, 2 resources``: the tools counted, then what else the registry serves."""
    others = components_phrase(loader.registry.snapshot().components())
    return f"{plural(tools, 'tool')}, {others}" if others else plural(tools, "tool")


def summary(report: ScanReport, loader: ToolLoader) -> str:
    """``loaded 8 tools from 9 files in tools (22 ms), 1 file failed, 1 conflict``."""
    where = ", ".join(display_path(path) for path in loader.paths)
    served = served_phrase(report.tool_count, loader)
    files = plural(len(report.files), "file")
    text = f"loaded {served} from {files} in {where} ({report.seconds * 1000:.0f} ms)"
    problems = problems_phrase(report.failed)
    text = f"{text}, {problems}" if problems else text
    return f"{text}; {quarantine_phrase(loader.quarantined)}" if loader.quarantined else text


def run(args: argparse.Namespace) -> int:
    """Scan, print a summary, then watch until Ctrl-C (exit status 0: Ctrl-C is how watching ends)."""
    quiet_logs(args.verbose)
    interactive = sys.stdout.isatty() and not stdout_console().is_dumb_terminal
    console = stdout_console() if interactive else plain_console()
    feed = _Feed()
    if not interactive:
        return _watch(args, console, None, feed)
    progress = stderr_console()
    console.file, progress.file = console.file, progress.file  # the terminal, before the swap
    with CapturedOutput(lambda line: feed.put(_Output(line))):
        return _watch(args, console, progress, feed)


def _watch(args: argparse.Namespace, console: Console, progress: Console | None, feed: _Feed) -> int:
    interactive = progress is not None
    loader, report = load_from_args(args, progress_console=progress)
    recorder = attach_history(loader, args)
    unsubscribe: list[Callable[[], None]] = [
        loader.subscribe(feed.put),
        loader.registry.subscribe(feed.put),
    ]
    state = _WatchState(loader, args.events)
    state.log.extend(scan_lines(report, loader.paths))
    final: list[tuple[str, str]] = []
    with _Signals(feed, resize=interactive):
        try:
            loader.start()
            if interactive:
                _run_live(console, report, feed, state)
            else:
                _run_plain(console, report, feed, state)
            final = final_state(loader)  # before closing, which unregisters every tool
        finally:
            for stop in unsubscribe:
                stop()
            loader.close()
            if recorder is not None:
                recorder.close()
    for line, style in final:
        console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)
    console.print("stopped watching", style="dim", highlight=False)
    return 0


_NAMES_AT_EXIT = 40
"""Tool names listed when watching ends; more are counted (``tool-loader list`` has them all)."""


def final_state(loader: ToolLoader) -> list[tuple[str, str]]:
    """``(line, style)`` for what is live as watching ends: the count, the tools, each failing file.

    The full-screen view vanishes with the alternate screen, so these lines are
    what stays in the scrollback.
    """
    statuses = loader.status(include_removed=False)
    names = loader.registry.names()
    where = ", ".join(display_path(path) for path in loader.paths)
    problems = problems_phrase(statuses)
    head = (
        f"live at exit: {served_phrase(len(names), loader)} from {plural(len(statuses), 'file')} in {where}"
    )
    shown = ", ".join(names[:_NAMES_AT_EXIT]) or "none"
    if len(names) > _NAMES_AT_EXIT:
        shown += f", … and {len(names) - _NAMES_AT_EXIT} more (tool-loader list)"
    lines = [(head + (f" ({problems})" if problems else ""), "bold"), (f"  tools: {shown}", "")]
    for row in problem_rows(statuses):
        lines.append((f"  {row.state} {row.where} {row.what}", "red"))
        lines.extend((f"    {source}", "") for source in row.source.splitlines())
    return lines


def _terminal_size(console: Console) -> tuple[int, int]:
    """The terminal's size now (not the COLUMNS/LINES the process started with)."""
    try:
        size = os.get_terminal_size(console.file.fileno())  # sys.stdout is captured
    except (OSError, ValueError):
        return console.size
    if size.columns <= 0 or size.lines <= 0:  # a pseudo-terminal nobody sized
        return _FALLBACK_SIZE
    return size.columns, size.lines


def _run_live(console: Console, report: ScanReport, feed: _Feed, state: _WatchState) -> None:
    console.print(summary(report, state.loader), style="bold", highlight=False)
    console.file.flush()

    def draw() -> Group:
        width, height = _terminal_size(console)
        console.size = (width, height)
        return render_frame(state.frame(), console, width, height)

    live = Live(
        console=console,
        auto_refresh=False,
        screen=True,
        transient=False,
        redirect_stdout=False,
        redirect_stderr=False,
    )
    with live:
        importing_shown = False
        items: list[_Item] = []
        first = True
        while True:
            state.absorb(items)
            importing = bool(state.loader.imports_in_progress())
            if items or importing or importing_shown or first:
                _draw_frame(console, live, draw())
                first = False
            importing_shown = importing
            items = feed.gather(_POLL_SECONDS)
            if any(item is _STOP for item in items):
                return


_BEGIN_FRAME = "\x1b[?2026h"
_END_FRAME = "\x1b[?2026l"


def _draw_frame(console: Console, live: Live, frame: Group) -> None:
    """One redraw, inside a synchronized update so the terminal shows it whole (no flicker, no tearing).

    Terminals without mode 2026 ignore the two sequences.
    """
    console.file.write(_BEGIN_FRAME)
    live.update(frame, refresh=True)
    console.file.write(_END_FRAME)
    console.file.flush()


def _run_plain(console: Console, report: ScanReport, feed: _Feed, state: _WatchState) -> None:
    say = callback_line(console)
    say(summary(report, state.loader))
    for problem in problem_rows(report.failed):
        say(f"  {problem.state} {problem.where} {problem.what}")
        for source in problem.source.splitlines():
            say(f"    {source}")
    for row in state.log:
        say(row.plain())
    say("watching " + ", ".join(display_path(path) for path in state.loader.paths) + " (Ctrl-C to stop)")
    while True:
        items = feed.gather(_POLL_SECONDS)
        if any(item is _STOP for item in items):
            return
        for row in state.absorb(items):
            say(row.plain())
