"""A tool's context calls across the worker pipe: the worker asks, the loader's side answers.

Self-contained on purpose (the rest of the isolation package carries it with
two small hooks): a call message carries ``"context"`` (the capabilities of the
caller's handlers) when the caller gave handlers; the worker then gives the tool
``PipeContextHandlers``, which send ``{"context": request}`` on the call's pipe
and block until the loader sends ``{"context_reply": reply}``. The loader reads
these requests in the same loop that reads the call's stream events and its
result, and answers each with ``answer_request``. The worker serves one call at
a time, so a reply can only be for the request just sent.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..context.codec import (
    answer_from_json,
    answer_to_json,
    entry_from_json,
    entry_to_json,
    question_from_json,
    question_to_json,
    update_from_json,
    update_to_json,
)
from ..context.handlers import CONTEXT_HANDLERS_KEY, ContextHandlers
from ..context.messages import Answer, ContextCapability, LogEntry, ProgressUpdate, Question
from ..errors import ContextAnswerError, ContextUnavailableError, InputRequired
from .messages import Message
from .protocol import Channel, encode_value

__all__ = [
    "REPLY",
    "REQUEST",
    "PipeContextHandlers",
    "answer_request",
    "context_offer",
    "install_pipe_handlers",
]

REQUEST = "context"
REPLY = "context_reply"


def context_offer(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a call message says about the caller's handlers (None when it gave none)."""
    handlers = (state or {}).get(CONTEXT_HANDLERS_KEY)
    if not isinstance(handlers, ContextHandlers):
        return None
    return {"capabilities": sorted(capability.value for capability in handlers.capabilities)}


def answer_request(state: dict[str, Any] | None, request: dict[str, Any]) -> dict[str, Any]:
    """Serve one context request of a worker's tool with the caller's handlers; the reply to send back.

    Whatever the handlers raise travels back as data and is raised again in the
    tool, so a tool sees the same exceptions in both isolation modes.
    """
    handlers = (state or {}).get(CONTEXT_HANDLERS_KEY)
    if not isinstance(handlers, ContextHandlers):
        handlers = ContextHandlers()
    try:
        value = _serve(handlers, request)
    except InputRequired:
        return {REPLY: {"raise": "input_required"}}
    except ContextUnavailableError as exc:
        return {REPLY: {"raise": "unavailable", "capability": exc.capability, "reason": exc.reason}}
    except BaseException as exc:  # the handlers' failure, reported to the tool as a bad answer
        return {REPLY: {"raise": "answer", "message": f"{type(exc).__name__}: {exc}"}}
    return {REPLY: {"ok": value}}


def _serve(handlers: ContextHandlers, request: dict[str, Any]) -> Any:
    kind = request.get("kind")
    if kind == "progress":
        handlers.progress(update_from_json(request["update"]))
        return None
    if kind == "log":
        handlers.log(entry_from_json(request["entry"]))
        return None
    if kind == "ask":
        questions = [question_from_json(item) for item in request["questions"]]
        return [encode_value(answer_to_json(answer)) for answer in handlers.ask(questions)]
    raise ValueError(f"unknown context request {kind!r}")


class PipeContextHandlers(ContextHandlers):
    """In a worker: every context call goes to the loader over the call's pipe and waits for the answer.

    The async forms block too: the worker runs this one call only, and the
    pipe carries one exchange at a time.
    """

    def __init__(self, channel: Channel, offer: dict[str, Any]) -> None:
        self._channel = channel
        self._capabilities = frozenset(
            ContextCapability(value)
            for value in offer.get("capabilities", ())
            if value in ContextCapability.__members__.values()
        )
        self._lock = threading.Lock()

    @property
    def capabilities(self) -> frozenset[ContextCapability]:
        return self._capabilities

    def progress(self, update: ProgressUpdate) -> None:
        self._exchange({"kind": "progress", "update": update_to_json(update)})

    def log(self, entry: LogEntry) -> None:
        self._exchange({"kind": "log", "entry": entry_to_json(entry, encode_value)})

    def ask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        answers = self._exchange({"kind": "ask", "questions": [question_to_json(q) for q in questions]})
        return tuple(answer_from_json(item) for item in answers)

    async def aprogress(self, update: ProgressUpdate) -> None:
        self.progress(update)

    async def alog(self, entry: LogEntry) -> None:
        self.log(entry)

    async def aask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        return self.ask(questions)

    def _exchange(self, request: dict[str, Any]) -> Any:
        with self._lock:
            self._channel.send({REQUEST: request})
            message = self._channel.receive()
        reply = message.get(REPLY)
        if not isinstance(reply, dict):
            raise ContextAnswerError(f"the loader answered a context request with {sorted(message)}")
        failure = reply.get("raise")
        if failure == "input_required":
            raise InputRequired
        if failure == "unavailable":
            raise ContextUnavailableError(str(reply.get("capability")), str(reply.get("reason")))
        if failure is not None:
            raise ContextAnswerError(str(reply.get("message")))
        return reply.get("ok")


def install_pipe_handlers(channel: Channel, message: Message, state: dict[str, Any]) -> None:
    """Give a worker call's tool the pipe handlers, when its caller gave handlers."""
    offer = message.get(REQUEST)
    if isinstance(offer, dict):
        state[CONTEXT_HANDLERS_KEY] = PipeContextHandlers(channel, offer)
