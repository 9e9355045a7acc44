"""What crosses between a tool and its caller during a call: progress, log entries, questions, answers.

Plain frozen values, so any caller (an MCP session, a terminal, an agent, a
worker pipe) can carry them without knowing the tool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from ..types import JSONSchema

__all__ = [
    "Answer",
    "AnswerAction",
    "ContextCapability",
    "LogEntry",
    "LogLevel",
    "ModelAnswer",
    "ModelMessage",
    "ModelQuestion",
    "ProgressUpdate",
    "Question",
    "Root",
    "RootsAnswer",
    "RootsQuestion",
    "UserAnswer",
    "UserQuestion",
]


class ContextCapability(StrEnum):
    """A kind of question a caller may be able to answer (progress and logs are always accepted)."""

    ASK_USER = "ask_user"
    ASK_MODEL = "ask_model"
    LIST_ROOTS = "list_roots"


class LogLevel(StrEnum):
    """The syslog severities (RFC 5424) MCP uses, from the least to the most severe."""

    DEBUG = "debug"
    INFO = "info"
    NOTICE = "notice"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"
    ALERT = "alert"
    EMERGENCY = "emergency"

    @classmethod
    def parse(cls, value: LogLevel | str) -> LogLevel:
        """The level named by ``value`` (any case).

        Raises:
            ValueError: Naming the accepted levels.
        """
        if isinstance(value, LogLevel):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            names = ", ".join(level.value for level in cls)
            raise ValueError(f"log level must be one of {names}, got {value!r}") from None

    @property
    def rank(self) -> int:
        """0 for debug up to 7 for emergency."""
        return list(LogLevel).index(self)


@dataclass(frozen=True, slots=True)
class ProgressUpdate:
    """How far a call has got: ``progress`` out of ``total`` (when known), with an optional message."""

    progress: float
    total: float | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        for name, value in (("progress", self.progress), ("total", self.total)):
            if value is None and name == "total":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"report_progress: {name} must be a finite number, got {value!r}")
        if self.message is not None and not isinstance(self.message, str):
            raise ValueError(f"report_progress: message must be a string, got {type(self.message).__name__}")

    @property
    def fraction(self) -> float | None:
        """``progress / total`` clamped to 0..1, or None without a positive total."""
        if self.total is None or self.total <= 0:
            return None
        return min(1.0, max(0.0, self.progress / self.total))


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One log line a tool sends to its caller; ``logger`` is the tool's name."""

    level: LogLevel
    message: str
    data: Any = None
    logger: str | None = None


class AnswerAction(StrEnum):
    """How the user answered: gave the content, said no, or dismissed the question."""

    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


@dataclass(frozen=True, slots=True)
class UserQuestion:
    """A question for the user: a message and the JSON Schema (an object) of the answer."""

    key: str
    message: str
    schema: JSONSchema


@dataclass(frozen=True, slots=True)
class UserAnswer:
    """The user's answer: ``content`` (matching the question's schema) when accepted, else None."""

    action: AnswerAction
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action is AnswerAction.ACCEPT


@dataclass(frozen=True, slots=True)
class ModelMessage:
    """One turn of a conversation handed to the model."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class ModelQuestion:
    """A request for the caller's model to complete a conversation."""

    key: str
    messages: tuple[ModelMessage, ...]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    """The model's reply: its text (empty for a reply of another kind), which model, why it stopped."""

    text: str
    model: str | None = None
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True)
class RootsQuestion:
    """A request for the caller's roots (the folders or URIs it works in)."""

    key: str


@dataclass(frozen=True, slots=True)
class Root:
    """One of the caller's roots: a URI (``file:///...``) and an optional display name."""

    uri: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class RootsAnswer:
    """The caller's roots."""

    roots: tuple[Root, ...]


Question = UserQuestion | ModelQuestion | RootsQuestion
"""Anything a tool may ask its caller."""

Answer = UserAnswer | ModelAnswer | RootsAnswer
"""The answer to a ``Question`` of the matching kind."""
