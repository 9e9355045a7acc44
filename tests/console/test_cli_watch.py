"""``tool-loader watch``: the live view in a real pseudo-terminal, and plain lines when piped.

Both run the real command with ``PYTHONDONTWRITEBYTECODE`` unset, as on users'
machines, and from a temporary working directory. Every wait is on output,
with a generous deadline; nothing sleeps.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # pexpect ships no type hints
import warm_cli
from support import LineReader, write

DEADLINE = 20.0

V1 = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Say hi to someone."""
    return "hi " + name
'''

V2 = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Say hello warmly to someone."""
    return "hello " + name
'''

BROKEN = V2 + "\nvalue = (\n"
BROKEN_LINE = (
    V2.strip().count("\n") + 3
)  # the line of "value = (" once support.write strips the first newline

CALCULATOR = '''
from loader import tool

@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


def cli_env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "FORCE_COLOR", "NO_COLOR")
    }
    env.update(extra)
    return env


@contextmanager
def plain_watch(cwd: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], LineReader]]:
    """``tool-loader watch ARGS`` without a terminal (one plain line per event), 200 columns wide, and a
    reader of its output; killed on the way out if the test left it running."""
    process = subprocess.Popen(
        warm_cli.command(["watch", *args], cli_env(COLUMNS="200")),
        cwd=cwd,
        env=cli_env(COLUMNS="200"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process, LineReader(process.stdout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_live_view_follows_add_edit_break_fix_and_exits_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "add.py", CALCULATOR)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "loader", "watch", str(tools)],
        cwd=str(tmp_path),
        env=cli_env(TERM="xterm-256color", COLUMNS="200", LINES="50"),
        dimensions=(50, 200),
        encoding="utf-8",
        timeout=DEADLINE,
    )
    try:
        child.expect("loaded 1 tool from 1 file in")
        child.expect("waiting for changes")  # events come before the tools table
        child.expect("Add two numbers")

        write(tools / "greet.py", V1)
        child.expect(r"tools changed")
        child.expect(r"\+greet")
        child.expect("Say hi to someone")  # a new row in the live table

        write(tools / "greet.py", V2)
        child.expect("updated")
        child.expect("Say hello warmly to someone")

        write(tools / "greet.py", BROKEN)
        child.expect(rf"tools/greet\.py:{BROKEN_LINE}")  # the failure points at the line
        child.expect("was never closed")

        write(tools / "greet.py", V2.replace("warmly", "kindly"))
        child.expect("recovered")  # each redraw shows the events, then the table
        child.expect("Say hello kindly to someone")

        child.sendintr()
        child.expect("stopped watching")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert "Traceback" not in (child.before or "")


def test_without_a_terminal_prints_one_plain_line_per_event(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "add.py", CALCULATOR)
    with plain_watch(tmp_path) as (process, out):  # no directory: ./tools
        out.wait_for(r"^loaded 1 tool from 1 file in tools \(\d+ ms\)$")
        out.wait_for(r"^watching tools \(Ctrl-C to stop\)$")
        clock = r"^\d\d:\d\d:\d\d "

        write(tools / "greet.py", V1)
        out.wait_for(clock + r"added tools/greet\.py greet \(\d+\.\d ms\)$")
        out.wait_for(clock + r"tools changed: \+greet \(2 tools\)$")

        write(tools / "greet.py", V2)
        out.wait_for(clock + r"updated tools/greet\.py greet \(\d+\.\d ms\)$")

        write(tools / "greet.py", BROKEN)
        out.wait_for(
            clock + rf"failed tools/greet\.py:{BROKEN_LINE} \(still serving greet\) "
            r"SyntaxError: '\(' was never closed \(\d+\.\d ms\)$"
        )

        write(tools / "greet.py", V2)
        out.wait_for(clock + r"recovered tools/greet\.py greet \(\d+\.\d ms\)$")

        (tools / "greet.py").unlink()
        out.wait_for(clock + r"removed tools/greet\.py greet$")
        out.wait_for(clock + r"tools changed: -greet \(1 tool\)$")

        process.send_signal(signal.SIGINT)
        out.wait_for(r"^live at exit: 1 tool from 1 file in tools$")
        out.wait_for(r"^  tools: add$")
        out.wait_for(r"^stopped watching$")
        assert process.wait(timeout=DEADLINE) == 0
    stderr = process.stderr.read() if process.stderr else ""
    assert "Traceback" not in stderr
    assert not any("\x1b" in line for line in out.seen)  # no ANSI codes in plain mode


HELPER = """
def shout(text: str) -> str:
    return text.upper()
"""

USER = '''
from loader import tool
from helper import shout

