"""``@prompt`` and ``@resource``: what a function becomes."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

import pytest

from loader import (
    ComponentArgumentError,
    Prompt,
    Resource,
    ResourceTemplate,
    ToolDefinitionError,
    prompt,
    resource,
)


class Tone(enum.Enum):
    FRIENDLY = "friendly"
    FORMAL = "formal"


def test_a_prompt_has_the_functions_arguments_and_renders_text_as_one_user_message() -> None:
    @prompt(title="Review")
    def review(code: Annotated[str, "the code to review"], tone: Tone = Tone.FRIENDLY) -> str:
        """Ask for a code review."""
        return f"Review this ({tone.value}): {code}"

    assert isinstance(review, Prompt)
    assert (review.name, review.title, review.description) == ("review", "Review", "Ask for a code review.")
    assert [(a.name, a.description, a.required) for a in review.arguments] == [
        ("code", "the code to review", True),
        ("tone", None, False),
    ]
    assert review.messages({"code": "x = 1", "tone": "formal"}) == [
        {"role": "user", "content": {"type": "text", "text": "Review this (formal): x = 1"}}
    ]
    assert review.completions("tone", "f") == ["friendly", "formal"]
    assert review.completions("tone", "fo") == ["formal"]


def test_a_missing_required_argument_is_named() -> None:
    @prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    with pytest.raises(ComponentArgumentError, match="'name'") as raised:
        greet.messages({})
    assert raised.value.argument == "name"


def test_a_prompt_returns_messages_and_content_blocks() -> None:
    @prompt(name="chat")
    def conversation() -> list[object]:
        return [
            {"role": "assistant", "content": "Hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            "thanks",
        ]

    assert conversation.messages() == [
        {"role": "assistant", "content": {"type": "text", "text": "Hi"}},
        {"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "thanks"}},
    ]


def test_a_resource_reads_text_or_bytes() -> None:
    @resource("data://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello"

    @resource("data://blob")
    def blob() -> bytes:
        return b"\x00\x01"

    assert isinstance(greeting, Resource) and isinstance(blob, Resource)
    assert (greeting.uri, greeting.name, greeting.read()) == ("data://greeting", "greeting", "hello")
    assert blob.read() == b"\x00\x01"


def test_a_uri_with_placeholders_makes_a_template() -> None:
    @resource("data://users/{user}/{field}", complete=lambda arg, typed: [f"{arg}-{typed}"])
    def user(user: str, field: Literal["name", "mail"]) -> str:
        return f"{user}.{field}"

    assert isinstance(user, ResourceTemplate)
    assert user.match("data://users/ann/mail") == {"user": "ann", "field": "mail"}
    assert user.match("data://users/ann") is None
    assert user.read("data://users/ann/mail") == "ann.mail"
    assert user.completions("user", "a") == ["user-a"]


def test_a_template_whose_placeholders_are_not_the_parameters_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match=r"placeholders \['id'\]"):

        @resource("data://item/{id}")
        def item(key: str) -> str:
            return key


def test_a_resource_uri_must_be_a_uri() -> None:
    with pytest.raises(ToolDefinitionError, match="not a URI"):

        @resource("no scheme here")
        def nothing() -> str:
            return ""
