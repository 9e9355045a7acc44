"""``skills="on-activation"`` for the framework adapters: a skill's tools only once the model activated it.

A skill's tools are the tool files in its ``tools/`` folder
(``skills/<path>/tools/*.py``, tagged ``_meta["tool-loader/skill"]`` over MCP).
In this mode an adapter keeps one ``SkillRun`` per run of its agent and offers
each step ``SkillRun.view()`` of the registry's snapshot: every tool but the
tools of skills the run has not activated, and ``activate_skill``, which
returns a skill's ``SKILL.md`` body and activates the skill for the rest of
the run, so its tools are offered from the next model step on.

A view is a ``RegistrySnapshot`` at the generation it was made from, so an
adapter runs its calls through it as through any snapshot; a run hands out
the same view object until the registry or its activations change.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Literal, TypeAlias

from ..components.skills import Skill, skill_folders, skill_of_tool
from ..registry.snapshot import RegistryEntry, RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..results import error_result
from ..tools.function_tool import FunctionTool
from ..types import ComponentKind, ToolResult, new_tool_use_id

__all__ = ["ACTIVATE_SKILL", "SkillRun", "SkillsMode", "skill_tools"]

logger = logging.getLogger(__name__)

SkillsMode: TypeAlias = Literal["listed", "on-activation"]
"""When a skill's tools are offered: always, like any tool, or once the run activated the skill."""

ACTIVATE_SKILL = "activate_skill"


class _LastSkillTools:
    """``skill_tools`` of the snapshot last asked about: every run's view of one generation needs it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[RegistrySnapshot, dict[str, tuple[str, ...]]] | None = None

    def __call__(self, snapshot: RegistrySnapshot) -> dict[str, tuple[str, ...]]:
        with self._lock:
            last = self._last
        if last is not None and last[0] is snapshot:
            return last[1]
        skills = [c for c in snapshot.components(ComponentKind.SKILL) if isinstance(c, Skill)]
        found: dict[str, list[str]] = {skill.key: [] for skill in skills}
        folders = skill_folders(skills)
        for tool in snapshot.tools() if folders else ():  # a walk over every tool: worth keeping
            key = skill_of_tool(tool.source_file, folders)
            if key is not None:
                found[key].append(tool.tool_name)
        tools = {key: tuple(names) for key, names in found.items()}
        with self._lock:
            self._last = (snapshot, tools)
        return tools


skill_tools = _LastSkillTools()
"""Each skill of a snapshot (by its path below ``skills/``) -> the names of its tools, in name order."""


def _describe(skills: dict[str, Skill], tools: dict[str, tuple[str, ...]]) -> str:
    lines = [
        "Activate a skill: returns its instructions (its SKILL.md). "
        "A skill's tools are offered to you from your next step on.",
        "Skills:",
    ]
    for key, skill in skills.items():
        own = f" (tools: {', '.join(tools[key])})" if tools.get(key) else ""
        lines.append(f"- {key}: {skill.description}{own}")
    return "\n".join(lines)


def _activate_tool(
    snapshot: RegistrySnapshot, run: SkillRun, tools: dict[str, tuple[str, ...]]
) -> FunctionTool[..., str | ToolResult]:
    skills = {c.key: c for c in snapshot.components(ComponentKind.SKILL) if isinstance(c, Skill)}

    def activate_skill(name: str) -> str | ToolResult:
        """Activate a skill.

        Args:
            name: The skill's name, as listed.
        """
        skill = skills.get(name)
        if skill is None:
            listing = ", ".join(skills) or "none"
            return error_result(new_tool_use_id(), f"Unknown skill: {name}. Skills: {listing}")
        run.activate(skill.key)
        return skill.body

    return FunctionTool(activate_skill, description=_describe(skills, tools))


class SkillRun:
    """One run of an agent: the skills it activated, and the views it offers."""

    def __init__(self, registry: ToolRegistry, activated: Iterable[str] = ()) -> None:
        self._registry = registry
        self._activated = set(activated)
        self._lock = threading.Lock()
        self._view: tuple[RegistrySnapshot, frozenset[str], RegistrySnapshot] | None = None

    @property
    def activated(self) -> frozenset[str]:
        """The skills this run activated, by their path below ``skills/``."""
        with self._lock:
            return frozenset(self._activated)

    def activate(self, key: str) -> None:
        """Offer skill ``key``'s tools from the next view on."""
        with self._lock:
            self._activated.add(key)
        logger.debug("skill=<%s> | activated for this run", key)

    def view(self, snapshot: RegistrySnapshot | None = None) -> RegistrySnapshot:
        """``snapshot`` (default: the registry's current one) as this run offers it now."""
        snapshot = snapshot or self._registry.snapshot()
        activated = self.activated
        cached = self._view
        if cached is not None and cached[0] is snapshot and cached[1] == activated:
            return cached[2]
        tools = skill_tools(snapshot)
        hidden = [name for key, names in tools.items() if key not in activated for name in names]
        added = [RegistryEntry(ACTIVATE_SKILL, _activate_tool(snapshot, self, tools), None)] if tools else []
        if ACTIVATE_SKILL in snapshot and added:
            logger.warning(
                "tool_name=<%s> | a tool of this name is hidden by the skills' own", ACTIVATE_SKILL
            )
        view = snapshot.narrowed(hidden, added)
        self._view = (snapshot, activated, view)
        return view
