"""What history keeps of a component version beside its file: the facts listings show, and a skill's manifest.

History sits below ``loader.components`` in the layers (``lint-imports``), so it
reads a component through the ``Component`` base (kind, key, source file) and
the attributes its kind documents (``name``, ``title``, ``description``,
``mime_type``; a skill's ``front_matter`` and ``uri``; a skill file's ``digest``
and ``size``), as the worker's description of a component does.

A skill's manifest changes whenever one of its files does, while the skill
itself (its ``SKILL.md``) may not: so a skill version is named by its
**manifest digest**, the sha256 of its files' ``{uri, digest, size}`` sorted by
URI, as canonical JSON (RFC 8785), worked out from one registry snapshot.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import rfc8785

from ..types import Component, ComponentKind

__all__ = ["component_facts", "manifest_digest", "skill_manifest", "skills_holding"]

_SHOWN = ("name", "title", "description", "mime_type")


def component_facts(component: Component) -> dict[str, Any]:
    """The facts of ``component`` worth keeping with its version (those it has)."""
    facts: dict[str, Any] = {}
    for attribute in _SHOWN:
        value = getattr(component, attribute, None)
        if value is not None:
            facts[attribute] = str(value)
    front_matter = getattr(component, "front_matter", None)
    if isinstance(front_matter, Mapping):
        facts["front_matter"] = dict(front_matter)
    return facts


def _folder_uri(skill: Component) -> str:
    """``skill://pdf/`` for the skill whose ``SKILL.md`` is at ``skill://pdf/SKILL.md``."""
    uri = str(getattr(skill, "uri", ""))
    return uri[: uri.rindex("/") + 1] if "/" in uri else uri


def skill_manifest(skill: Component, files: Iterable[Component]) -> list[dict[str, Any]]:
    """``{uri, digest, size}`` of each file below ``skill``'s folder in ``files`` (one snapshot), by URI."""
    folder = _folder_uri(skill)
    return sorted(
        (
            {"uri": f.key, "digest": str(getattr(f, "digest", "")), "size": int(getattr(f, "size", 0))}
            for f in files
            if f.kind is ComponentKind.SKILL_FILE and folder and f.key.startswith(folder)
        ),
        key=lambda entry: str(entry["uri"]),
    )


def manifest_digest(manifest: list[dict[str, Any]]) -> str:
    """``sha256:<hex>`` of a manifest as canonical JSON."""
    return "sha256:" + hashlib.sha256(rfc8785.dumps(manifest)).hexdigest()


def skills_holding(file: Component, skills: Iterable[Component]) -> list[Component]:
    """The skills whose folder holds the skill file ``file`` (a nested skill's file is its parent's too)."""
    return [skill for skill in skills if (folder := _folder_uri(skill)) and file.key.startswith(folder)]
