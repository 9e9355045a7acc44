"""``tool-loader watch`` on a real pseudo-terminal, read back through pyte as a person would see it.

Each test runs the real command at 80x24, 100x30 and 200x50 from a temporary
copy of ``sample_tools`` and asserts on the rendered screen; every wait is on
the screen with a generous deadline. The 80x24 capture the documentation shows
(README.md, docs/console.md) is compared with the real screen here, so it
cannot go stale; ``TOOL_LOADER_UPDATE_DOCS=1`` rewrites it instead.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path

import pytest
from screen import Terminal
from support import FAST, write

from loader.console.render import parameter_labels
from loader.reload.loader import ToolLoader

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_TOOLS = ROOT / "sample_tools"
CAPTURE_PAGES = (ROOT / "README.md", ROOT / "docs" / "console.md")
CAPTURE_BEGIN = "<!-- screen-capture:begin -->"
CAPTURE_END = "<!-- screen-capture:end -->"
SIZES = [(80, 24), (100, 30), (200, 50)]
EXTRA_TOOLS = 20


def _folder(tmp_path: Path, extra: int = 0) -> Path:
    tools = tmp_path / "st"
    shutil.copytree(SAMPLE_TOOLS, tools, ignore=shutil.ignore_patterns("__pycache__"))
    for index in range(extra):
        write(
            tools / f"extra_{index:02d}.py",
            f'from loader import tool\n\n@tool\ndef extra_tool_number_{index:02d}(x: int) -> int:\n    """Return x."""\n    return x\n',
        )
    return tools


def _tool_names(tools: Path) -> set[str]:
    """The names the folder defines, as the loader itself sees them."""
    loader = ToolLoader([tools], config=FAST)
    try:
        loader.scan()
        return set(loader.registry.names())
    finally:
        loader.close()


def _section(lines: list[str], title: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(title))


def _assert_no_name_split(lines: list[str], names: set[str]) -> None:
    """No line starts with the tail of a tool name, and no line ends with a bare head of one."""
    for number, line in enumerate(lines):
        words = line.split()
        if not words:
            continue
        for name in names:
            for cut in range(3, len(name) - 2):
                head, tail = name[:cut], name[cut:]
                assert words[-1] != head, f"line {number} ends with {head!r}, the start of {name!r}: {line!r}"
                if words[0] == tail and number > 0:
                    assert not lines[number - 1].rstrip().endswith(head), (
                        f"{name!r} is split across lines {number - 1} and {number}"
                    )


def _problem_and_last_good(frames: list[list[str]], lines: list[str]) -> bool:
    """Whether ``lines`` show one problem and a calculator row serving its last good version (kept in
    ``frames``): a frame drawn while another line (a slow import's) took the table's last rows shows less."""
    if "Problems (1)" in "\n".join(lines) and any(
        "last good" in r for r in lines if r.startswith("calculator")
    ):
        frames.append(lines)
        return True
    return False


def _updated_rows_at_least(count: int, lines: list[str]) -> bool:
    """Whether the screen shows ``count`` or more "updated" event rows."""
    return sum(" updated " in line for line in lines) >= count


@pytest.mark.parametrize(("columns", "rows"), SIZES)
def test_a_break_shows_the_problem_with_file_and_line_above_events_and_tools(
    tmp_path: Path, columns: int, rows: int
) -> None:
    tools = _folder(tmp_path, extra=EXTRA_TOOLS)
    names = _tool_names(tools)
    terminal = Terminal(["watch", "st"], tmp_path, columns, rows)
    try:
        terminal.wait_text("waiting for changes")
        # Six saves that each log an event, then a break.
        for index in range(6):
            path = tools / f"extra_{index:02d}.py"
            path.write_text(path.read_text().replace("Return x.", f"Return x ({index})."))
            terminal.wait_for(
                functools.partial(_updated_rows_at_least, min(index + 1, 5)), f"{index + 1} updated rows"
            )
        calculator = tools / "calculator.py"
        broken_line = calculator.read_text().count("\n") + 2
        calculator.write_text(calculator.read_text() + "\ndef broken(:\n")
        terminal.wait_text(f"st/calculator.py:{broken_line}")
        # The frame that shows the problem and the failing file's tools as serving their last good version
        # (a frame drawn while a line such as a slow import's took the table's last row can show less).
        frames: list[list[str]] = []
        terminal.wait_for(
            functools.partial(_problem_and_last_good, frames), "the problem and calculator as last good"
        )
        lines = frames[-1]

        assert lines[0].startswith("watching st · ") and "1 failed" in lines[0], lines[0]
        problems, events, table = (
            _section(lines, "Problems"),
            _section(lines, "Recent events"),
            _section(lines, "Tools"),
        )
        assert problems < events < table
        problem = lines[problems + 1]
        assert problem.startswith("failed ") and f"st/calculator.py:{broken_line}" in problem
        assert "SyntaxError" in "\n".join(lines[problems + 1 : events])
        assert sum(1 for line in lines[events + 1 : table] if re.match(r"\d\d:\d\d:\d\d ", line)) >= 5
        assert max(len(line) for line in lines) <= columns
        _assert_no_name_split(lines, names)

        shown = [line for line in lines[table + 2 :] if line and not line.startswith("…")]
        total = len(names)
        cut = [line for line in lines if line.startswith("… and ")]
        if len(shown) < total:  # the table is what gets cut, saying how much
            assert cut == [f"… and {total - len(shown)} more tools (tool-loader list)"], "\n".join(lines)
        else:
            assert cut == []
        for row in shown:
            first = row.split()[0]
            assert first in names or (first.endswith("…") and any(n.startswith(first[:-1]) for n in names)), (
                row
            )
        assert any("last good" in row for row in shown if row.startswith("calculator"))
    finally:
        code = terminal.interrupt_and_wait()
    assert code == 0
    assert b"stopped watching" in terminal.raw
    assert b"Traceback" not in terminal.raw


def test_a_resize_is_redrawn_for_the_new_size(tmp_path: Path) -> None:
    tools = _folder(tmp_path)
    terminal = Terminal(["watch", "st"], tmp_path, 80, 24)
    try:
        terminal.wait_text("waiting for changes")
        header = terminal.lines()[_section(terminal.lines(), "Tools") + 1]
        assert " kind " not in header  # dropped at 80 columns
        terminal.resize(200, 50)
        terminal.wait_for(
            lambda lines: any(line.startswith("name") and " kind " in line for line in lines),
            "the table with its kind column after growing to 200 columns",
        )
        terminal.resize(80, 24)
        terminal.wait_for(
            lambda lines: (
                any(line.startswith("name") and " kind " not in line for line in lines)
                and max(len(line) for line in lines) <= 80
            ),
            "the narrow table again after shrinking to 80 columns",
        )
        assert (tools / "calculator.py").exists()
    finally:
        assert terminal.interrupt_and_wait() == 0


def test_a_slow_import_is_shown_while_it_runs(tmp_path: Path) -> None:
    tools = _folder(tmp_path)
    terminal = Terminal(["watch", "st"], tmp_path, 100, 30)
    try:
        terminal.wait_text("waiting for changes")
        release = tmp_path / "release"
        write(
            tools / "slow.py",
            f"""
            import pathlib, time
            while not pathlib.Path({str(release)!r}).exists():
                time.sleep(0.01)
            """,
        )
        terminal.wait_for(
            lambda lines: any(re.fullmatch(r"importing st/slow\.py… \d+ s", line) for line in lines),
            "the import in progress",
        )
        release.write_text("go")
        terminal.wait_for(
            lambda lines: (
                any(" added " in line and "st/slow.py" in line for line in lines)
                and not any(line.startswith("importing") for line in lines)
            ),
            "the import finished",
        )
    finally:
        assert terminal.interrupt_and_wait() == 0


def _documented_captures(page: Path) -> list[str]:
    """The text of every fenced capture between the markers of ``page``."""
    text = page.read_text(encoding="utf-8")
    found = []
    for part in text.split(CAPTURE_BEGIN)[1:]:
        assert CAPTURE_END in part, f"{page.name}: {CAPTURE_BEGIN} without {CAPTURE_END}"
        fenced = part.split(CAPTURE_END, 1)[0].strip()
        assert fenced.startswith("```") and fenced.endswith("```"), (
            f"{page.name}: the capture is not one fence"
        )
        found.append(fenced[3:-3].strip("\n"))
    return found


def _write_capture(page: Path, capture: str) -> None:
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(CAPTURE_BEGIN, 1)
    _, tail = rest.split(CAPTURE_END, 1)
    page.write_text(f"{head}{CAPTURE_BEGIN}\n```\n{capture}\n```\n{CAPTURE_END}{tail}", encoding="utf-8")


def _comparable(capture: str) -> list[str]:
    """The capture with what differs from run to run (clock times, durations) replaced."""
    capture = re.sub(r"\b\d\d:\d\d:\d\d\b", "HH:MM:SS", capture)
    capture = re.sub(r"\(\d+(\.\d+)? ms\)", "(N ms)", capture)
    return [line.rstrip() for line in capture.splitlines()]


def _watch_capture(tmp_path: Path) -> str:
    """``watch sample_tools`` at 80x24 after a docstring change to slugify.py and a save that broke calculator.py."""
    tools = tmp_path / "sample_tools"
    shutil.copytree(SAMPLE_TOOLS, tools, ignore=shutil.ignore_patterns("__pycache__"))
    terminal = Terminal(["watch", "sample_tools", "--state-dir", str(tmp_path / "state")], tmp_path, 80, 24)
    try:
        terminal.wait_text("waiting for changes")
        slugify = tools / "slugify.py"
        slugify.write_text(
            slugify.read_text().replace("a lower-case, ASCII-only slug", "a URL-friendly slug")
        )
        terminal.wait_for(
            lambda lines: any(" updated " in line and "slugify.py" in line for line in lines),
            "slugify updated",
        )
        calculator = tools / "calculator.py"
        calculator.write_text(calculator.read_text() + "\ndef broken(:\n")
        terminal.wait_for(
            lambda lines: (
                any(line.startswith("Problems (1)") for line in lines)
                and any(" failed " in line and "calculator.py:" in line for line in lines)
            ),
            "the failed save among the problems and the events",
        )
        lines = terminal.lines()
    finally:
        assert terminal.interrupt_and_wait() == 0
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def test_the_documented_screen_is_what_watch_shows(tmp_path: Path) -> None:
    capture = _watch_capture(tmp_path)
    assert capture.startswith("watching sample_tools · 8 tools · 1 failed"), capture
    assert max(len(line) for line in capture.splitlines()) <= 80
    if os.environ.get("TOOL_LOADER_UPDATE_DOCS") == "1":
        for page in CAPTURE_PAGES:
            _write_capture(page, capture)
    for page in CAPTURE_PAGES:
        documented = _documented_captures(page)
        assert documented, f"{page.name} shows no {CAPTURE_BEGIN} capture"
        for shown in documented:
            assert _comparable(shown) == _comparable(capture), (
                f"{page.name}: the documented 80x24 screen differs from what watch shows now; "
                f"run TOOL_LOADER_UPDATE_DOCS=1 pytest {Path(__file__).name}. Now:\n{capture}"
            )


def test_a_wide_terminal_shows_every_source_and_parameter_list_whole(tmp_path: Path) -> None:
    tools = tmp_path / "st" / "deeper" / "folder"
    shutil.copytree(SAMPLE_TOOLS, tools, ignore=shutil.ignore_patterns("__pycache__"))
    loader = ToolLoader([tmp_path / "st"], config=FAST)
    try:
        loader.scan()
        wanted = {
            tool.tool_name: (
                f"{Path(str(tool.source_file)).relative_to(tmp_path)}:{tool.source_line}",
                ", ".join(parameter_labels(tool.tool_spec)),
            )
            for tool in loader.registry.snapshot().tools()
        }
    finally:
        loader.close()
    terminal = Terminal(["watch", "st", "--no-history"], tmp_path, 200, 50)
    try:
        terminal.wait_text("waiting for changes")
        lines = terminal.lines()
        rows = {line.split()[0]: line for line in lines[_section(lines, "Tools") + 2 :] if line}
        assert set(rows) == set(wanted)
        for name, (source, parameters) in wanted.items():
            assert f" {source} " in rows[name], (source, rows[name])
            assert f" {parameters} " in rows[name], (parameters, rows[name])
        assert max(len(line) for line in lines) <= 200
    finally:
        assert terminal.interrupt_and_wait() == 0


def test_identical_consecutive_updates_are_one_row_with_a_count(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    greet = tools / "greet.py"
    template = '''
from loader import tool

@tool
def greet(who: str) -> str:
    """Greet, version {n}."""
    return "hi " + who
'''
    greet.parent.mkdir()
    greet.write_text(template.format(n=0))
    terminal = Terminal(["watch", "tools"], tmp_path, 100, 30)
    try:
        terminal.wait_text("waiting for changes")
        for n in range(1, 4):
            greet.write_text(template.format(n=n))
            terminal.wait_text(f"Greet, version {n}.")
        terminal.wait_for(lambda lines: any("(3 times)" in line for line in lines), "a count of three")
        updated = [line for line in terminal.lines() if re.match(r"\d\d:\d\d:\d\d updated ", line)]
        assert len(updated) == 1, terminal.text()
        assert re.search(r"updated +tools/greet\.py greet \(3 times\) \(\d+\.\d ms\)$", updated[0]), updated[
            0
        ]
    finally:
        terminal.close()


PROMPT = "---\ndescription: Say hello.\n---\nHello {{who}}\n"
BROKEN_PROMPT = "---\ntitle: Broken\narguments: [unclosed\nvalues: {}\n---\nHi\n"  # not YAML at line 4
SKILL = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\n# pdf\n"


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (120, 40)])
def test_prompts_resources_and_skills_have_their_table_under_the_tools_and_a_break_keeps_the_last_good(
    tmp_path: Path, columns: int, rows: int
) -> None:
    tools = _folder(tmp_path)
    write(tools / "prompts" / "greet.md", PROMPT)
    write(tools / "resources" / "schema.sql", "create table t (id int);\n")
    write(tools / "skills" / "pdf" / "SKILL.md", SKILL)
    write(tools / "skills" / "pdf" / "references" / "FORMS.md", "Fields: name.\n")
    terminal = Terminal(["watch", "st", "--no-history"], tmp_path, columns, rows)
    try:
        terminal.wait_text("Prompts, resources and skills")
        lines = terminal.lines()
        assert lines[0].startswith("watching st · 8 tools · 1 prompt, 1 resource, 1 skill · "), lines[0]
        events, table, components = (
            _section(lines, "Recent events"),
            _section(lines, "Tools"),
            _section(lines, "Prompts, resources and skills"),
        )
        assert events < table < components
        shown = {
            line.split()[1]: line for line in lines[components + 2 :] if line and not line.startswith("…")
        }
        assert shown["greet"].split()[0] == "prompt" and shown["greet"].endswith(" ok"), shown
        assert shown["pdf"].split()[0] == "skill" and "2 files" in shown["pdf"] and "serving" in shown["pdf"]
        assert any(name.startswith("tool-loader:///") for name in shown)
        assert max(len(line) for line in lines) <= columns

        (tools / "prompts" / "greet.md").write_text(BROKEN_PROMPT)
        terminal.wait_text("Problems (1)")
        terminal.wait_for(
            lambda lines: any(line.startswith("prompt ") and line.endswith("last good") for line in lines),
            "the prompt's row on its last good version",
        )
        lines = terminal.lines()
        problem = lines[_section(lines, "Problems") + 1]
        assert problem.startswith("failed ") and "st/prompts/greet.md:4" in problem, problem
        assert "still serving the last good prompt greet" in " ".join(
            lines[1 : _section(lines, "Recent events")]
        )
        assert max(len(line) for line in lines) <= columns
    finally:
        code = terminal.interrupt_and_wait()
    assert code == 0
    assert b"Traceback" not in terminal.raw
