"""Prompts and resources kept as plain files in a watched folder; the loader reads them, no code runs.

* ``prompts/**/*.md``: YAML front matter (``name``, default the path below
  ``prompts/`` without ``.md``; ``title``, ``description``, ``arguments:
  [{name, description, required}]``, ``values: {argument: [...]}`` for
  completion), then the message text with ``{{argument}}`` placeholders.
* ``resources/**``: each file one resource, named by its path relative to the
  watched folder (``resources/schema.sql``), at the URI ``tool-loader:///`` +
  that path (``FILE_RESOURCE_SCHEME``); text when its bytes are UTF-8 without
  NUL, a blob otherwise; ``mimeType`` from the extension.

A resource serves the bytes read when its file went live, so a read never
mixes two versions of a file being rewritten.
"""

from __future__ import annotations

import mimetypes
import re
import urllib.parse
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ..errors import ToolDefinitionError
from ..types import Component, ComponentKind
from .prompts import Prompt, PromptArgument
from .resources import Resource
from .skills import SKILLS_FOLDER, is_skill_tool_path, skill_components

__all__ = [
    "FILE_RESOURCE_SCHEME",
    "PROMPTS_FOLDER",
    "RESOURCES_FOLDER",
    "FileComponentError",
    "file_component",
    "file_component_kind",
    "file_components",
    "file_resource_uri",
]

PROMPTS_FOLDER = "prompts"
RESOURCES_FOLDER = "resources"
FILE_RESOURCE_SCHEME = "tool-loader"
"""Resource files are served at ``tool-loader:///<path relative to the watched folder>``."""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}")


class FileComponentError(ToolDefinitionError):
    """A prompt file that cannot be read as one (its front matter), with the line it is about."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def file_component_kind(relative: PurePosixPath) -> ComponentKind | None:
    """What a file at ``relative`` (to its watched folder) serves: a prompt, a resource, or nothing."""
    parts = relative.parts
    if len(parts) < 2 or any(part.startswith(".") for part in parts):
        return None
    if parts[0] == PROMPTS_FOLDER and relative.suffix == ".md":
        return ComponentKind.PROMPT
    if parts[0] == RESOURCES_FOLDER and relative.suffix != ".py":  # a .py file is a tool source elsewhere
        return ComponentKind.RESOURCE
    if parts[0] == SKILLS_FOLDER and len(parts) > 2 and not is_skill_tool_path(relative):
        return ComponentKind.SKILL_FILE  # a skill's scripts are its files, never imported
    return None


def file_resource_uri(relative: PurePosixPath) -> str:
    """The stable URI of a resource file: ``tool-loader:///resources/schema.sql``."""
    return f"{FILE_RESOURCE_SCHEME}:///{urllib.parse.quote(relative.as_posix())}"


def file_component(relative: PurePosixPath, data: bytes, source_file: str) -> Component:
    """The prompt or resource a file's bytes define.

    Raises:
        FileComponentError: A prompt file's front matter is not YAML, or says something wrong.
        ValueError: ``relative`` is neither a prompt nor a resource file.
    """
    kind = file_component_kind(relative)
    if kind is ComponentKind.PROMPT:
        return _prompt(relative, data, source_file)
    if kind is ComponentKind.RESOURCE:
        return _resource(relative, data, source_file)
    raise ValueError(f"{relative} is neither under {PROMPTS_FOLDER}/ (.md) nor under {RESOURCES_FOLDER}/")


def file_components(relative: PurePosixPath, data: bytes, source_file: str) -> dict[str, Component]:
    """Everything a file's bytes define, by component id (a ``SKILL.md`` is a skill and one of its files).

    Raises:
        FileComponentError: A prompt file's front matter is not YAML, or says something wrong.
        SkillError: A ``SKILL.md`` breaks the Agent Skills rules.
        ValueError: ``relative`` is no prompt, resource or skill file.
    """
    if file_component_kind(relative) is ComponentKind.SKILL_FILE:
        return skill_components(PurePosixPath(*relative.parts[1:]), data, source_file)
    component = file_component(relative, data, source_file)
    return {component.component_id: component}


def _resource(relative: PurePosixPath, data: bytes, source_file: str) -> Resource:
    content: str | bytes = data
    if b"\x00" not in data:
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            content = data
    mime_type = mimetypes.guess_type(relative.name)[0]
    if mime_type is None:
        mime_type = "text/plain" if isinstance(content, str) else "application/octet-stream"
    return Resource(
        file_resource_uri(relative),
        lambda: content,
        name=relative.as_posix(),
        mime_type=mime_type,
        source_file=source_file,
    )


def _prompt(relative: PurePosixPath, data: bytes, source_file: str) -> Prompt:
    import frontmatter  # here: few processes read a prompt file (yaml is 15 ms of every start)
    import yaml

    try:
        post = frontmatter.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FileComponentError(f"a prompt file must be UTF-8 text: {exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1  # its text starts with the newline after ---
        problem = getattr(exc, "problem", None) or str(exc)
        raise FileComponentError(f"front matter is not valid YAML: {problem}", line=line) from exc
    meta = post.metadata
    default_name = PurePosixPath(*relative.parts[1:]).with_suffix("").as_posix()
    arguments = _arguments(meta.get("arguments"))
    values = _values(meta.get("values"))
    body = post.content
    known = {argument.name for argument in arguments}
    for used in _PLACEHOLDER.findall(body):
        if used not in known:
            arguments = (*arguments, PromptArgument(used, None, False))
            known.add(used)

    def render(given: dict[str, str], state: dict[str, Any] | None) -> str:
        return _PLACEHOLDER.sub(lambda m: given.get(m.group(1), ""), body)

    return Prompt(
        str(meta.get("name") or default_name),
        render,
        title=_text(meta, "title"),
        description=_text(meta, "description"),
        arguments=arguments,
        values=values,
        source_file=source_file,
    )


def _text(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return None if value is None else str(value)


def _arguments(raw: Any) -> tuple[PromptArgument, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise FileComponentError("front matter 'arguments' must be a list of {name, description, required}")
    found: list[PromptArgument] = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict) or not item.get("name"):
            raise FileComponentError(f"front matter 'arguments' item {index + 1} has no name")
        found.append(
            PromptArgument(str(item["name"]), _text(item, "description"), bool(item.get("required")))
        )
    return tuple(found)


def _values(raw: Any) -> dict[str, tuple[str, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
        raise FileComponentError("front matter 'values' must map each argument to a list of values")
    return {str(name): tuple(str(v) for v in found) for name, found in raw.items()}
