"""The watch screen's layout for a given size: what is kept whole, what is cut, and how that is said."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

from loader.console.render import status_record
from loader.console.watch_events import EventLine, describe_event
from loader.console.watch_view import ComponentRow, ToolRow, WatchFrame, render_frame
from loader.status import FileNote, FileState, FileStatus, LoaderEvent, LoaderEventKind, LoadErrorInfo


def _screen(frame: WatchFrame, width: int, height: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, height=height, color_system=None)
    with console.capture() as capture:
        console.print(render_frame(frame, console, width, height))
    return capture.get().rstrip("\n").split("\n")


def _failed(index: int) -> FileStatus:
    path = Path.cwd() / "tools" / f"broken_{index}.py"
    error = LoadErrorInfo("SyntaxError", "invalid syntax", str(path), 3 + index)
    return FileStatus(path, f"m{index}", FileState.FAILED, error=error)


def _tools(count: int) -> tuple[ToolRow, ...]:
    return tuple(
        ToolRow(f"tool_{i:02d}", "function", f"tools/t{i}.py:3", "Do a thing.", "x*", "#abcdef12", "ok")
        for i in range(count)
    )


def _events(count: int) -> tuple[EventLine, ...]:
    return tuple(
        EventLine(time.time(), "updated", f"tools/t{i}.py", f"tool_{i:02d}", "", 1.0) for i in range(count)
    )


def test_at_80x24_problems_stay_whole_five_events_show_and_the_tools_are_cut_with_a_count() -> None:
    frame = WatchFrame("tools", _tools(30), (_failed(1), _failed(2)), _events(10), keep_events=10)
    lines = _screen(frame, 80, 24)
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    assert lines[0].startswith("watching tools · 30 tools · 2 failed")
    assert lines[1] == "Problems (2)"
    assert lines[2].startswith("failed   tools/broken_1.py:4  SyntaxError: invalid syntax")
    assert lines[3].startswith("failed   tools/broken_2.py:5  SyntaxError: invalid syntax")
    events = [line for line in lines if " updated " in line]
    assert len(events) >= 5
    rows = [line for line in lines if line.startswith("tool_")]
    assert lines[-1] == f"… and {30 - len(rows)} more tools (tool-loader list)"


def test_more_problems_than_lines_say_where_the_rest_are() -> None:
    frame = WatchFrame("tools", _tools(3), tuple(_failed(i) for i in range(40)), (), keep_events=10)
    lines = _screen(frame, 80, 24)
    assert len(lines) == 24
    assert lines[-1] == "… and more problems (tool-loader check)"
    assert all(line.startswith(("watching", "Problems", "failed")) for line in lines[:-1])


def test_a_slow_import_shows_after_half_a_second_only() -> None:
    quick = WatchFrame("tools", _tools(1), (), (), keep_events=10, importing=("tools/slow.py", 0.2))
    slow = WatchFrame("tools", _tools(1), (), (), keep_events=10, importing=("tools/slow.py", 3.2))
    assert not any(line.startswith("importing") for line in _screen(quick, 80, 24))
    assert "importing tools/slow.py… 3 s" in _screen(slow, 80, 24)


def test_a_breaking_verdict_stands_out_and_outranks_the_reload_time_at_80_columns() -> None:
    verdict = "BREAKING: parameter 'a' removed"
    row = EventLine(time.time(), "updated", "tools/calculator.py", "calculator", "", 2.0, verdict)
    routine = EventLine(time.time(), "updated", "tools/calculator.py", "calculator", "", 2.0)
    frame = WatchFrame("tools", _tools(1), (), (routine, row), keep_events=10)
    for width in (200, 80):
        rendered = render_frame(frame, Console(file=io.StringIO(), width=width), width, 24)
        lines = [
            line for line in rendered.renderables if isinstance(line, Text) and "calculator" in line.plain
        ]
        plain, breaking = lines[0], lines[1]
        assert plain.plain.endswith("updated   tools/calculator.py calculator (2.0 ms)")
        start = breaking.plain.index(verdict)
        assert [span.style for span in breaking.spans if span.start <= start < span.end] == ["bold red"]
        assert len(breaking.plain) <= width
    assert breaking.plain.endswith(f"calculator {verdict}")  # at 80 columns the time gives way


def test_an_event_of_a_file_that_rewrites_itself_says_its_reloads_are_slowed_down() -> None:
    path = Path.cwd() / "tools" / "counter.py"
    status = FileStatus(path, "m", FileState.LOADED, tools=("counter",), notes=(FileNote.REWRITES_ITSELF,))
    event = LoaderEvent(LoaderEventKind.UPDATED, path, ("counter",), 1.0, time.time(), status)
    line = describe_event(event).plain()
    assert line.endswith("counter rewrites itself when imported; reloads slowed down (1.0 ms)"), line
    assert status_record(status)["notes"] == ["rewrites itself when imported; reloads slowed down"]


def _components(count: int) -> tuple[ComponentRow, ...]:
    return tuple(
        ComponentRow("prompt", f"prompt_{i:02d}", f"tools/prompts/p{i}.md", "Say a thing.", "ok")
        for i in range(count)
    )


def test_prompts_and_resources_keep_a_third_of_the_room_under_many_tools_and_say_what_was_cut() -> None:
    frame = WatchFrame(
        "tools",
        _tools(30),
        (),
        _events(3),
        keep_events=10,
        components=_components(20),
        components_phrase="20 prompts",
    )
    lines = _screen(frame, 80, 24)
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    assert lines[0].startswith("watching tools · 30 tools · 20 prompts · all files load")
    tools, components = lines.index("Tools"), lines.index("Prompts, resources and skills")
    assert tools < components
    shown = [line for line in lines[components + 2 :] if line.startswith("prompt ")]
    assert len(shown) >= 3 and len(lines) - components >= (24 - tools) // 3
    assert lines[-1] == f"… and {20 - len(shown)} more (tool-loader list)"
    assert lines[components - 1].startswith("… and ") and lines[components - 1].endswith(
        "more tools (tool-loader list)"
    )


def test_a_folder_of_prompts_alone_shows_them_whole_under_no_tools_yet() -> None:
    frame = WatchFrame(
        "tools", (), (), (), keep_events=10, components=_components(2), components_phrase="2 prompts"
    )
    lines = _screen(frame, 80, 24)
    assert "no tools yet: add a tool file to a watched folder" in lines
    assert [line.split()[:2] for line in lines if line.startswith("prompt ")] == [
        ["prompt", "prompt_00"],
        ["prompt", "prompt_01"],
    ]
