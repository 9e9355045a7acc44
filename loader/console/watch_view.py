"""The screen of ``watch``, laid out for one terminal size.

Priority, top to bottom: a one-line header; the **problems**, always whole
(failing, stuck and conflicting files with ``file:line`` and the first line of
the error); the **recent events**, as many as fit; then the **tools**, and the
**prompts, resources and skills** when the folder serves any: these two are
what gets cut (the second keeps at least a third of what is left), each closing
with ``… and N more (tool-loader list)``. Every line is built to fit the
width, so nothing wraps mid-word and the line count is known before drawing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Console, Group
from rich.text import Text

from ..components.skills import skill_entries
from ..status import FileState, FileStatus
from ..types import AgentTool, Component, ComponentKind
from .component_words import KIND_WORDS
from .components_view import SERVING, component_cells, skill_cells
from .fit import Column, clip, clip_left, fit_columns
from .render import STATE_STYLES, parameter_labels, plural, problem_rows, tool_description
from .render import tool_version as _tool_version
from .watch_events import EventLine

__all__ = [
    "BREAKING_STYLE",
    "IMPORT_NOTICE_SECONDS",
    "OUTPUT_LINES",
    "ComponentRow",
    "ToolRow",
    "WatchFrame",
    "component_rows",
    "render_frame",
    "status_word",
    "tool_row",
]

IMPORT_NOTICE_SECONDS = 0.5
"""An import running longer than this is shown on the screen."""

_KIND_WIDTH = 9  # "recovered", the longest event word

OUTPUT_LINES = 5
"""The newest lines of tools' output (print, logging, warnings) the Output pane shows."""

BREAKING_STYLE = "bold red"
"""How a breaking verdict looks on an event line."""


@dataclass(frozen=True, slots=True)
class ToolRow:
    """What the tools table shows of one tool (worked out from the loader by the caller)."""

    name: str
    kind: str
    source: str
    description: str
    parameters: str
    version: str
    status: str


@dataclass(frozen=True, slots=True)
class ComponentRow:
    """What the second table shows of a prompt, resource, template or skill (``components_view``'s cells)."""

    kind: str
    name: str
    source: str
    """Its file; for a skill, its files and their size."""
    description: str
    status: str


@dataclass(frozen=True, slots=True)
class WatchFrame:
    """Everything one redraw shows."""

    folders: str
    tools: tuple[ToolRow, ...]
    statuses: tuple[FileStatus, ...]
    events: tuple[EventLine, ...]
    keep_events: int
    importing: tuple[str, float] | None = None  # shown path, seconds so far
    output: tuple[str, ...] = ()  # the newest lines tools printed, logged or warned
    components: tuple[ComponentRow, ...] = ()
    components_phrase: str = ""  # "1 prompt, 2 resources, 1 skill" for the header


def tool_row(tool: AgentTool, status: FileStatus | None, location: str) -> ToolRow:
    """One tool as the watch table shows it; ``status`` is its file's."""
    return ToolRow(
        name=tool.tool_name,
        kind=tool.tool_type,
        source=location,
        description=" ".join(tool_description(tool).split()),
        parameters=", ".join(parameter_labels(tool.tool_spec)) or "-",
        version=_tool_version(tool, status),
        status=status_word(status),
    )


def component_rows(
    components: Sequence[Component], statuses: Sequence[FileStatus]
) -> tuple[ComponentRow, ...]:
    """The prompts, resources and templates of one snapshot, then its skills, as the second table has them."""
    by_file = {str(status.path): status for status in statuses}
    order = {kind: index for index, kind in enumerate(KIND_WORDS)}
    rows = [
        ComponentRow(*component_cells(c), status=status_word(by_file.get(c.source_file or "")))
        for c in sorted(components, key=lambda c: (order.get(c.kind, len(order)), c.key))
        if c.kind in KIND_WORDS and c.kind is not ComponentKind.SKILL
    ]
    for entry in skill_entries(components):
        kind, name, _, size, status, description = skill_cells(entry, statuses)
        rows.append(
            ComponentRow(kind, name, f"{plural(len(entry.files), 'file')}, {size}", description, status)
        )
    return tuple(rows)


def status_word(status: FileStatus | None) -> str:
    """``ok``, or ``last good`` while its file fails and its last good version serves."""
    if status is None or status.state in (FileState.LOADED, FileState.CONFLICT):
        return OK
    return "last good"


OK = "ok"


