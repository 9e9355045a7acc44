"""The tool context over MCP: a ``tools/call``'s progress, logs and questions, in either protocol era.

* Progress becomes ``notifications/progress`` (when the client sent a progress
  token); log entries ``notifications/message`` on the call's own stream, at
  the levels the client asked for (``logging/setLevel`` in the handshake era,
  the request's ``_meta`` log level in 2026-07-28).
* Questions: a handshake-era session sends ``elicitation/create``,
  ``sampling/createMessage`` or ``roots/list`` to the client mid-call
  (``SessionContextHandlers``). A 2026-07-28 call ends with an
  ``InputRequiredResult`` instead and runs again when the client retries with
  the answers (``RoundContextHandlers``): the tool asks the same questions in
  the same order, and each is answered from the retry's ``inputResponses`` or
  from the ``requestState`` earlier rounds left (sealed by the SDK's
  ``RequestStateBoundary``, so a client cannot forge it).
* A question the client did not declare the capability for fails in the tool
  with ``ContextUnavailableError``; a 2026-07-28 call whose tool then fails is
  refused with -32021 (``MissingRequiredClientCapabilityError``).

A synchronous tool runs on its own thread and waits there for the loop to
deliver each message; the event loop itself never waits for a tool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, NoReturn

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.connection import allowed_log_levels
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..context.handlers import ContextHandlers
from ..context.messages import Answer, ContextCapability, LogEntry, LogLevel, ProgressUpdate, Question
from ..errors import ContextAnswerError, ContextUnavailableError, InputRequired
from ..types import ToolResult
from .context_wire import (
    answer_from,
    capability_of,
    client_capability_name,
    declares,
    input_request,
    log_params,
    question_digest,
    required_capabilities,
)

__all__ = [
    "LogLevels",
    "McpContextHandlers",
    "RoundContextHandlers",
    "SessionContextHandlers",
    "call_context",
]

_STATE_VERSION = 1
_RESULT_TYPES: dict[ContextCapability, type[types.Result]] = {
    ContextCapability.ASK_USER: types.ElicitResult,
    ContextCapability.ASK_MODEL: types.CreateMessageResult,
    ContextCapability.LIST_ROOTS: types.ListRootsResult,
}
_WAIT_SLICE = 0.25
"""Seconds a tool thread waits on the loop at a time, so a call stopped at its deadline notices."""


class LogLevels:
    """The level each handshake-era connection asked for with ``logging/setLevel``.

    Kept per connection, keyed by its ``initialize`` parameters (one object per
    connection) and dropped with them. A connection that never asked gets every level.
    """

    def __init__(self) -> None:
        self._levels: dict[int, LogLevel] = {}

    def set(self, owner: object | None, level: LogLevel) -> None:
        if owner is None:
            return
        key = id(owner)
        if key not in self._levels:
            weakref.finalize(owner, self._levels.pop, key, None)
        self._levels[key] = level

    def allowed(self, owner: object | None) -> frozenset[LogLevel]:
        floor = self._levels.get(id(owner)) if owner is not None else None
        return frozenset(level for level in LogLevel if floor is None or level.rank >= floor.rank)


class McpContextHandlers(ContextHandlers):
    """Progress and logs of one ``tools/call``; the era's subclass answers questions."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], allowed_levels: frozenset[LogLevel]) -> None:
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._allowed_levels = allowed_levels
        self._tasks: set[asyncio.Task[Any]] = set()
        self._waiting: set[concurrent.futures.Future[Any]] = set()
        self._declared = frozenset(
            capability
            for capability in ContextCapability
            if declares(ctx.session.client_capabilities, capability)
        )
        self.missing: ContextUnavailableError | None = None
        """The refusal of a question the client could not be asked, if the tool asked one."""

    @property
    def capabilities(self) -> frozenset[ContextCapability]:
        return self._declared

    # -- notifications ----------------------------------------------------------------------
    def progress(self, update: ProgressUpdate) -> None:
        self._deliver(lambda: self._send_progress(update))

    async def aprogress(self, update: ProgressUpdate) -> None:
        await self._on_loop(self._send_progress(update))

    def log(self, entry: LogEntry) -> None:
        if entry.level in self._allowed_levels:
            self._deliver(lambda: self._send_log(entry))

    async def alog(self, entry: LogEntry) -> None:
        if entry.level in self._allowed_levels:
            await self._on_loop(self._send_log(entry))

    async def _send_progress(self, update: ProgressUpdate) -> None:
        await self._ctx.session.report_progress(update.progress, update.total, update.message)

    async def _send_log(self, entry: LogEntry) -> None:
        notification = types.LoggingMessageNotification(params=log_params(entry))
        await self._ctx.session.send_notification(notification, related_request_id=self._ctx.request_id)

    # -- the end of the call -----------------------------------------------------------------
    async def close(self) -> None:
        """Once the tool is done: deliver what it sent from the loop's thread; drop what it left waiting."""
        for future in list(self._waiting):
            future.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def round_result(self, result: ToolResult) -> dict[str, Any] | None:
        """The call's answer when it is not the tool's result (a round for input); may refuse the call.

        Raises:
            MCPError: The call must be refused.
        """
        return None

    # -- threads and the loop ----------------------------------------------------------------
    def _on_loop_thread(self) -> bool:
        return threading.get_ident() == self._loop_thread

    def _deliver(self, factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Send a notification from a tool's synchronous code, in order with the call's result."""
        if self._on_loop_thread():  # a synchronous tool run right on the loop: send once it yields
            task = self._loop.create_task(factory())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        self._wait(factory)

    def _wait(self, factory: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """Run ``factory()`` on the loop and wait for it on this (the tool's) thread."""
        future = asyncio.run_coroutine_threadsafe(factory(), self._loop)
        self._waiting.add(future)
        try:
            while True:
                try:
                    return future.result(timeout=_WAIT_SLICE)
                except concurrent.futures.TimeoutError:
                    continue
        finally:
            self._waiting.discard(future)

    async def _on_loop(self, coroutine: Awaitable[Any]) -> Any:
        """Await on the server's loop, whichever loop the tool awaits on."""
        if asyncio.get_running_loop() is self._loop:
            return await coroutine

        async def run() -> Any:
            return await coroutine

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run(), self._loop))

    def _refuse(self, capability: ContextCapability, reason: str) -> NoReturn:
        refusal = ContextUnavailableError(capability, reason)
        self.missing = refusal
        raise refusal

    def _undeclared(self, capability: ContextCapability) -> NoReturn:
        self._refuse(
            capability,
            f"the MCP client did not declare the {client_capability_name(capability)!r} capability",
        )


