"""``ContextHandlers``: the caller's side of a tool context, and how a call carries it to the tool.

A caller puts its handlers in the call's invocation state under
``CONTEXT_HANDLERS_KEY`` (``registry.invoke(..., context_handlers=h)`` does
that); the state already crosses every layer between a caller and a tool (the
call runner, its threads, a worker process's pipe), so nothing in between has
to know about contexts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..errors import ContextUnavailableError
from .messages import (
    Answer,
    ContextCapability,
    LogEntry,
    LogLevel,
    ModelAnswer,
    ModelQuestion,
    ProgressUpdate,
    Question,
    RootsAnswer,
    RootsQuestion,
    UserAnswer,
    UserQuestion,
)

__all__ = ["CONTEXT_HANDLERS_KEY", "ContextHandlers", "handlers_in", "with_handlers", "without_handlers"]

CONTEXT_HANDLERS_KEY: Final = "tool_context_handlers"
"""The invocation-state key a call's ``ContextHandlers`` travel under."""

logger = logging.getLogger("loader.tool_context")

_PYTHON_LEVELS: Final = {
    LogLevel.DEBUG: logging.DEBUG,
    LogLevel.INFO: logging.INFO,
    LogLevel.NOTICE: logging.INFO,
    LogLevel.WARNING: logging.WARNING,
    LogLevel.ERROR: logging.ERROR,
    LogLevel.CRITICAL: logging.CRITICAL,
    LogLevel.ALERT: logging.CRITICAL,
    LogLevel.EMERGENCY: logging.CRITICAL,
}

_NOBODY = "nobody answers questions in this call (its caller gave no context handlers)"


class ContextHandlers:
    """Where a tool's progress and logs go and who answers its questions; override what you serve.

    The defaults: progress and log entries go to Python logging (logger
    ``loader.tool_context``), questions are refused with
    ``ContextUnavailableError``. Synchronous methods are called on the tool's
    own thread (any thread); the ``a``-prefixed ones on the tool's event loop,
    and by default they call the synchronous ones (questions on a worker
    thread, so an answer that takes a while never holds up the loop).
    ``capabilities`` says which questions are served: by default, those whose
    method a subclass overrides.
    """

    @property
    def capabilities(self) -> frozenset[ContextCapability]:
        """The kinds of question answered here."""
        served = {
            ContextCapability.ASK_USER: "ask_user",
            ContextCapability.ASK_MODEL: "ask_model",
            ContextCapability.LIST_ROOTS: "list_roots",
        }
        mine = type(self)
        return frozenset(
            capability
            for capability, method in served.items()
            if getattr(mine, method) is not getattr(ContextHandlers, method)
        )

    # -- notifications ----------------------------------------------------------------------
    def progress(self, update: ProgressUpdate) -> None:
        """A tool reported progress."""
        logger.debug(
            "progress=<%s>, total=<%s> | %s", update.progress, update.total, update.message or "progress"
        )

    def log(self, entry: LogEntry) -> None:
        """A tool sent a log entry."""
        logger.log(_PYTHON_LEVELS[entry.level], "tool_name=<%s> | %s", entry.logger, entry.message)

    async def aprogress(self, update: ProgressUpdate) -> None:
        self.progress(update)

    async def alog(self, entry: LogEntry) -> None:
        self.log(entry)

    # -- questions ---------------------------------------------------------------------------
    def ask_user(self, question: UserQuestion) -> UserAnswer:
        """Ask the user ``question.message``; the answer's content matches ``question.schema``."""
        raise ContextUnavailableError(ContextCapability.ASK_USER, _NOBODY)

    def ask_model(self, question: ModelQuestion) -> ModelAnswer:
        """Have the caller's model complete ``question.messages``."""
        raise ContextUnavailableError(ContextCapability.ASK_MODEL, _NOBODY)

    def list_roots(self, question: RootsQuestion) -> RootsAnswer:
        """The caller's roots."""
        raise ContextUnavailableError(ContextCapability.LIST_ROOTS, _NOBODY)

    def ask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        """Answer several questions, in order (callers that can ask at once override this)."""
        answers: list[Answer] = []
        for question in questions:
            if isinstance(question, UserQuestion):
                answers.append(self.ask_user(question))
            elif isinstance(question, ModelQuestion):
                answers.append(self.ask_model(question))
            else:
                answers.append(self.list_roots(question))
        return tuple(answers)

    async def aask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        """``ask`` from a tool's event loop: on a worker thread, unless nothing here answers anything."""
        if not self.capabilities:
            return self.ask(questions)
        return await asyncio.to_thread(self.ask, questions)


DEFAULT_HANDLERS: Final = ContextHandlers()
"""What a tool's context uses when its caller gave none."""


def handlers_in(state: Mapping[str, Any] | None) -> ContextHandlers:
    """The handlers a call's invocation state carries (the defaults when it carries none)."""
    found = (state or {}).get(CONTEXT_HANDLERS_KEY)
    return found if isinstance(found, ContextHandlers) else DEFAULT_HANDLERS


def without_handlers(state: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` minus the handlers entry (for tools that take the state as keyword arguments)."""
    return {key: value for key, value in state.items() if key != CONTEXT_HANDLERS_KEY}


def with_handlers(state: dict[str, Any] | None, handlers: ContextHandlers | None) -> dict[str, Any] | None:
    """``state`` carrying ``handlers`` (a copy: the caller's dict is never changed); as is without them."""
    if handlers is None:
        return state
    return {**(state or {}), CONTEXT_HANDLERS_KEY: handlers}