@tool
def loud(text: str) -> str:
    """Say it loudly."""
    return shout(text)
'''


def test_plain_lines_say_moved_and_kept_on_the_last_good_version(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "greet.py", V1)
    write(tools / "helper.py", HELPER)
    write(tools / "user.py", USER)
    with plain_watch(tmp_path, "tools") as (process, out):
        out.wait_for(r"^loaded 2 tools from 3 files in tools \(\d+ ms\)$")
        out.wait_for(r"^watching tools")
        clock = r"^\d\d:\d\d:\d\d "

        (tools / "greet.py").rename(tools / "hello.py")
        out.wait_for(clock + r"moved tools/greet\.py → tools/hello\.py greet \(\d+\.\d ms\)$")

        write(tools / "helper.py", HELPER + "\ndef broken(:\n")
        out.wait_for(clock + r"failed tools/helper\.py:\d+ SyntaxError")
        out.wait_for(clock + r"kept tools/user\.py loud \(last good version: tools/helper\.py failed\)")

        process.send_signal(signal.SIGINT)
        out.wait_for(r"^live at exit: 2 tools from 3 files in tools \(1 file failed\)$")
        out.wait_for(r"^  tools: greet, loud$")
        out.wait_for(r"^  failed tools/helper\.py:\d+ SyntaxError: ")
        out.wait_for(r"^stopped watching$")
        assert process.wait(timeout=DEADLINE) == 0
    assert not any(re.search(r" (removed|added) tools/(greet|hello)\.py", line) for line in out.seen)


def test_leaving_the_live_view_leaves_the_final_state_in_the_scrollback(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "add.py", CALCULATOR)
    write(tools / "greet.py", V1)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "loader", "watch", "tools", "--no-history"],
        cwd=str(tmp_path),
        env=cli_env(TERM="xterm-256color", COLUMNS="120", LINES="30"),
        dimensions=(30, 120),
        encoding="utf-8",
        timeout=DEADLINE,
    )
    try:
        child.expect("waiting for changes")
        write(tools / "greet.py", BROKEN)
        child.expect(rf"tools/greet\.py:{BROKEN_LINE}")
        child.sendintr()
        child.expect(re.escape("\x1b[?1049l"))  # the full-screen view is gone; what follows stays
        child.expect(r"live at exit: 2 tools from 2 files in tools \(1 file failed\)")
        child.expect(r"  tools: add, greet")
        child.expect(
            rf"  failed tools/greet\.py:{BROKEN_LINE} SyntaxError: '\(' was never closed "
            r"\(still serving the last good greet\)"
        )
        child.expect("stopped watching")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def _adder(params: str, example: str, body: str, description: str = "Add numbers.") -> str:
    return (
        "from loader import tool\n\n\n"
        f'@tool(examples=[{{"description": "adds", "params": {example}, "expected_output": 5}}])\n'
        f"def calculator({params}) -> int:\n"
        f'    """{description}"""\n'
        f"    return {body}\n"
    )


def test_a_save_that_breaks_callers_says_so_on_its_event_line(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "calculator.py", _adder("a: int, b: int", '{"a": 2, "b": 3}', "a + b"))
    with plain_watch(tmp_path, "tools", "--gate") as (process, out):
        out.wait_for(r"^watching tools")
        event = r"^\d\d:\d\d:\d\d {} tools/calculator\.py calculator {}\(\d+\.\d ms\)$"

        write(
            tools / "calculator.py", _adder("a: int, b: int, c: int", '{"a": 2, "b": 3, "c": 0}', "a + b + c")
        )
        out.wait_for(event.format("updated", re.escape("BREAKING: required parameter 'c' added ")))

        write(
            tools / "calculator.py",
            _adder("a: int, b: int, c: int", '{"a": 2, "b": 3, "c": 0}', "a + b + c + 1"),
        )
        out.wait_for(r" rejected tools/calculator\.py:\d+ \(still serving calculator\) ExampleFailed")

        # The last good version had 'a'; the save that goes live drops it: the file recovers, callers break.
        write(tools / "calculator.py", _adder("b: int, c: int", '{"b": 3, "c": 2}', "b + c"))
        out.wait_for(event.format("recovered", re.escape("BREAKING: parameter 'a' removed ")))

        write(tools / "calculator.py", _adder("b: int, c: int, d: int = 0", '{"b": 3, "c": 2}', "b + c + d"))
        out.wait_for(event.format("updated", ""))  # an optional parameter breaks nobody: no verdict

        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=DEADLINE) == 0


GATED_V1 = '''
from loader import tool

