"""The words for prompts, resources, templates, skills and skill files, wherever the console names them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from ..components.skills import SKILL_FILE_NAME, skill_uri
from ..types import ComponentKind

__all__ = ["KIND_WORDS", "SKILL_FILE_WORD", "component_labels", "kind_of_word", "kind_word"]

KIND_WORDS = {
    ComponentKind.PROMPT: "prompt",
    ComponentKind.RESOURCE: "resource",
    ComponentKind.RESOURCE_TEMPLATE: "template",
    ComponentKind.SKILL: "skill",
}
"""The kind column's words (a skill's files are counted in its row of the skills table)."""

SKILL_FILE_WORD = "skill file"
"""A skill's file where it is named on its own (an event, its history)."""


def kind_word(kind: ComponentKind) -> str:
    """The word for ``kind``: the kind column's, or ``skill file``."""
    return KIND_WORDS.get(kind, SKILL_FILE_WORD)


def kind_of_word(word: str) -> ComponentKind:
    """The kind a word (``kind_word``'s, or the kind's own value) names.

    Raises:
        ValueError: No kind is called that.
    """
    for kind in ComponentKind:
        if word in (kind.value, kind_word(kind)):
            return kind
    raise ValueError(word)


def component_labels(component_ids: Iterable[str]) -> list[str]:
    """``prompt greet``, ``resource tool-loader:///resources/a.sql``, ``skill pdf``: what a file serves,
    from its components' ids (a ``SKILL.md`` is named by its skill, not as its own file too)."""
    parsed = [(ComponentKind(kind), key) for kind, _, key in (i.partition(":") for i in component_ids)]
    skills = {
        skill_uri(PurePosixPath(key) / SKILL_FILE_NAME) for kind, key in parsed if kind is ComponentKind.SKILL
    }
    return [
        f"{kind_word(kind)} {key}"
        for kind, key in parsed
        if not (kind is ComponentKind.SKILL_FILE and key in skills)
    ]
