"""How the console shows prompts, resources and resource templates: one table with a kind column."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.table import Table
from rich.text import Text

from ..types import Component, ComponentKind
from .render import display_path, plural, titled_table

__all__ = ["KIND_WORDS", "component_record", "components_phrase", "components_table"]

KIND_WORDS = {
    ComponentKind.PROMPT: "prompt",
    ComponentKind.RESOURCE: "resource",
    ComponentKind.RESOURCE_TEMPLATE: "template",
}
"""The kind column's words."""


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
        table.add_row(
            KIND_WORDS[component.kind],
            Text(component.key),
            Text(display_path(component.source_file)),
            Text(_description(component)),
        )
    return table


def components_phrase(components: Iterable[Component]) -> str:
    """``1 prompt, 2 resources``: each kind counted (kinds with none left out)."""
    listed = list(components)
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