def render_frame(frame: WatchFrame, console: Console, width: int, height: int) -> Group:
    """The screen for a ``width`` x ``height`` terminal: at most ``height`` lines, each within ``width``."""
    lines: list[Text] = [_header(frame, width)]
    if frame.importing is not None and frame.importing[1] >= IMPORT_NOTICE_SECONDS:
        shown, seconds = frame.importing
        lines.append(Text(clip(f"importing {shown}… {seconds:.0f} s", width), style="bold yellow"))
    problems = _problem_lines(frame.statuses, console, width)
    if len(lines) + len(problems) > height:  # more problems than the screen holds: say where the rest are
        fits = max(0, height - len(lines) - 1)
        problems = [
            *problems[:fits],
            Text(clip("… and more problems (tool-loader check)", width), "bold red"),
        ]
    lines.extend(problems)
    room = height - len(lines)
    tools_least = (2 if frame.tools else 1) + (1 if frame.components else 0)
    output = list(frame.output)[-OUTPUT_LINES:]
    shown_output = min(len(output), max(0, room - 3 - tools_least))  # under "Recent events" and a line
    if shown_output:
        lines.append(Text("Tool output (print, logging, warnings)", style="bold"))
        lines.extend(Text(clip(line.expandtabs(), width), style="dim") for line in output[-shown_output:])
        room = height - len(lines)
    events = list(frame.events)[-frame.keep_events :]
    shown_events = min(len(events), max(0, room - 1 - tools_least))
    if room >= 2:
        lines.append(Text("Recent events", style="bold"))
        if not events:
            lines.append(Text("waiting for changes…", style="dim"))
        for row in events[len(events) - shown_events :] if shown_events else []:
            lines.append(_event_line(row, width))
    room = height - len(lines)
    for_components = 0
    if frame.components:
        wanted = len(frame.components) + 2
        for_components = min(wanted, max(room - (len(frame.tools) + 2 if frame.tools else 1), room // 3, 1))
    lines.extend(_tool_lines(frame.tools, width, room - for_components))
    lines.extend(_component_lines(frame, width, height - len(lines)))
    return Group(*lines[:height])


def _header(frame: WatchFrame, width: int) -> Text:
    failed = sum(
        1 for s in frame.statuses if s.state in (FileState.FAILED, FileState.STUCK, FileState.REJECTED)
    )
    conflicts = sum(1 for s in frame.statuses if s.state is FileState.CONFLICT)
    parts = [f"watching {frame.folders}", plural(len(frame.tools), "tool")]
    if frame.components_phrase:
        parts.append(frame.components_phrase)
    if failed:
        parts.append(f"{failed} failed")
    if conflicts:
        parts.append(plural(conflicts, "conflict"))
    if not failed and not conflicts:
        parts.append("all files load")
    parts.append("Ctrl-C to stop")
    text = Text(clip(" · ".join(parts), width), style="bold")
    if failed or conflicts:
        text.stylize("red", 0, len(text))
    return text


def _problem_lines(statuses: Sequence[FileStatus], console: Console, width: int) -> list[Text]:
    rows = problem_rows(statuses)
    if not rows:
        return []
    lines = [Text(f"Problems ({len(rows)})", style="bold red")]
    for row in rows:
        text = Text.assemble(
            (f"{row.state:<8} ", STATE_STYLES.get(row.state, "")),
            (clip_left(row.where, max(8, width - 10)), "bold"),
            "  ",
            (" ".join(row.what.split()), ""),
        )
        lines.extend(text.wrap(console, width, overflow="fold"))
        lines.extend(Text(clip(" " * 9 + source, width), style="bold") for source in row.source.splitlines())
    return lines


def _event_line(row: EventLine, width: int) -> Text:
    """``12:00:01 updated   tools/calc.py calculator BREAKING: parameter 'a' removed (2.0 ms)``.

    The verdict wears the colours of a failure, so a save that breaks callers
    stands out among routine ones; when the line is too long, the reload time
    goes first, then the path gives way from the left, before the verdict is cut.
    """
    kind = row.kind.rstrip(":")
    style = STATE_STYLES.get(kind, "bold cyan" if kind.startswith("tools") else "")
    clock = time.strftime("%H:%M:%S ", time.localtime(row.time))
    word = f"{kind:<{_KIND_WIDTH}} "
    duration = f" ({row.duration_ms:.1f} ms)" if row.duration_ms is not None else ""
    file = row.file
    if row.verdict:
        rest = _event_body(row, "")
        fixed = len(clock) + len(word) + len(rest) + (1 if rest else 0) + 1 + len(row.verdict)
        if fixed + len(file) + len(duration) > width:
            duration = ""
            file = clip_left(file, max(8, width - fixed))
    text = Text.assemble(
        (clock, "dim"),
        (word, style),
        (_event_body(row, file), "red" if kind in ("failed", "stuck") else ""),
    )
    if row.verdict:
        text.append(" ")
        text.append(row.verdict, BREAKING_STYLE)
    text.append(duration)
    text.truncate(width, overflow="ellipsis")
    return text


def _event_body(row: EventLine, file: str) -> str:
    """The file (as given), the tools, the detail and the repeat count of an event row, space-separated."""
    return " ".join(part for part in (file, row.tools, row.detail, row.repeats()) if part)


def _columns(rows: Sequence[ToolRow]) -> list[Column]:
    """The table's columns: the description wants a readable width first and takes what is left last,
    so a wide terminal shows every source path and parameter list whole before longer descriptions."""

    def longest(field: str, floor: int = 0) -> int:
        return max([floor, *(len(getattr(r, field)) for r in rows)])

    return [
        Column("name", 0, min(longest("name"), 24), longest("name")),
        Column("kind", 5, 8, longest("kind")),
        Column("source", 2, min(longest("source"), 22), min(longest("source"), 28), most=longest("source")),
        Column("description", 3, 20, min(longest("description"), 40), flexible=True),
        Column("parameters", 4, min(longest("parameters"), 14), longest("parameters")),
        Column("version", 6, 9, longest("version")),
        Column("status", 1, 9, longest("status")),
    ]


def _component_columns(rows: Sequence[ComponentRow]) -> list[Column]:
    def longest(field: str) -> int:
        return max(len(getattr(r, field)) for r in rows)

    return [
        Column("kind", 1, longest("kind"), longest("kind")),
        Column("name", 0, min(longest("name"), 24), longest("name")),
        Column("source", 2, min(longest("source"), 22), min(longest("source"), 28), most=longest("source")),
        Column("description", 3, 20, min(longest("description"), 40), flexible=True),
        Column("status", 1, 9, longest("status")),
    ]


def _tool_lines(rows: Sequence[ToolRow], width: int, room: int) -> list[Text]:
    """The tools table in ``room`` lines at most: title, header, rows, and what was left out."""
    if not rows:
        return [Text("no tools yet: add a tool file to a watched folder", style="dim")][: max(0, room)]

    def more(hidden: int) -> str:
        return plural(hidden, "more tool")

    return _table_lines("Tools", rows, _columns(rows), (width, room), more, plural(len(rows), "tool"))


def _component_lines(frame: WatchFrame, width: int, room: int) -> list[Text]:
    """The prompts, resources, templates and skills in ``room`` lines at most; nothing when there are none."""
    rows = frame.components
    if not rows:
        return []
    title = "Prompts, resources and skills"
    columns = _component_columns(rows)
    return _table_lines(title, rows, columns, (width, room), "{} more".format, frame.components_phrase)


def _table_lines(
    title: str,
    rows: Sequence[ToolRow | ComponentRow],
    columns: list[Column],
    size: tuple[int, int],
    more: Callable[[int], str],
    summary: str,
) -> list[Text]:
    """A titled table within ``size`` (width, lines): title, header, rows, then ``… and {more(hidden)}``;
    with no room for a table, ``summary`` alone."""
    width, room = size
    if room <= 0:
        return []
    widths = fit_columns(columns, width)
    lines = [Text(title, style="bold")]
    header = Text(" ".join(f"{name:<{w}}" for name, w in widths.items()).rstrip(), style="bold underline")
    fit_rows = room - 2
    cut = fit_rows < len(rows)
    if cut:
        fit_rows = max(0, fit_rows - 1)
    if room >= 2 + (1 if cut else 0) and fit_rows > 0:
        lines.append(header)
        for row in rows[:fit_rows]:
            lines.append(_row_line(row, widths))
    elif cut:
        lines = []  # no room for a table: only say how many there are
    if cut:
        text = f"… and {more(len(rows) - fit_rows)}" if lines else summary
        lines.append(Text(clip(f"{text} (tool-loader list)", width), style="dim"))
    return lines[:room]


def _row_line(row: ToolRow | ComponentRow, widths: dict[str, int]) -> Text:
    text = Text()
    for index, (name, width) in enumerate(widths.items()):
        value: str = getattr(row, name)
        cell = clip_left(value, width) if name == "source" else clip(value, width)
        style = {"name": "bold cyan", "source": "dim", "version": "dim", "kind": "cyan"}.get(name, "")
        if name == "kind" and isinstance(row, ToolRow):
            style = ""
        if name == "status":
            style = "green" if value in (OK, SERVING) else "bold red"
        if index:
            text.append(" ")
        text.append(f"{cell:<{width}}", style=style)
    text.rstrip()
    return text
