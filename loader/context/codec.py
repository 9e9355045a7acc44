"""Context messages as plain JSON data and back, for a caller across a pipe (a worker process)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import messages as msg

__all__ = [
    "answer_from_json",
    "answer_to_json",
    "entry_from_json",
    "entry_to_json",
    "question_from_json",
    "question_to_json",
    "update_from_json",
    "update_to_json",
]


def update_to_json(update: msg.ProgressUpdate) -> dict[str, Any]:
    return {"progress": update.progress, "total": update.total, "message": update.message}


def update_from_json(data: Mapping[str, Any]) -> msg.ProgressUpdate:
    return msg.ProgressUpdate(data["progress"], data.get("total"), data.get("message"))


def entry_to_json(entry: msg.LogEntry, encode: Any = lambda value: value) -> dict[str, Any]:
    """``encode`` makes ``data`` JSON-safe (it is whatever the tool passed)."""
    return {
        "level": entry.level.value,
        "message": entry.message,
        "data": encode(entry.data),
        "logger": entry.logger,
    }


def entry_from_json(data: Mapping[str, Any]) -> msg.LogEntry:
    return msg.LogEntry(
        msg.LogLevel(data["level"]), str(data["message"]), data.get("data"), data.get("logger")
    )


def question_to_json(question: msg.Question) -> dict[str, Any]:
    if isinstance(question, msg.UserQuestion):
        return {"kind": "user", "key": question.key, "message": question.message, "schema": question.schema}
    if isinstance(question, msg.ModelQuestion):
        return {
            "kind": "model",
            "key": question.key,
            "messages": [[turn.role, turn.text] for turn in question.messages],
            "max_tokens": question.max_tokens,
            "system_prompt": question.system_prompt,
            "temperature": question.temperature,
        }
    return {"kind": "roots", "key": question.key}


def question_from_json(data: Mapping[str, Any]) -> msg.Question:
    kind, key = data["kind"], str(data["key"])
    if kind == "user":
        return msg.UserQuestion(key, str(data["message"]), dict(data["schema"]))
    if kind == "model":
        return msg.ModelQuestion(
            key,
            tuple(msg.ModelMessage(role, text) for role, text in data["messages"]),
            int(data["max_tokens"]),
            data.get("system_prompt"),
            data.get("temperature"),
        )
    if kind == "roots":
        return msg.RootsQuestion(key)
    raise ValueError(f"unknown question kind {kind!r}")


def answer_to_json(answer: msg.Answer) -> dict[str, Any]:
    if isinstance(answer, msg.UserAnswer):
        return {"kind": "user", "action": answer.action.value, "content": answer.content}
    if isinstance(answer, msg.ModelAnswer):
        return {
            "kind": "model",
            "text": answer.text,
            "model": answer.model,
            "stop_reason": answer.stop_reason,
        }
    return {"kind": "roots", "roots": [[root.uri, root.name] for root in answer.roots]}


def answer_from_json(data: Mapping[str, Any]) -> msg.Answer:
    kind = data["kind"]
    if kind == "user":
        content = data.get("content")
        return msg.UserAnswer(
            msg.AnswerAction(data["action"]), dict(content) if content is not None else None
        )
    if kind == "model":
        return msg.ModelAnswer(str(data["text"]), data.get("model"), data.get("stop_reason"))
    if kind == "roots":
        return msg.RootsAnswer(tuple(msg.Root(uri, name) for uri, name in data["roots"]))
    raise ValueError(f"unknown answer kind {kind!r}")
