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
from .component_words import KIND_WORDS
from .render import display_path, plural, titled_table

__all__ = [
    "SERVING",
    "component_cells",
    "component_record",
    "components_phrase",
    "components_table",
    "find_component",
    "render_component",
    "skill_cells",
    "skill_record",
    "skill_status",
    "skills_table",
]


def _description(component: Component) -> str:
    text = getattr(component, "description", None) or getattr(component, "title", None) or ""
    return str(text).strip().splitlines()[0] if str(text).strip() else ""


def component_cells(component: Component) -> tuple[str, str, str, str]:
    """A prompt, resource or template as its row shows it: kind, name or URI, source, description."""
    return (
        KIND_WORDS[component.kind],
        component.key,
        display_path(component.source_file),
        _description(component),
    )


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
        kind, key, source, description = component_cells(component)
        table.add_row(kind, Text(key), Text(source), Text(description))
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


SERVING = "serving"
"""A skill's status when all is well."""


def skill_status(entry: SkillEntry, failed: Iterable[FileStatus] = ()) -> str:
    """``serving``; why it is not served (over SEP-2640's limits); or that its SKILL.md failed to load."""
    if entry.problem is not None:
        return f"not served: {entry.problem}"
    source = entry.skill.source_file
    if any(s.state is FileState.FAILED and str(s.path) == source for s in failed):
        return "SKILL.md failed to load: serving the last good version"
    return SERVING


def _size(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KiB"


def skill_cells(entry: SkillEntry, failed: Iterable[FileStatus] = ()) -> tuple[str, str, str, str, str, str]:
    """A skill as its row shows it: kind, path, files, size, status, description."""
    return (
        KIND_WORDS[ComponentKind.SKILL],
        entry.skill.key,
        str(len(entry.files)),
        _size(entry.size),
        skill_status(entry, failed),
        _description(entry.skill),
    )


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
        kind, key, files, size, status, description = skill_cells(entry, failed)
        table.add_row(
            kind,
            Text(key),
            files,
            size,
            Text(status, style="green" if status == SERVING else "bold red"),
            Text(description),
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
