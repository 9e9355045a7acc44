"""``ToolContext``: what a tool that asks for it (``@tool(context=True)``) may do during a call.

Every method has a synchronous form for synchronous tools and an ``a``-prefixed
``async`` form for ``async def`` tools. What each does depends on who called
the tool (an MCP client, ``tool-loader call``, a Strands agent, a Python
caller): the caller's ``ContextHandlers`` decide; see ``docs/tool-context.md``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict, TypeVar, Unpack

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel

from ..errors import ContextAnswerError
from ..types import JSONSchema, ToolUse
from . import messages as msg
from .handlers import CONTEXT_HANDLERS_KEY, ContextHandlers, handlers_in, without_handlers

__all__ = ["ModelOptions", "ToolContext"]

ModelMessages = str | Sequence["msg.ModelMessage | Mapping[str, Any] | str"]
"""A conversation for ``ask_model``: one user message, or turns as ``ModelMessage`` s, dicts or strings."""


class ModelOptions(TypedDict, total=False):
    """The keywords of ``ask_model``/``aask_model``, handed on to ``model_question``."""

    max_tokens: Required[int]
    system_prompt: str | None
    temperature: float | None
    key: str | None


@dataclass
class ToolContext:
    """Framework data injected into tools that ask for it, and the way back to the caller.

    Attributes:
        tool_use: The request being served.
        agent: The agent running the tool, or None outside an agent.
        invocation_state: Caller-provided state passed along with the call.
        context_handlers: The caller's handlers (by default those the invocation state carries).
    """

    tool_use: ToolUse
    agent: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    context_handlers: ContextHandlers | None = field(default=None, repr=False, compare=False)
    _numbers: itertools.count[int] = field(
        default_factory=lambda: itertools.count(1), init=False, repr=False, compare=False
    )

    @classmethod
    def for_call(cls, tool_use: ToolUse, state: dict[str, Any]) -> ToolContext:
        """The context of one call: the state's agent, and the state itself, minus the handlers it carries.

        Without handlers the tool shares the caller's state dict (what it writes there, the caller sees).
        """
        handlers = state.get(CONTEXT_HANDLERS_KEY)
        if isinstance(handlers, ContextHandlers):
            return cls(tool_use, state.get("agent"), without_handlers(state), handlers)
        return cls(tool_use, state.get("agent"), state)

    @property
    def handlers(self) -> ContextHandlers:
        """The caller's handlers for this call (defaults that only log when the caller gave none)."""
        if self.context_handlers is not None:
            return self.context_handlers
        return handlers_in(self.invocation_state)

    @property
    def can_ask_user(self) -> bool:
        """Whether this call's caller can put a question to a user."""
        return msg.ContextCapability.ASK_USER in self.handlers.capabilities

    @property
    def can_ask_model(self) -> bool:
        """Whether this call's caller can have a model answer."""
        return msg.ContextCapability.ASK_MODEL in self.handlers.capabilities

    @property
    def can_list_roots(self) -> bool:
        """Whether this call's caller can tell its roots."""
        return msg.ContextCapability.LIST_ROOTS in self.handlers.capabilities

    # -- progress and logs -------------------------------------------------------------------
    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the caller how far the call has got (``progress`` out of ``total``, when known)."""
        self.handlers.progress(msg.ProgressUpdate(progress, total, message))

    async def areport_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """``report_progress`` for ``async def`` tools."""
        await self.handlers.aprogress(msg.ProgressUpdate(progress, total, message))

    def log(self, level: msg.LogLevel | str, message: str, data: Any = None) -> None:
        """Send the caller a log entry (``level``: debug, info, notice, warning, error, critical, ...)."""
        self.handlers.log(self._entry(level, message, data))

    async def alog(self, level: msg.LogLevel | str, message: str, data: Any = None) -> None:
        """``log`` for ``async def`` tools."""
        await self.handlers.alog(self._entry(level, message, data))

    # -- questions ---------------------------------------------------------------------------
    def ask_user(
        self, message: str, schema: JSONSchema | type[BaseModel] | None = None, *, key: str | None = None
    ) -> msg.UserAnswer:
        """Ask the user; the answer's ``content`` matches ``schema`` (a JSON Schema object) when accepted.

        Raises:
            ContextUnavailableError: Nobody can be asked in this call.
            ContextAnswerError: The accepted content does not match ``schema``.
        """
        question = self.user_question(message, schema, key=key)
        return _checked_user_answer(question, self.handlers.ask((question,))[0])

    async def aask_user(
        self, message: str, schema: JSONSchema | type[BaseModel] | None = None, *, key: str | None = None
    ) -> msg.UserAnswer:
        """``ask_user`` for ``async def`` tools."""
        question = self.user_question(message, schema, key=key)
        return _checked_user_answer(question, (await self.handlers.aask((question,)))[0])

    def ask_model(self, messages: ModelMessages, **options: Unpack[ModelOptions]) -> msg.ModelAnswer:
        """Have the caller's model answer ``messages`` (a prompt, or a conversation).

        Raises:
            ContextUnavailableError: No model can be asked in this call.
        """
        question = self.model_question(messages, **options)
        return _expect(msg.ModelAnswer, self.handlers.ask((question,))[0])

    async def aask_model(self, messages: ModelMessages, **options: Unpack[ModelOptions]) -> msg.ModelAnswer:
        """``ask_model`` for ``async def`` tools."""
        question = self.model_question(messages, **options)
        return _expect(msg.ModelAnswer, (await self.handlers.aask((question,)))[0])

    def list_roots(self, *, key: str | None = None) -> tuple[msg.Root, ...]:
        """The caller's roots (the folders or URIs it works in)."""
        return _expect(msg.RootsAnswer, self.handlers.ask((self.roots_question(key=key),))[0]).roots

    async def alist_roots(self, *, key: str | None = None) -> tuple[msg.Root, ...]:
        """``list_roots`` for ``async def`` tools."""
        return _expect(msg.RootsAnswer, (await self.handlers.aask((self.roots_question(key=key),)))[0]).roots

    def ask(self, questions: Sequence[msg.Question]) -> tuple[msg.Answer, ...]:
        """Several questions at once (built with ``user_question``, ``model_question``, ``roots_question``).

        An MCP 2026-07-28 client gets them in one round; other callers answer
        them in order. The answers come in the order of the questions.
        """
        asked = tuple(questions)
        return _checked_answers(asked, self.handlers.ask(asked))

    async def aask(self, questions: Sequence[msg.Question]) -> tuple[msg.Answer, ...]:
        """``ask`` for ``async def`` tools."""
        asked = tuple(questions)
        return _checked_answers(asked, await self.handlers.aask(asked))

    # -- building questions ------------------------------------------------------------------
    def user_question(
        self, message: str, schema: JSONSchema | type[BaseModel] | None = None, *, key: str | None = None
    ) -> msg.UserQuestion:
        """A question for the user, for ``ask`` (``ask_user`` builds and asks one)."""
        if not isinstance(message, str) or not message:
            raise ValueError(f"ask_user: message must be a non-empty string, got {message!r}")
        return msg.UserQuestion(self._key(key, "ask_user"), message, _answer_schema(schema))

    def model_question(
        self,
        messages: ModelMessages,
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        key: str | None = None,
    ) -> msg.ModelQuestion:
        """A request for the model, for ``ask`` (``ask_model`` builds and asks one)."""
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"ask_model: max_tokens must be a positive integer, got {max_tokens!r}")
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise ValueError("ask_model: system_prompt must be a string")
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, (int, float))
        ):
            raise ValueError(f"ask_model: temperature must be a number, got {temperature!r}")
        return msg.ModelQuestion(
            self._key(key, "ask_model"), _conversation(messages), max_tokens, system_prompt, temperature
        )

    def roots_question(self, *, key: str | None = None) -> msg.RootsQuestion:
        """A request for the caller's roots, for ``ask``."""
        return msg.RootsQuestion(self._key(key, "list_roots"))

    # -- helpers -----------------------------------------------------------------------------
    def _key(self, key: str | None, kind: str) -> str:
        """The question's key: the given one, else the kind and the question's number in this call.

        A call that runs again for a new round (MCP 2026-07-28) asks the same
        questions in the same order, so numbered keys match across rounds.
        """
        if key is None:
            return f"{kind}-{next(self._numbers)}"
        if not isinstance(key, str) or not key:
            raise ValueError(f"{kind}: key must be a non-empty string, got {key!r}")
        return key

    def _entry(self, level: msg.LogLevel | str, message: str, data: Any) -> msg.LogEntry:
        if not isinstance(message, str):
            raise ValueError(f"log: message must be a string, got {type(message).__name__}")
        return msg.LogEntry(msg.LogLevel.parse(level), message, data, self.tool_use.get("name"))


