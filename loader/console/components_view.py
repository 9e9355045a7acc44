"""How the console shows prompts, resources, resource templates and skills: a table with a kind column."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..components.prompts import Prompt
from ..components.skills import SkillEntry, skill_entries
from ..registry.snapshot import RegistrySnapshot
from ..status import FileState, FileStatus
from ..types import Component, ComponentKind
from .render import display_path, plural, titled_table

__all__ = [
    "KIND_WORDS",
    "component_record",
    "components_phrase",
    "components_table",
    "find_component",
    "render_component",
    "skill_record",
    "skill_status",
    "skills_table",
]

KIND_WORDS = {
    ComponentKind.PROMPT: "prompt",
    ComponentKind.RESOURCE: "resource",
    ComponentKind.RESOURCE_TEMPLATE: "template",
    ComponentKind.SKILL: "skill",
}
"""The kind column's words (a skill's files are counted in its row of the skills table)."""


def _description(component: Component) -> str:
    text = getattr(component, "description", None) or getattr(component, "title", None) or ""
    return str(text).strip().splitlines()[0] if str(text).strip() else ""


def components_table(components: Iterable[Component], *, title: str | None = None) -> Table:
    """One row per prompt, resource or template: kind, name or URI, where it comes from, description."""
    table = titled_table(title, collapse_padding=True)
    table.add_column("kind", no_wrap=True, style="cyan")
    table.add_column("name or URI", no_wrap=True, style="bold", max_width=48, overflow="ellipsis")
    table.add_column("source", no_wrap=True, style="dim", max_width=36, overflow="ellipsis")
    table.add_column("description", overflow="fold", min_width=12)
    for component in components:
        if component.kind in (ComponentKind.SKILL, ComponentKind.SKILL_FILE):
            continue  # in the skills table
        table.add_row(
            KIND_WORDS[component.kind],
            Text(component.key),
            Text(display_path(component.source_file)),
            Text(_description(component)),
        )
    return table


def components_phrase(components: Iterable[Component]) -> str:
    """``1 prompt, 2 resources``: each kind counted (kinds with none left out)."""
    listed = [c for c in components if c.kind in KIND_WORDS]
    counts = [(sum(1 for c in listed if c.kind is kind), word) for kind, word in KIND_WORDS.items()]
    return ", ".join(plural(count, word) for count, word in counts if count)


def component_record(component: Component) -> dict[str, Any]:
    """A component as ``list --json`` prints it."""
    return {
        "kind": component.kind.value,
        "key": component.key,
        "name": getattr(component, "name", component.key),
        "description": getattr(component, "description", None),
        "mime_type": getattr(component, "mime_type", None),
        "source_file": component.source_file,
    }


def find_component(snapshot: RegistrySnapshot, name: str) -> Component | None:
    """The prompt named ``name``, or the resource (template) whose URI or name it is."""
    for component in snapshot.components():
        if component.kind is ComponentKind.SKILL_FILE:
            continue  # a skill is inspected by its path; its files are in its manifest
        if name in (component.key, getattr(component, "name", None)):
            return component
    return None


def render_component(component: Component) -> RenderableType:
    """One prompt, resource or template in full: what it is, where it comes from, its arguments."""
    header = Text.assemble((KIND_WORDS[component.kind], "cyan"), " ", (component.key, "bold"))
    parts: list[RenderableType] = [
        Panel(Text(_description(component) or "(no description)"), title=header, title_align="left")
    ]
    about = Table.grid(padding=(0, 2))
    about.add_column(style="dim")
    about.add_column()
    for key, value in component_record(component).items():
        if value is not None and key not in ("kind", "key", "description"):
            about.add_row(
                key.replace("_", " "), Text(display_path(value) if key == "source_file" else str(value))
            )
    parts.append(about)
    if isinstance(component, Prompt) and component.arguments:
        arguments = titled_table("Arguments", collapse_padding=True)
        for column in ("name", "required", "values", "description"):
            arguments.add_column(column)
        for argument in component.arguments:
            values = ", ".join(component.values.get(argument.name, ())) or "-"
            required = "yes" if argument.required else "no"
            arguments.add_row(argument.name, required, values, argument.description or "")
        parts.append(arguments)
    return Group(*parts)


def skill_status(entry: SkillEntry, failed: Iterable[FileStatus] = ()) -> str:
    """``serving``; why it is not served (over SEP-2640's limits); or that its SKILL.md failed to load."""
    if entry.problem is not None:
        return f"not served: {entry.problem}"
    source = entry.skill.source_file
    if any(s.state is FileState.FAILED and str(s.path) == source for s in failed):
        return "SKILL.md failed to load: serving the last good version"
    return "serving"


def _size(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KiB"


def skills_table(
    components: Iterable[Component], failed: Iterable[FileStatus] = (), *, title: str | None = None
) -> Table | None:
    """One row per skill: its path, files, size, status and description; None when there are none."""
    entries = skill_entries(components)
    if not entries:
        return None
    failed = list(failed)
    table = titled_table(title, collapse_padding=True)
    table.add_column("kind", no_wrap=True, style="cyan")
    table.add_column("name", no_wrap=True, style="bold", max_width=40, overflow="ellipsis")
    table.add_column("files", justify="right")
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("status", overflow="fold")
    table.add_column("description", overflow="fold", min_width=12)
    for entry in entries:
        status = skill_status(entry, failed)
        table.add_row(
            KIND_WORDS[ComponentKind.SKILL],
            Text(entry.skill.key),
            str(len(entry.files)),
            _size(entry.size),
            Text(status, style="green" if status == "serving" else "bold red"),
            Text(_description(entry.skill)),
        )
    return table


def skill_record(entry: SkillEntry, failed: Iterable[FileStatus] = ()) -> dict[str, Any]:
    """A skill as ``list --json`` prints it: its SEP-2640 entry, size and status."""
    return {
        **entry.wire(),
        "path": entry.skill.key,
        "size": entry.size,
        "status": skill_status(entry, failed),
    }
