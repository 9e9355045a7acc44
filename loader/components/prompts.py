"""Prompts: named message templates a client fills in with arguments.

A prompt renders to MCP-shaped message dicts (``{"role": ..., "content": {...}}``);
the MCP layer validates them with the SDK's types. ``Prompt`` is built by the
``@prompt`` decorator (``decorators.py``) or from a Markdown file (``markdown.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ComponentArgumentError
from ..types import Component, ComponentKind

__all__ = ["Complete", "Prompt", "PromptArgument", "Render", "as_messages", "completions"]

Render = Callable[[dict[str, str], dict[str, Any] | None], Any]
"""``render(arguments, invocation_state)``: the prompt's text; the state carries the caller's handlers."""

Complete = Callable[[str, str], Sequence[str]]
"""``complete(argument, typed_so_far)``: the values to offer for one argument."""

_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt."""

    name: str
    description: str | None = None
    required: bool = False


def completions(
    values: Mapping[str, tuple[str, ...]], complete: Complete | None, argument: str, typed: str
) -> list[str]:
    """The values to offer for ``argument`` given ``typed``: from ``complete``, else the known ones."""
    if complete is not None:
        return [str(value) for value in complete(argument, typed)]
    return [value for value in values.get(argument, ()) if value.startswith(typed)]


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, Mapping) and "role" in item:
        content = item.get("content")
        return {
            "role": item["role"],
            "content": _message(content)["content"] if isinstance(content, (str, Mapping)) else content,
        }
    if isinstance(item, Mapping) and item.get("type") in _CONTENT_TYPES:
        return {"role": "user", "content": dict(item)}
    dump = getattr(item, "model_dump", None)
    if callable(dump):  # an MCP SDK message or content block
        return _message(dump(mode="json", by_alias=True, exclude_none=True))
    raise TypeError(f"a prompt returned {type(item).__name__}: expected text, a message or a content block")


def as_messages(value: Any) -> list[dict[str, Any]]:
    """What a prompt function returned, as messages: a string is one user message.

    Raises:
        TypeError: Something that is neither text, a message nor a content block.
    """
    if isinstance(value, (str, Mapping)) or not isinstance(value, Sequence):
        return [_message(value)]
    return [_message(item) for item in value]


class Prompt(Component):
    """A prompt: its arguments, and how to render it."""

    kind = ComponentKind.PROMPT

    def __init__(
        self,
        name: str,
        render: Render,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: tuple[PromptArgument, ...] = (),
        values: Mapping[str, tuple[str, ...]] | None = None,
        complete: Complete | None = None,
        source_file: str | None = None,
    ) -> None:
        self.name = name
        self.title = title
        self.description = description
        self.arguments = arguments
        self.values: Mapping[str, tuple[str, ...]] = dict(values or {})
        self.complete = complete
        self.source_file = source_file
        self._render = render

    @property
    def key(self) -> str:
        return self.name

    def messages(
        self, arguments: Mapping[str, str] | None = None, invocation_state: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The rendered messages; ``invocation_state`` carries the caller's context handlers (questions).

        Raises:
            ComponentArgumentError: A required argument is missing, or an argument is unknown.
        """
        given = dict(arguments or {})
        known = {argument.name for argument in self.arguments}
        for argument in self.arguments:
            if argument.required and argument.name not in given:
                raise ComponentArgumentError(
                    f"prompt {self.name!r}: missing required argument {argument.name!r}",
                    argument=argument.name,
                )
        for name in given:
            if name not in known:
                raise ComponentArgumentError(
                    f"prompt {self.name!r}: unknown argument {name!r}", argument=name
                )
        return as_messages(self._render(given, invocation_state))

    def completions(self, argument: str, typed: str) -> list[str]:
        """The values to offer for ``argument``."""
        return completions(self.values, self.complete, argument, typed)
