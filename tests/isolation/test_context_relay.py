"""A tool's context calls from a worker process reach the caller's handlers, with the same outcomes as in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import MakeLoader, write

from loader import (
    AnswerAction,
    ContextHandlers,
    ContextUnavailableError,
    LogEntry,
    LogLevel,
    ProgressUpdate,
    UserAnswer,
    UserQuestion,
)

TOOL = '''
from loader import ToolContext, tool


@tool(context=True)
def survey(tool_context: ToolContext) -> str:
    """Progress, a log entry with bytes in its data, a question, and what the caller can answer."""
    tool_context.report_progress(1, 3, "one")
    tool_context.log("notice", "raw", {"blob": b"\\x00\\x01"})
    can = [tool_context.can_ask_user, tool_context.can_ask_model]
    answer = tool_context.ask_user("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"{can} {answer.action} {answer.content}"
'''


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Caller(ContextHandlers):
    def __init__(self, refuse: bool = False) -> None:
        self.seen: list[Any] = []
        self.refuse = refuse

    def progress(self, update: ProgressUpdate) -> None:
        self.seen.append(update)

    def log(self, entry: LogEntry) -> None:
        self.seen.append(entry)

    def ask_user(self, question: UserQuestion) -> UserAnswer:
        self.seen.append(question.message)
        if self.refuse:
            raise ContextUnavailableError("ask_user", "the user stepped out")
        return UserAnswer(AnswerAction.ACCEPT, {"name": "Ada"})


def test_the_same_calls_and_outcomes_in_both_isolation_modes(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "survey.py", TOOL)
    registry = make_loader(tools_dir, watch=False).registry
    caller = Caller()
    result = registry.invoke("survey", {}, context_handlers=caller)
    assert result["content"][0]["text"] == "[True, False] accept {'name': 'Ada'}", result
    assert caller.seen == [
        ProgressUpdate(1, 3, "one"),
        LogEntry(LogLevel.NOTICE, "raw", {"blob": b"\x00\x01"}, "survey"),
        "Name?",
    ]
    refused = registry.invoke("survey", {}, context_handlers=Caller(refuse=True))
    assert refused["status"] == "error"
    assert refused["content"][0]["text"] == (
        "Error: ContextUnavailableError - cannot ask the user: the user stepped out"
    )
    nobody = registry.invoke("survey", {})
    assert nobody["content"][0]["text"] == (
        "Error: ContextUnavailableError - cannot ask the user: nobody answers questions in this call "
        "(its caller gave no context handlers)"
    )