class SessionContextHandlers(McpContextHandlers):
    """Handshake era: each question is a request to the client, sent in the middle of the call."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], allowed_levels: frozenset[LogLevel]) -> None:
        super().__init__(ctx, allowed_levels)
        self._back_channel = ctx.session.can_send_request

    @property
    def capabilities(self) -> frozenset[ContextCapability]:
        return self._declared if self._back_channel else frozenset()

    def ask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        if self._on_loop_thread():
            capability = capability_of(questions[0]) if questions else ContextCapability.ASK_USER
            raise ContextUnavailableError(
                capability,
                "a synchronous tool running on the server's event loop cannot wait for the client's "
                "answer; make the tool async and await the a-prefixed method",
            )
        return self._wait(lambda: self._ask_all(questions))  # type: ignore[no-any-return]

    async def aask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        return await self._on_loop(self._ask_all(questions))  # type: ignore[no-any-return]

    async def _ask_all(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        for question in questions:
            if capability_of(question) not in self._declared:
                self._undeclared(capability_of(question))
        answers: list[Answer] = []
        for question in questions:
            answers.append(await self._ask_one(question))
        return tuple(answers)

    async def _ask_one(self, question: Question) -> Answer:
        capability = capability_of(question)
        request = input_request(question)
        metadata = ServerMessageMetadata(related_request_id=self._ctx.request_id)
        try:
            result = await self._ctx.session.send_request(
                request, _RESULT_TYPES[capability], metadata=metadata
            )
        except NoBackChannelError:
            self._refuse(capability, "this connection cannot carry a request back to the client")
        except MCPError as exc:
            raise ContextAnswerError(f"the client answered {request.method} with an error: {exc}") from None
        return answer_from(question, result)


class RoundContextHandlers(McpContextHandlers):
    """2026-07-28: questions end the round with an ``InputRequiredResult``; the retry brings the answers."""

    def __init__(
        self,
        ctx: ServerRequestContext[Any, Any],
        allowed_levels: frozenset[LogLevel],
        responses: Mapping[str, Any],
        recorded: Mapping[str, Any],
    ) -> None:
        super().__init__(ctx, allowed_levels)
        self._responses = responses
        self._recorded = recorded
        self._lock = threading.Lock()
        self.pending: dict[str, dict[str, Any]] = {}
        """The questions this round leaves for the client, as wire requests by key."""
        self.answered: dict[str, dict[str, Any]] = {}
        """Every answer this round used, with its question's digest (the next round's state)."""
        self.invalid: str | None = None

    def ask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        with self._lock:
            return self._answer(questions)

    async def aask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        with self._lock:
            return self._answer(questions)

    def _answer(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        answers: list[Answer] = []
        missing: list[Question] = []
        for question in questions:
            digest = question_digest(question)
            raw = self._raw_answer(question.key, digest)
            if raw is None:
                missing.append(question)
                continue
            try:
                answers.append(answer_from(question, raw))
            except ContextAnswerError as exc:
                self.invalid = str(exc)
                raise InputRequired from None  # the round is refused; the tool stops here
            self.answered[question.key] = {"q": digest, "a": raw}
        if not missing:
            return tuple(answers)
        for question in missing:
            if capability_of(question) not in self._declared:
                self._undeclared(capability_of(question))
        for question in missing:
            self.pending[question.key] = input_request(question).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
        raise InputRequired

    def _raw_answer(self, key: str, digest: str) -> Any:
        """The client's answer to this question: from this retry, else from an earlier round's state."""
        if key in self._responses:
            given = self._responses[key]
            return given.model_dump(by_alias=True, mode="json") if hasattr(given, "model_dump") else given
        recorded = self._recorded.get(key)
        if isinstance(recorded, Mapping) and recorded.get("q") == digest:
            return recorded.get("a")
        return None

    def round_result(self, result: ToolResult) -> dict[str, Any] | None:
        if self.invalid is not None:
            raise MCPError(code=INVALID_PARAMS, message=f"Invalid inputResponses: {self.invalid}")
        if self.missing is not None and result.get("status") == "error":
            capability = ContextCapability(self.missing.capability)
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message=str(self.missing),
                data=required_capabilities(capability),
            )
        if not self.pending:
            return None
        state = {"v": _STATE_VERSION, "answers": self.answered}
        return {
            "resultType": "input_required",
            "inputRequests": dict(self.pending),
            "requestState": json.dumps(state, separators=(",", ":")),
        }


def call_context(
    ctx: ServerRequestContext[Any, Any],
    params: types.CallToolRequestParams | types.GetPromptRequestParams,
    levels: LogLevels,
) -> McpContextHandlers:
    """The context handlers for one ``tools/call`` (or ``prompts/get``) in its protocol era.

    Raises:
        MCPError: A 2026-07-28 retry whose ``requestState`` is not one this server made.
    """
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return SessionContextHandlers(ctx, levels.allowed(ctx.session.client_params))
    allowed = frozenset(LogLevel(level) for level in allowed_log_levels(ctx.protocol_version, ctx.meta))
    return RoundContextHandlers(
        ctx, allowed, params.input_responses or {}, _recorded_answers(params.request_state)
    )


def _recorded_answers(state: str | None) -> Mapping[str, Any]:
    """The answers an earlier round recorded (``requestState`` arrives here already verified and opened)."""
    if state is None:
        return {}
    try:
        decoded = json.loads(state)
    except ValueError:
        decoded = None
    if not isinstance(decoded, dict) or decoded.get("v") != _STATE_VERSION:
        _bad_state()
    answers = decoded.get("answers")
    if not isinstance(answers, dict):
        _bad_state()
    return answers


def _bad_state() -> NoReturn:
    raise MCPError(code=INVALID_PARAMS, message="Invalid or expired requestState")
