"""``tool-loader call``'s side of a tool's context: a progress bar, log lines, questions on the terminal.

Everything goes to stderr (stdout carries the result alone). On a terminal,
progress is a bar; otherwise one plain line per update. A question to the user
is asked on the terminal, field by field; without a terminal on stdin (a
script, a pipe) the tool gets a clear error instead, as it does for a question
to a model, which ``call`` has none of.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ..context import messages as msg
from ..context.handlers import ContextHandlers
from ..errors import ContextUnavailableError

__all__ = ["TerminalContextHandlers"]

_LEVEL_STYLES = {
    msg.LogLevel.DEBUG: "dim",
    msg.LogLevel.INFO: "cyan",
    msg.LogLevel.NOTICE: "cyan",
    msg.LogLevel.WARNING: "yellow",
}
_NO_TERMINAL = "there is no terminal to ask on (stdin is not a terminal)"
_NO_MODEL = (
    "tool-loader call has no model to ask; call the tool from an MCP client or an agent that can answer"
)
_NO_ROOTS = "tool-loader call has no client roots; call the tool from an MCP client that has some"
_YES = ("y", "yes", "true", "1")
_NO = ("n", "no", "false", "0")


class _Cancelled(Exception):
    """The person ended the input (Ctrl-D)."""


class TerminalContextHandlers(ContextHandlers):
    """Progress, logs and questions of one ``tool-loader call``, on the terminal."""

    def __init__(
        self, console: Console, *, stdin: TextIO | None = None, interactive: bool | None = None
    ) -> None:
        self._console = console
        self._stdin = stdin if stdin is not None else sys.stdin
        self._interactive = self._stdin.isatty() if interactive is None else interactive
        self._lock = threading.RLock()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    @property
    def capabilities(self) -> frozenset[msg.ContextCapability]:
        return frozenset({msg.ContextCapability.ASK_USER}) if self._interactive else frozenset()

    # -- progress and logs -----------------------------------------------------------------
    def progress(self, update: msg.ProgressUpdate) -> None:
        with self._lock:
            if not self._console.is_terminal:
                total = f"/{update.total:g}" if update.total is not None else ""
                message = f" {update.message}" if update.message else ""
                self._console.print(
                    f"progress {update.progress:g}{total}{message}", markup=False, highlight=False
                )
                return
            if self._bar is None:
                self._bar = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    console=self._console,
                )
                self._task = self._bar.add_task(escape(update.message or ""), total=update.total)
                self._bar.start()
            assert self._task is not None
            fields: dict[str, Any] = {"completed": update.progress, "total": update.total}
            if update.message is not None:
                fields["description"] = escape(update.message)
            self._bar.update(self._task, **fields)

    def log(self, entry: msg.LogEntry) -> None:
        line = f"log {entry.level.value}: {entry.message}"
        if entry.data is not None:
            line += " " + json.dumps(entry.data, default=repr, ensure_ascii=False)
        with self._lock:
            self._console.print(
                line,
                markup=False,
                highlight=False,
                soft_wrap=True,
                style=_LEVEL_STYLES.get(entry.level, "red"),
            )

    def close(self) -> None:
        """Leave the progress bar as it last was."""
        with self._lock:
            if self._bar is not None:
                self._bar.stop()

    # -- questions -------------------------------------------------------------------------
    def ask_user(self, question: msg.UserQuestion) -> msg.UserAnswer:
        if not self._interactive:
            raise ContextUnavailableError(msg.ContextCapability.ASK_USER, _NO_TERMINAL)
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
            try:
                return self._interview(question)
            finally:
                if self._bar is not None:
                    self._bar.start()

    def ask_model(self, question: msg.ModelQuestion) -> msg.ModelAnswer:
        raise ContextUnavailableError(msg.ContextCapability.ASK_MODEL, _NO_MODEL)

    def list_roots(self, question: msg.RootsQuestion) -> msg.RootsAnswer:
        raise ContextUnavailableError(msg.ContextCapability.LIST_ROOTS, _NO_ROOTS)

    def _interview(self, question: msg.UserQuestion) -> msg.UserAnswer:
        console = self._console
        console.print(f"[bold]{escape(question.message)}[/]")
        try:
            choice = self._read("[a]nswer, [d]ecline or [c]ancel", "a", lambda text: _choice(text))
            if choice is not msg.AnswerAction.ACCEPT:
                return msg.UserAnswer(choice)
            schema = question.schema
            required = set(schema.get("required") or ())
            content: dict[str, Any] = {}
            for name, field in (schema.get("properties") or {}).items():
                value = self._field(name, field if isinstance(field, Mapping) else {}, name in required)
                if value is not _SKIP:
                    content[name] = value
        except _Cancelled:
            console.print("[dim](cancelled)[/]")
            return msg.UserAnswer(msg.AnswerAction.CANCEL)
        return msg.UserAnswer(msg.AnswerAction.ACCEPT, content)

    def _field(self, name: str, field: Mapping[str, Any], required: bool) -> Any:
        label = str(field.get("title") or name)
        hints = [str(field["description"])] if field.get("description") else []
        options = _options(field)
        if options:
            hints.append(
                "one of " + ", ".join(options)
                if field.get("type") != "array"
                else "any of " + ", ".join(options) + ", comma-separated"
            )
        if not required:
            hints.append("optional")
        default = field.get("default", _SKIP)
        shown_default = None if default is _SKIP else json.dumps(default)
        prompt = label + (f" ({'; '.join(hints)})" if hints else "")

        def parse(text: str) -> Any:
            if not text:
                if default is not _SKIP:
                    return default
                if not required:
                    return _SKIP
                raise ValueError("an answer is needed")
            return _parse(text, field)

        return self._read(prompt, shown_default, parse)

    def _read(self, prompt: str, default: str | None, parse: Callable[[str], Any]) -> Any:
        """Ask until ``parse`` accepts the answer; Ctrl-D cancels."""
        suffix = " " + escape(f"[{default}]") if default is not None else ""
        while True:
            self._console.print(f"{escape(prompt)}{suffix}: ", end="", highlight=False)
            line = self._stdin.readline()
            if not line:
                self._console.print()
                raise _Cancelled
            text = line.strip()
            try:
                return parse(text)
            except ValueError as exc:
                self._console.print(f"[red]{escape(str(exc))}[/]")


class _Skip:
    """An optional field left empty."""


_SKIP: Any = _Skip()


def _choice(text: str) -> msg.AnswerAction:
    picked = {
        "": msg.AnswerAction.ACCEPT,
        "a": msg.AnswerAction.ACCEPT,
        "d": msg.AnswerAction.DECLINE,
        "c": msg.AnswerAction.CANCEL,
    }
    found = picked.get(text.lower()[:1] if text else "")
    if found is None:
        raise ValueError("type a, d or c")
    return found


def _options(field: Mapping[str, Any]) -> list[str]:
    """The values a field allows: its enum, or its ``oneOf``/``anyOf`` constants (its items' for arrays)."""
    source = (
        field.get("items")
        if field.get("type") == "array" and isinstance(field.get("items"), Mapping)
        else field
    )
    assert isinstance(source, Mapping)
    if isinstance(source.get("enum"), list):
        return [str(value) for value in source["enum"]]
    for key in ("oneOf", "anyOf"):
        branches = source.get(key)
        if isinstance(branches, list):
            return [
                f"{branch['const']} ({branch['title']})" if "title" in branch else str(branch["const"])
                for branch in branches
                if isinstance(branch, Mapping) and "const" in branch
            ]
    return []


def _parse(text: str, field: Mapping[str, Any]) -> Any:
    """The answer typed for ``field`` as the value its schema's type wants."""
    kind = field.get("type")
    if kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("answer yes or no")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number is needed") from None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError("a number is needed") from None
    allowed = [option.split(" (", 1)[0] for option in _options(field)]
    if kind == "array":
        values = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [value for value in values if allowed and value not in allowed]
        if wrong:
            raise ValueError(f"not among the choices: {', '.join(wrong)}")
        return values
    if allowed and text not in allowed:
        raise ValueError(f"choose one of {', '.join(allowed)}")
    return text
