"""Agent Skills kept in a watched folder: ``skills/<path>/SKILL.md`` and the files beside it.

Every file below ``skills/`` is a ``SkillFile`` holding the bytes read when it
went live, at ``skill://<path below skills/>`` (SEP-2640's
``skill://<skill-path>/<file-path>``). A ``SKILL.md`` is also a ``Skill``: its
YAML front matter, kept verbatim, validated by the Agent Skills rules. A skill's
manifest is assembled from one registry snapshot (``skill_entries``), so its
digests and the bytes served for its files always come from the same generation.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..errors import ToolDefinitionError
from ..types import Component, ComponentKind
from .resources import Content

__all__ = [
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SKILLS_FOLDER",
    "SKILL_FILE_NAME",
    "SKILL_SCHEME",
    "SKILL_TOOLS_FOLDER",
    "Skill",
    "SkillEntry",
    "SkillError",
    "SkillFile",
    "is_skill_tool_path",
    "skill_components",
    "skill_entries",
    "skill_folders",
    "skill_name_problem",
    "skill_of_tool",
    "skill_uri",
]

SKILLS_FOLDER = "skills"
SKILL_TOOLS_FOLDER = "tools"
"""``skills/<path>/tools/*.py`` are tool files: imported like any other, tagged with their skill."""
SKILL_FILE_NAME = "SKILL.md"
SKILL_SCHEME = "skill"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_SKILL_FILES = 512
"""SEP-2640's per-skill limits: entries in the manifest, and the sum of their sizes."""
MAX_SKILL_BYTES = 16 * 1024 * 1024

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class SkillError(ToolDefinitionError):
    """A ``SKILL.md`` that breaks the Agent Skills rules, with the line it is about."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def is_skill_tool_path(relative: PurePosixPath) -> bool:
    """Whether ``relative`` (to its watched folder) is ``skills/<path>/tools/<name>.py``: a tool file."""
    parts = relative.parts
    return (
        len(parts) > 3
        and parts[0] == SKILLS_FOLDER
        and parts[-2] == SKILL_TOOLS_FOLDER
        and relative.suffix == ".py"
    )


def skill_folders(components: Iterable[Component]) -> dict[str, str]:
    """Each skill's folder on disk -> its path below ``skills/`` (to tag the tools in its ``tools/``)."""
    return {
        os.path.dirname(c.source_file): c.key
        for c in components
        if isinstance(c, Skill) and c.source_file is not None
    }


def skill_of_tool(source_file: str | None, folders: Mapping[str, str]) -> str | None:
    """The skill whose ``tools/`` folder holds ``source_file``, from ``skill_folders``; else None."""
    if source_file is None:
        return None
    folder = os.path.dirname(source_file)
    if os.path.basename(folder) != SKILL_TOOLS_FOLDER:
        return None
    return folders.get(os.path.dirname(folder))


def skill_uri(path: PurePosixPath) -> str:
    """``skill://<path>`` for a file at ``path`` below ``skills/``."""
    return f"{SKILL_SCHEME}://{path.as_posix()}"


class SkillFile(Component):
    """One file of a skill: the bytes read when it went live, their digest and size."""

    kind = ComponentKind.SKILL_FILE

    def __init__(self, path: PurePosixPath, data: bytes, *, source_file: str | None = None) -> None:
        self.path = path
        """Below ``skills/``: ``pdf/references/FORMS.md``."""
        self.uri = skill_uri(path)
        self.data = data
        self.size = len(data)
        self.digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.mime_type = (
            "text/markdown" if path.suffix == ".md" else mimetypes.guess_type(path.name)[0]
        ) or ("text/plain" if isinstance(self.read(), str) else "application/octet-stream")
        self.source_file = source_file

    @property
    def key(self) -> str:
        return self.uri

    def read(self) -> Content:
        """Text when the bytes are UTF-8 without NUL (so it encodes back to the same bytes), else bytes."""
        if b"\x00" not in self.data:
            try:
                return self.data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return self.data

    def __repr__(self) -> str:
        return f"<SkillFile {self.uri!r} {self.digest[:15]}>"


class Skill(Component):
    """A skill: its ``SKILL.md`` front matter (verbatim) and body, named by its folder below ``skills/``."""

    kind = ComponentKind.SKILL

    def __init__(
        self,
        skill_path: PurePosixPath,
        front_matter: Mapping[str, Any],
        body: str,
        *,
        source_file: str | None,
    ) -> None:
        self.skill_path = skill_path
        self.uri = skill_uri(skill_path / SKILL_FILE_NAME)
        self.front_matter: Mapping[str, Any] = dict(front_matter)
        self.name = str(front_matter["name"])
        self.description = str(front_matter["description"])
        self.body = body
        self.source_file = source_file

    @property
    def key(self) -> str:
        return self.skill_path.as_posix()


def skill_components(path: PurePosixPath, data: bytes, source_file: str) -> dict[str, Component]:
    """What the file at ``path`` (below ``skills/``) serves: a ``SkillFile``, and a ``Skill`` if a SKILL.md.

    Raises:
        SkillError: A ``SKILL.md`` whose front matter is not YAML or breaks the Agent Skills rules.
    """
    found: list[Component] = [SkillFile(path, data, source_file=source_file)]
    if path.name == SKILL_FILE_NAME and len(path.parts) > 1:
        front_matter, body = _front_matter(data)
        _check(front_matter, path.parent.name, data)
        found.append(Skill(path.parent, front_matter, body, source_file=source_file))
    return {component.component_id: component for component in found}


def _front_matter(data: bytes) -> tuple[dict[str, Any], str]:
    import frontmatter  # here: few processes read a SKILL.md (yaml is 15 ms of every start)
    import yaml

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(f"SKILL.md must be UTF-8 text: {exc}") from exc
    if not text.lstrip("\ufeff").startswith("---"):
        raise SkillError("SKILL.md must begin with YAML front matter (a line '---')", line=1)
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1  # its text starts with the newline after ---
        problem = getattr(exc, "problem", None) or str(exc)
        raise SkillError(f"front matter is not valid YAML: {problem}", line=line) from exc
    return dict(post.metadata), post.content


def _check(meta: Mapping[str, Any], folder: str, data: bytes) -> None:
    """The Agent Skills rules for ``name`` and ``description``, each error at the line of its key.

    Hand-written: ``skills-ref`` validates by re-reading the folder from disk
    (not the bytes this generation holds), exports no validator of parsed
    front matter, and refuses front-matter fields SEP-2640 passes through.
    """
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise SkillError("front matter needs 'name' (text)", line=_line_of("name", data))
    problem = skill_name_problem(name)
    if problem is not None:
        raise SkillError(problem, line=_line_of("name", data))
    if name != folder:
        raise SkillError(
            f"name {name!r} must equal its folder's name {folder!r}", line=_line_of("name", data)
        )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("front matter needs 'description' (text)", line=_line_of("description", data))
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise SkillError(
            f"description is {len(description)} characters; at most {MAX_DESCRIPTION_LENGTH}",
            line=_line_of("description", data),
        )


def skill_name_problem(name: str) -> str | None:
    """Why ``name`` is no skill name (the Agent Skills rule), or None."""
    if len(name) > MAX_NAME_LENGTH or not _NAME.match(name):
        return f"name {name!r} must be at most {MAX_NAME_LENGTH} lowercase letters, digits and single hyphens"
    return None


def _line_of(key: str, data: bytes) -> int:
    """The line of ``key:`` in the front matter (its last, whose value YAML keeps), else the first line."""
    found = 1
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines()[1:], start=2):
        if line.strip() == "---":
            break
        if line.startswith(f"{key}:"):
            found = number
    return found


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """One skill as SEP-2640 publishes it: its front matter and the complete manifest of its files."""

    skill: Skill
    files: tuple[SkillFile, ...]
    """Every file below the skill's folder (nested skills' too), ``SKILL.md`` first."""

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def problem(self) -> str | None:
        """Why the skill is not served (over SEP-2640's limits), else None."""
        if len(self.files) > MAX_SKILL_FILES:
            return f"{len(self.files)} files; SEP-2640 allows {MAX_SKILL_FILES} per skill"
        if self.size > MAX_SKILL_BYTES:
            return f"{self.size} bytes; SEP-2640 allows {MAX_SKILL_BYTES} per skill"
        return None

    def wire(self) -> dict[str, Any]:
        """The SEP-2640 ``Skill`` object."""
        return {
            "uri": self.skill.uri,
            "frontmatter": dict(self.skill.front_matter),
            "resources": [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in self.files],
        }


def skill_entries(components: Iterable[Component]) -> tuple[SkillEntry, ...]:
    """Each skill in ``components`` (one snapshot's) with its files from the same snapshot, by path."""
    skills: list[Skill] = []
    files: dict[PurePosixPath, list[SkillFile]] = {}
    for component in components:
        if isinstance(component, Skill):
            skills.append(component)
        elif isinstance(component, SkillFile):
            for folder in component.path.parents:
                files.setdefault(folder, []).append(component)
    entries = []
    for skill in sorted(skills, key=lambda s: s.key):
        own = skill.skill_path / SKILL_FILE_NAME
        mine = sorted(files.get(skill.skill_path, ()), key=lambda f: (f.path != own, f.uri))
        entries.append(SkillEntry(skill, tuple(mine)))
    return tuple(entries)
