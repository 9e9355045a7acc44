"""Load errors point at the line to fix."""

from __future__ import annotations

from pathlib import Path

from loader.status import FileState, FileStatus, LoadErrorInfo, ScanReport, error_info_from_exception


def _raise_from(path: Path, source: str) -> BaseException:
    try:
        exec(compile(source, str(path), "exec"), {})
    except BaseException as exc:
        return exc
    raise AssertionError("no exception")


def test_innermost_frame_in_the_tool_file_wins(tmp_path: Path) -> None:
    tool = tmp_path / "tools" / "t.py"
    exc = _raise_from(tool, "def f():\n    raise KeyError('k')\n\nf()\n")
    info = error_info_from_exception(exc, tool)
    assert (info.exc_type, info.file, info.line) == ("KeyError", str(tool), 2)
    assert info.location() == f"{tool}:2"
    assert info.one_line() == f"KeyError: 'k' ({tool}:2)"


def test_a_helper_inside_the_folder_is_named_when_the_tool_file_is_not_in_the_traceback(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tools"
    helper = root / "helper.py"
    exc = _raise_from(helper, "x = 1\nraise ValueError('bad helper')\n")
    info = error_info_from_exception(exc, root / "tool.py", (root,))
    assert (info.file, info.line, info.message) == (str(helper), 2, "bad helper")


def test_syntax_errors_use_their_own_location(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    exc = _raise_from(path, "x = (\n")
    info = error_info_from_exception(exc, path)
    assert info.exc_type == "SyntaxError" and info.line == 1 and info.file == str(path)


def test_scan_report_groups() -> None:
    ok = FileStatus(Path("/a.py"), "m.a", FileState.LOADED, tools=("a", "b"))
    bad = FileStatus(Path("/b.py"), "m.b", FileState.FAILED, error=LoadErrorInfo("E", "m", "/b.py", 1))
    clash = FileStatus(Path("/c.py"), "m.c", FileState.CONFLICT, tools=("c",))
    report = ScanReport(files=(ok, bad, clash), seconds=0.1)
    assert report.loaded == (ok,)
    assert report.failed == (bad, clash)
    assert report.tool_count == 3
