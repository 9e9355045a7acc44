"""``tool-loader call`` answering a tool's context: progress, logs, questions on the terminal, clear refusals."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # pexpect ships no type hints
from support import cli_env, run_cli, write

DEADLINE = 30.0

TOOLS = {
    "steps.py": '''
from loader import ToolContext, tool


@tool(context=True)
def steps(tool_context: ToolContext) -> str:
    """Progress and logs."""
    tool_context.report_progress(1, 2, "halfway")
    tool_context.log("info", "a note", {"n": 1})
    tool_context.log("error", "a problem")
    tool_context.report_progress(2, 2, "done")
    return "finished"
''',
    "signup.py": '''
import time

from loader import ToolContext, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name"},
        "age": {"type": "integer", "default": 30},
        "plan": {"type": "string", "enum": ["free", "pro"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        "agree": {"type": "boolean"},
    },
    "required": ["name", "plan", "agree"],
}


@tool(context=True)
def signup(tool_context: ToolContext) -> dict:
    """Ask the user to sign up, with a progress bar around the question."""
    tool_context.report_progress(1, 3, "preparing")
    time.sleep(0.2)
    answer = tool_context.ask_user("Sign up for the newsletter?", SCHEMA)
    tool_context.report_progress(3, 3, "signed up")
    return {"action": str(answer.action), "content": answer.content}
''',
    "oracle.py": '''
from loader import ToolContext, tool


@tool(context=True)
async def oracle(tool_context: ToolContext) -> str:
    """Ask the model."""
    return (await tool_context.aask_model("Anything?", max_tokens=5)).text
''',
    "media.py": '''
from loader import ToolResult, tool


@tool
def media() -> ToolResult:
    """Audio and an embedded resource."""
    return {
        "toolUseId": "",
        "status": "success",
        "content": [
            {"audio": {"format": "wav", "source": {"bytes": b"RIFF0000"}}},
            {"resource": {"uri": "test://notes", "mimeType": "text/plain", "text": "some notes"}},
        ],
    }
''',
}


def call(tools: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tool-loader call`` with stdin that is no terminal (a pipe with nothing in it)."""
    return run_cli("call", *args, "--dir", str(tools), cwd=cwd)


def folder(tmp_path: Path) -> Path:
    tools = tmp_path / "tools"
    for name, source in TOOLS.items():
        write(tools / name, source)
    return tools


def test_progress_and_logs_go_to_stderr_line_by_line_and_the_result_alone_to_stdout(tmp_path: Path) -> None:
    done = call(folder(tmp_path), "steps", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "finished\n"), done.stderr
    lines = done.stderr.splitlines()
    assert [line for line in lines if line.startswith(("progress", "log"))] == [
        "progress 1/2 halfway",
        'log info: a note {"n": 1}',
        "log error: a problem",
        "progress 2/2 done",
    ]


def test_without_a_terminal_a_question_is_a_clear_error(tmp_path: Path) -> None:
    done = call(folder(tmp_path), "signup", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == (
        "Error: ContextUnavailableError - cannot ask the user: there is no terminal to ask on "
        "(stdin is not a terminal)\n"
    )


def test_a_question_to_a_model_is_a_clear_error(tmp_path: Path) -> None:
    done = call(folder(tmp_path), "oracle", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith(
        "Error: ContextUnavailableError - cannot ask the model: tool-loader call has no model"
    )


def test_audio_and_resources_are_shown_in_the_result(tmp_path: Path) -> None:
    done = call(folder(tmp_path), "media", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        0,
        "[audio wav, 8 bytes]\n[resource test://notes (text/plain)]\nsome notes\n",
    )


def test_questions_are_asked_on_the_terminal_field_by_field(tmp_path: Path) -> None:
    tools = folder(tmp_path)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "loader", "call", "signup", "--dir", str(tools)],
        cwd=str(tmp_path),
        env={**cli_env(), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=DEADLINE,
    )
    try:
        child.expect("preparing")  # the progress bar, drawn before the question
        child.expect(r"Sign up for the newsletter\?")
        child.expect(r"\[a\]nswer, \[d\]ecline or \[c\]ancel \[a\]: ")
        child.sendline("")
        child.expect(r"name \(Your name\): ")
        child.sendline("")  # required: asked again
        child.expect("an answer is needed")
        child.expect(r"name \(Your name\): ")
        child.sendline("Ada")
        child.expect(r"age \(optional\) \[30\]: ")
        child.sendline("")  # the default
        child.expect(r"plan \(one of free, pro\): ")
        child.sendline("gold")
        child.expect("choose one of free, pro")
        child.sendline("pro")
        child.expect(r"tags \(any of a, b, c, comma-separated; optional\): ")
        child.sendline("a, c")
        child.expect(r"agree: ")
        child.sendline("yes")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    output = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before.replace("\r\n", "\n"))
    assert '"action": "accept"' in output
    assert '"name": "Ada"' in output and '"age": 30' in output and '"plan": "pro"' in output
    assert '"tags": [\n      "a",\n      "c"\n    ]' in output and '"agree": true' in output


def test_declining_on_the_terminal(tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "loader", "call", "signup", "--dir", str(folder(tmp_path))],
        cwd=str(tmp_path),
        env=cli_env(),
        encoding="utf-8",
        timeout=DEADLINE,
    )
    try:
        child.expect(r"\[c\]ancel \[a\]: ")
        child.sendline("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert '"action": "decline"' in child.before and '"content": null' in child.before