def _answer_schema(schema: JSONSchema | type[BaseModel] | None) -> JSONSchema:
    """The answer's JSON Schema as an object schema (a pydantic model gives its own)."""
    if schema is None:
        return {"type": "object", "properties": {}}
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        schema = schema.model_json_schema()
    if not isinstance(schema, Mapping):
        raise ValueError(
            f"ask_user: schema must be a JSON Schema object (a dict) or a pydantic model, got {schema!r}"
        )
    result = dict(schema)
    if result.setdefault("type", "object") != "object" or not isinstance(
        result.get("properties", {}), Mapping
    ):
        raise ValueError('ask_user: schema must describe an object ({"type": "object", "properties": {...}})')
    result.setdefault("properties", {})
    Draft202012Validator.check_schema(result)
    return result


def _conversation(messages: ModelMessages) -> tuple[msg.ModelMessage, ...]:
    if isinstance(messages, str):
        return (msg.ModelMessage("user", messages),)
    turns: list[msg.ModelMessage] = []
    for index, turn in enumerate(messages):
        if isinstance(turn, msg.ModelMessage):
            turns.append(turn)
        elif isinstance(turn, str):
            turns.append(msg.ModelMessage("user", turn))
        elif isinstance(turn, Mapping) and turn.get("role") in ("user", "assistant"):
            text = turn.get("text", turn.get("content"))
            if not isinstance(text, str):
                raise ValueError(f"ask_model: messages[{index}] needs a text (or content) string")
            turns.append(msg.ModelMessage(turn["role"], text))
        else:
            raise ValueError(
                f"ask_model: messages[{index}] must be a string, a ModelMessage or "
                f'{{"role": "user" | "assistant", "text": ...}}, got {turn!r}'
            )
    if not turns:
        raise ValueError("ask_model: messages must not be empty")
    return tuple(turns)


