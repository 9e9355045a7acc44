"""``tool-loader inspect``: everything known about one tool, with its JSON Schema highlighted."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..fingerprint import tool_digest
from ..history.provenance import provenance_of
from ..tools.class_tool import get_tool_metadata
from ..types import AgentTool
from .common import add_dirs_argument, print_json, stderr_console, stdout_console
from .completion import complete_tool_names
from .components_view import component_record, find_component, render_component
from .proposal_view import provenance_phrase
from .render import (
    find_tool,
    input_properties,
    quiet_logs,
    status_of_tool,
    tool_description,
    tool_location,
    tool_record,
    tool_version,
)
from .tool_scope import load_for_tool

__all__ = ["HELP", "add_arguments", "run", "schema_type"]

HELP = (
    "show one tool in full: description, parameters, JSON Schema, metadata, examples and source"
    " (or one prompt, resource or template, by name or URI)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``inspect NAME [--dir DIR...] [--json]``."""
    name = parser.add_argument("name", metavar="NAME", help="the tool to show")
    name.completer = complete_tool_names  # type: ignore[attr-defined]
    add_dirs_argument(parser, positional=False)
    parser.add_argument("--json", action="store_true", help="print the tool as JSON (as `list --json` does)")


def schema_type(schema: Mapping[str, Any]) -> str:
    """A short type label for a property schema: ``string``, ``add | subtract``, ``array[Parcel]``, ...

    Alternatives are spaced, so a narrow column folds between values, never inside one.
    """
    if "enum" in schema:
        return " | ".join(
            json.dumps(value) if not isinstance(value, str) else value for value in schema["enum"]
        )
    if "const" in schema:
        return json.dumps(schema["const"])
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            return " | ".join(schema_type(option) for option in options if isinstance(option, Mapping))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"array[{schema_type(items)}]" if isinstance(items, Mapping) else "array"
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return f"object[str, {schema_type(schema['additionalProperties'])}]"
    return str(kind) if kind else "any"


def _json_block(value: Any, title: str) -> Panel:
    text = json.dumps(value, indent=2, default=repr, ensure_ascii=False)
    return Panel(
        Syntax(text, "json", theme="ansi_dark", background_color="default", word_wrap=True),
        title=title,
        title_align="left",
        border_style="dim",
    )


def _parameters_table(tool: AgentTool) -> Table:
    properties, required = input_properties(tool.tool_spec)
    table = Table(title="Parameters", title_justify="left", title_style="bold", header_style="bold")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("type", overflow="fold")
    table.add_column("required", no_wrap=True)
    table.add_column("default", overflow="fold")
    table.add_column("description", overflow="fold")
    for name, prop in properties.items():
        prop = prop if isinstance(prop, Mapping) else {}
        table.add_row(
            Text(str(name)),
            Text(schema_type(prop)),
            Text("yes", style="bold") if name in required else Text("no", style="dim"),
            Text(json.dumps(prop["default"], default=repr)) if "default" in prop else Text("-", style="dim"),
            Text(str(prop.get("description", ""))),
        )
    if not properties:
        table.add_row(Text("(none)", style="dim"), "", "", "", "")
    return table


def _key_values(title: str, values: Mapping[str, Any]) -> Table:
    table = Table(
        title=title, title_justify="left", title_style="bold", show_header=False, box=None, padding=(0, 2)
    )
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in values.items():
        table.add_row(
            Text(str(key)), Text(value if isinstance(value, str) else json.dumps(value, default=repr))
        )
    return table


def render_tool(tool: AgentTool, loader: Any) -> RenderableType:
    """The whole page for one tool."""
    spec = tool.tool_spec
    status = status_of_tool(tool, loader)
    header = Text.assemble(
        (tool.tool_name, "bold cyan"),
        "  ",
        (f"{tool.tool_type} tool", "magenta"),
        "  ",
        (tool_location(tool, loader), "dim"),
    )
    parts: list[RenderableType] = [
        Panel(Text(tool_description(tool) or "(no description)"), title=header, title_align="left")
    ]
    parts.append(_parameters_table(tool))
    parts.append(_json_block(spec.get("inputSchema", {}).get("json", {}), "input schema (JSON Schema)"))
    output = spec.get("outputSchema")
    if isinstance(output, Mapping):
        parts.append(_json_block(output.get("json", output), "output schema"))
    metadata = get_tool_metadata(tool)
    about: dict[str, Any] = {
        "source": tool_location(tool, loader),
        "version": tool_version(tool, status, short=False),
        "digest": tool_digest(tool),
        "category": tool.category or "-",
        "tags": ", ".join(tool.tags) or "-",
        "dynamic": "yes" if tool.is_dynamic else "no",
        "hot reload": "yes" if tool.supports_hot_reload else "no",
    }
    if metadata is not None:
        about["requires_auth"] = "yes" if metadata.requires_auth else "no"
        limit = metadata.rate_limit
        about["rate_limit"] = (
            f"{limit.requests} requests per {limit.window_seconds:g} s" if limit is not None else "-"
        )
    provenance = _provenance(tool, loader)
    if provenance is not None:
        about["provenance"] = provenance_phrase(provenance)
    if status is not None:
        about["file state"] = str(status.state)
        if status.loaded_at:
            about["loaded at"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.loaded_at))
    parts.append(_key_values("Metadata", about))
    if metadata is not None and metadata.examples:
        for index, example in enumerate(metadata.examples, 1):
            parts.append(_json_block(example, f"example {index}"))
    parts.append(_key_values("Display properties", tool.get_display_properties()))
    return Group(*parts)


def _provenance(tool: AgentTool, loader: Any) -> dict[str, Any] | None:
    """Where the tool's file came from, when it was promoted from a proposal and not edited since."""
    source = loader.registry.source_of(tool.tool_name)
    return None if source is None else provenance_of(Path(source), tuple(loader.paths))


def run(args: argparse.Namespace) -> int:
    """Load and show one tool; exit 2 if there is no such tool."""
    quiet_logs(args.verbose)
    loader, report = load_for_tool(args, args.name, progress_console=stderr_console())
    try:
        component = (
            None if loader.registry.get(args.name) else find_component(loader.registry.snapshot(), args.name)
        )
        if component is not None:  # a prompt, resource or template of that name or URI
            if args.json:
                print_json(component_record(component))
            else:
                stdout_console().print(render_component(component))
            return 0
        tool = find_tool(loader, args.name, report)
        if args.json:
            record = {**tool_record(tool, loader), "provenance": _provenance(tool, loader)}
            print_json(record, default=repr)
        else:
            console: Console = stdout_console()
            console.print(render_tool(tool, loader))
        return 0
    finally:
        loader.close()
