"""A tool's context calls as MCP wire objects: questions as requests, client results as answers.

Pure mapping, the same for both eras: a 2025-era session sends these requests
to the client mid-call; a 2026-07-28 call returns them in an
``InputRequiredResult`` and reads the answers from the retry's ``inputResponses``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ValidationError

from ..context.messages import (
    Answer,
    AnswerAction,
    ContextCapability,
    LogEntry,
    ModelAnswer,
    ModelQuestion,
    Question,
    Root,
    RootsAnswer,
    UserAnswer,
    UserQuestion,
)
from ..errors import ContextAnswerError

__all__ = [
    "answer_from",
    "capability_of",
    "client_capability_name",
    "declares",
    "input_request",
    "log_params",
    "question_digest",
    "required_capabilities",
]

_METHODS = {
    ContextCapability.ASK_USER: "elicitation/create",
    ContextCapability.ASK_MODEL: "sampling/createMessage",
    ContextCapability.LIST_ROOTS: "roots/list",
}
_CLIENT_CAPABILITY = {
    ContextCapability.ASK_USER: "elicitation",
    ContextCapability.ASK_MODEL: "sampling",
    ContextCapability.LIST_ROOTS: "roots",
}


def capability_of(question: Question) -> ContextCapability:
    if isinstance(question, UserQuestion):
        return ContextCapability.ASK_USER
    if isinstance(question, ModelQuestion):
        return ContextCapability.ASK_MODEL
    return ContextCapability.LIST_ROOTS


def declares(capabilities: types.ClientCapabilities | None, capability: ContextCapability) -> bool:
    """Whether the client declared what answering this kind of question takes (form elicitation,
    sampling, roots)."""
    if capabilities is None:
        return False
    if capability is ContextCapability.ASK_USER:
        elicitation = capabilities.elicitation
        # A bare ``elicitation: {}`` (from before modes existed) means form support; url-only does not.
        return elicitation is not None and (elicitation.form is not None or elicitation.url is None)
    if capability is ContextCapability.ASK_MODEL:
        return capabilities.sampling is not None
    return capabilities.roots is not None


def required_capabilities(capability: ContextCapability) -> dict[str, Any]:
    """``error.data`` of a -32021 refusal: the missing capability as a ``ClientCapabilities`` object."""
    return {"requiredCapabilities": {_CLIENT_CAPABILITY[capability]: {}}}


def client_capability_name(capability: ContextCapability) -> str:
    """The client capability's name in the protocol (``elicitation``, ``sampling``, ``roots``)."""
    return _CLIENT_CAPABILITY[capability]


def input_request(
    question: Question,
) -> types.ElicitRequest | types.CreateMessageRequest | types.ListRootsRequest:
    """The MCP request that asks ``question``."""
    if isinstance(question, UserQuestion):
        return types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question.message, requested_schema=question.schema)
        )
    if isinstance(question, ModelQuestion):
        return types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(
                        role=turn.role, content=types.TextContent(type="text", text=turn.text)
                    )
                    for turn in question.messages
                ],
                max_tokens=question.max_tokens,
                system_prompt=question.system_prompt,
                temperature=question.temperature,
            )
        )
    return types.ListRootsRequest()


def question_digest(question: Question) -> str:
    """A short digest of the question as sent: a recorded answer only answers the same question again."""
    wire = input_request(question).model_dump(by_alias=True, mode="json", exclude_none=True)
    canonical = json.dumps(wire, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def answer_from(question: Question, result: Any) -> Answer:
    """The client's result (a model or its wire dict) as the answer to ``question``.

    Raises:
        ContextAnswerError: The result is not an answer to this kind of question.
    """
    capability = capability_of(question)
    data = result.model_dump(by_alias=True, mode="json") if isinstance(result, BaseModel) else result
    try:
        if capability is ContextCapability.ASK_USER:
            elicited = types.ElicitResult.model_validate(data, by_name=False)
            content = dict(elicited.content) if elicited.content is not None else None
            return UserAnswer(AnswerAction(elicited.action), content if elicited.action == "accept" else None)
        if capability is ContextCapability.ASK_MODEL:
            sampled = types.CreateMessageResult.model_validate(data, by_name=False)
            text = sampled.content.text if isinstance(sampled.content, types.TextContent) else ""
            return ModelAnswer(text, sampled.model, sampled.stop_reason)
        listed = types.ListRootsResult.model_validate(data, by_name=False)
        return RootsAnswer(tuple(Root(str(root.uri), root.name) for root in listed.roots))
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "result"
        raise ContextAnswerError(
            f"the client's answer to {question.key!r} is not an answer to {_METHODS[capability]} "
            f"({where}: {problem['msg']})"
        ) from None


def log_params(entry: LogEntry) -> types.LoggingMessageNotificationParams:
    """A log entry as ``notifications/message`` params: the message alone, or it with the data."""
    data: Any = entry.message if entry.data is None else {"message": entry.message, "data": entry.data}
    return types.LoggingMessageNotificationParams(level=entry.level.value, data=data, logger=entry.logger)