_A = TypeVar("_A", msg.UserAnswer, msg.ModelAnswer, msg.RootsAnswer)


def _expect(kind: type[_A], answer: msg.Answer) -> _A:
    if not isinstance(answer, kind):
        raise ContextAnswerError(f"expected a {kind.__name__}, the caller answered {type(answer).__name__}")
    return answer


def _checked_user_answer(question: msg.UserQuestion, answer: msg.Answer) -> msg.UserAnswer:
    """The answer, once an accepted one is known to match the question's schema."""
    checked: msg.UserAnswer = _expect(msg.UserAnswer, answer)
    if not checked.accepted:
        return checked
    if not isinstance(checked.content, dict):
        raise ContextAnswerError(f"the answer to {question.key!r} was accepted without content")
    problems = sorted(
        Draft202012Validator(question.schema).iter_errors(checked.content), key=lambda e: list(e.path)
    )
    if problems:
        where = ", ".join(
            f"{'.'.join(str(p) for p in problem.path) or 'answer'}: {problem.message}" for problem in problems
        )
        raise ContextAnswerError(f"the answer to {question.key!r} does not match its schema ({where})")
    return checked


def _checked_answers(
    questions: tuple[msg.Question, ...], answers: tuple[msg.Answer, ...]
) -> tuple[msg.Answer, ...]:
    if len(answers) != len(questions):
        raise ContextAnswerError(f"{len(questions)} questions asked, {len(answers)} answers given")
    checked: list[msg.Answer] = []
    for question, answer in zip(questions, answers, strict=True):
        if isinstance(question, msg.UserQuestion):
            checked.append(_checked_user_answer(question, answer))
        elif isinstance(question, msg.ModelQuestion):
            checked.append(_expect(msg.ModelAnswer, answer))
        else:
            checked.append(_expect(msg.RootsAnswer, answer))
    return tuple(checked)