@tool(examples=[{"description": "adds", "params": {"a": 1, "b": 2}, "expected_output": 3}])
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''

GATED_WRONG = GATED_V1.replace("return a + b", "return a - b")


def test_plain_lines_show_why_a_gated_save_was_rejected(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "add.py", GATED_V1)
    with plain_watch(tmp_path, "tools", "--gate") as (process, out):
        out.wait_for(r"^watching tools")
        write(tools / "add.py", GATED_WRONG)
        out.wait_for(
            r"^\d\d:\d\d:\d\d rejected tools/add\.py:\d+ \(still serving add\) ExampleFailed: "
            r"add example 0 \('adds'\) with .*expected 3, got -1 \(\d+\.\d ms\)$"
        )
        process.send_signal(signal.SIGINT)
        out.wait_for(r"^stopped watching$")
        assert process.wait(timeout=DEADLINE) == 0


PROMPT = "---\ndescription: Say hello.\n---\nHello {{who}}\n"
BROKEN_PROMPT = "---\ntitle: Broken\narguments: [unclosed\nvalues: {}\n---\nHi\n"  # not YAML at line 4
SKILL = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\n# pdf\n"
BROKEN_SKILL = "---\nname: PDF\ndescription: Fill in PDF forms.\n---\n# pdf\n"  # a bad name at line 2


def _folder_with_components(tools: Path) -> None:
    write(tools / "add.py", CALCULATOR)
    write(tools / "prompts" / "greet.md", PROMPT)
    write(tools / "resources" / "schema.sql", "create table t (id int);\n")


def test_plain_lines_follow_prompts_resources_and_skills_and_keep_their_last_good_versions(
    tmp_path: Path,
) -> None:
    tools = tmp_path / "tools"
    _folder_with_components(tools)
    with plain_watch(tmp_path, "tools", "--no-history") as (process, out):
        out.wait_for(r"^loaded 1 tool, 1 prompt, 1 resource from 3 files in tools \(\d+ ms\)$")
        out.wait_for(r"^watching tools")
        clock = r"^\d\d:\d\d:\d\d "

        write(tools / "prompts" / "hello.md", PROMPT.replace("Hello", "Hi"))
        out.wait_for(clock + r"added tools/prompts/hello\.md prompt hello \(\d+\.\d ms\)$")
        out.wait_for(clock + r"prompts changed: \+hello \(2 prompts\)$")

        write(tools / "prompts" / "greet.md", BROKEN_PROMPT)
        out.wait_for(
            clock + r"failed tools/prompts/greet\.md:4 \(still serving prompt greet\) "
            r"FileComponentError: front matter is not valid YAML"
        )

        write(tools / "resources" / "schema.sql", "create table t (id int, name text);\n")
        out.wait_for(
            clock + r"updated tools/resources/schema\.sql resource tool-loader:///resources/schema\.sql "
            r"\(\d+\.\d ms\)$"
        )

        write(tools / "skills" / "pdf" / "SKILL.md", SKILL)
        # A batch may catch the file empty mid-write (served as nothing), then its content: an update.
        out.wait_for(
            clock + r"(added|updated) tools/skills/pdf/SKILL\.md skill pdf( \[\+skill pdf\])? \(\d+\.\d ms\)$"
        )
        out.wait_for(clock + r"skills changed: \+pdf \(1 skill\)$")
        write(tools / "skills" / "pdf" / "references" / "FORMS.md", "Fields: name.\n")
        out.wait_for(
            clock
            + r"(added|updated) tools/skills/pdf/references/FORMS\.md skill file skill://pdf/references/FORMS\.md"
        )

        write(tools / "skills" / "pdf" / "SKILL.md", BROKEN_SKILL)
        out.wait_for(
            clock + r"failed tools/skills/pdf/SKILL\.md:2 \(still serving skill pdf\) SkillError: name 'PDF'"
        )

        (tools / "prompts" / "hello.md").unlink()
        out.wait_for(clock + r"removed tools/prompts/hello\.md prompt hello$")
        out.wait_for(clock + r"prompts changed: -hello \(1 prompt\)$")

        process.send_signal(signal.SIGINT)
        out.wait_for(
            r"^live at exit: 1 tool, 1 prompt, 1 resource, 1 skill from 5 files in tools \(2 files failed\)$"
        )
        out.wait_for(
            r"^  failed tools/prompts/greet\.md:4 FileComponentError: .*\(still serving the last good prompt greet\)$"
        )
        out.wait_for(r"^stopped watching$")
        assert process.wait(timeout=DEADLINE) == 0
    stderr = process.stderr.read() if process.stderr else ""
    assert "Traceback" not in stderr
