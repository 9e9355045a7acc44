"""What the console commands share beyond arguments: loading once, describing tools, rich tables.

Every command shows tools and files the same way (``file:line`` relative to
the working directory, ``city*`` for required parameters, the content hash as
the version of a file), so those spellings live here, once.
"""

from __future__ import annotations

import argparse
import difflib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..fingerprint import tool_digest
from ..importing.module_names import ModuleClash, ModuleClashKind, module_clash
from ..names import normalise_tool_name
from ..reload.loader import LoaderConfig, ToolLoader
from ..status import FileNote, FileState, FileStatus, LoadErrorInfo, ScanReport, UnreadableFolder
from ..types import AgentTool, ToolSpec
from .common import UsageError, resolve_dirs
from .component_words import component_labels
from .fit import Column, clip, clip_left, fit_columns
from .loader_options import loader_config, loader_plugins

__all__ = [
    "NOTE_WORDING",
    "STATE_STYLES",
    "TOOL_LOGGERS",
    "ProblemRow",
    "callback_line",
    "conflict_message",
    "did_you_mean",
    "display_path",
    "error_record",
    "existing_dirs",
    "find_tool",
    "format_duration",
    "input_properties",
    "input_schema",
    "load_from_args",
    "load_tools",
    "location",
    "module_clash_phrase",
    "module_clashes",
    "note_words",
    "one_line",
    "parameter_labels",
    "plain_console",
    "plural",
    "print_tracebacks",
    "problem_rows",
    "problem_text",
    "problems_phrase",
    "problems_table",
    "quiet_logs",
    "status_of_tool",
    "status_record",
    "titled_table",
    "tool_description",
    "tool_location",
    "tool_record",
    "tool_source",
    "tool_version",
    "tools_table",
    "unreadable_phrase",
]

STATE_STYLES: Mapping[str, str] = {
    "loaded": "green",
    "added": "green",
    "updated": "cyan",
    "recovered": "bold green",
    "removed": "magenta",
    "failed": "bold red",
    "stuck": "bold red",
    "rejected": "bold red",
    "conflict": "yellow",
}
"""Colours of file states and event kinds, shared by every view."""

TOOL_LOGGERS: tuple[str, ...] = (
    "loader.tools.function_tool",
    "loader.tools.class_tool",
    "loader.tools.module_tool",
)
"""Loggers that report a tool's own exception (which ``call`` already shows as the error result)."""


# ------------------------------------------------------------------ set-up
def existing_dirs(dirs: Sequence[Path] | None) -> list[Path]:
    """The directories to load (``resolve_dirs`` rules), each checked to exist.

    Raises:
        UsageError: A given path is not a directory.
    """
    resolved = resolve_dirs(dirs)
    missing = [str(d) for d in resolved if not Path(d).is_dir()]
    if missing:
        raise UsageError(escape(f"not a directory: {', '.join(missing)}"))
    return resolved


def quiet_logs(verbose: int, *, tool_errors: bool = False) -> None:
    """Keep loader warnings off the console: commands report load failures themselves.

    With ``-v`` nothing is changed. ``tool_errors`` also silences the
    tracebacks logged when a tool raises, for commands that show the error result.
    """
    if verbose:
        return
    logging.getLogger("loader").setLevel(logging.ERROR)
    if tool_errors:
        for name in TOOL_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _off_sys_path(dirs: Sequence[Path]) -> None:
    """Take the watched folders off this command's ``sys.path`` (``PYTHONPATH``, ``python -m`` inside one).

    On it, a tool file named like a module (``colorsys.py``) would be what ``import colorsys`` returns
    to every tool and to the loader itself.
    """
    real = {os.path.realpath(d) for d in dirs}
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) not in real]


def load_tools(
    dirs: Sequence[Path],
    *,
    progress_console: Console | None = None,
    config: LoaderConfig | None = None,
    plugins: Sequence[object] = (),
) -> tuple[ToolLoader, ScanReport]:
    """Build a loader for ``dirs`` and scan once, showing progress on ``progress_console`` (normally stderr).

    A terminal gets a transient bar naming a slow file's import; another console one line per slow file.
    """
    from .scan_progress import scan_showing_progress  # it names files as this module does

    _off_sys_path(dirs)
    loader = ToolLoader(dirs, config=config, plugins=plugins)
    return loader, scan_showing_progress(loader, progress_console)


def load_from_args(
    args: argparse.Namespace, *, progress_console: Console | None = None
) -> tuple[ToolLoader, ScanReport]:
    """``load_tools`` for a command's folder options (DIR, --include, --exclude, --recursive)."""
    return load_tools(
        existing_dirs(args.dirs),
        progress_console=progress_console,
        config=loader_config(args),
        plugins=loader_plugins(args),
    )


def find_tool(loader: ToolLoader, name: str, report: ScanReport) -> AgentTool:
    """The tool called ``name`` (``-`` and ``_`` alike), or a usage error listing what there is.

    Raises:
        UsageError: No such tool; the message lists the available tools and
            any files that failed (the tool may be in one of them).
    """
    found = loader.registry.get(name)
    if found is not None:
        return found
    if normalise_tool_name(name) in loader.quarantined:
        raise UsageError(f"tool {name!r} is quarantined (tool-loader unquarantine {name} --dir DIR)")
    names = loader.registry.names()
    message = f"unknown tool {name!r}; {did_you_mean(name, names)}available: {', '.join(names) or 'none'}"
    if report.unreadable:
        message += " (" + "; ".join(unreadable_phrase(folder) for folder in report.unreadable) + ")"
    failed = report.failed
    # The tool most likely lives in the failed file named like it, or in the only failed file:
    # say why that one failed (a rejected example under --gate, a syntax error) rather than send
    # the user to another command.
    key = name.replace("-", "_").lower()
    named = [s for s in failed if s.path.stem.replace("-", "_").lower() == key]
    likely = named[0] if named else failed[0] if len(failed) == 1 else None
    if likely is not None and likely.error is not None:
        error = likely.error
        reason = error.message.strip().splitlines()[0] if error.message.strip() else ""
        message += f" ({display_path(likely.path)} did not load: {error.exc_type}: {reason}"
        if len(failed) > 1:
            message += f"; {plural(len(failed) - 1, 'other file')} did not load either"
        message += ")"
    elif failed:
        where = ", ".join(display_path(s.path) for s in failed)
        message += (
            f" ({plural(len(failed), 'file')} did not load: {where}; run `tool-loader check` for details)"
        )
    raise UsageError(escape(message))


# ---------------------------------------------------------------- spelling
def did_you_mean(name: str, names: Iterable[str]) -> str:
    """``did you mean 'calculator'? `` for the names closest to a mistyped one ("" when none is close).

    ``-`` and ``_`` count as the same, as in a lookup; so does letter case, since a name that
    differs only in case is the likeliest one meant.
    """
    by_key: dict[str, str] = {}
    for known in names:
        by_key.setdefault(_spelling_key(known), known)
    close = difflib.get_close_matches(_spelling_key(name), list(by_key), n=3, cutoff=0.6)
    if not close:
        return ""
    return f"did you mean {' or '.join(repr(by_key[key]) for key in close)}? "


def _spelling_key(name: str) -> str:
    return normalise_tool_name(name).lower()


def display_path(path: str | os.PathLike[str] | None) -> str:
    """``path`` relative to the working directory when it is inside it, else as given."""
    if path is None:
        return "?"
    candidate = Path(path)
    try:
        return str(candidate.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(candidate)


def location(file: str | os.PathLike[str] | None, line: int | None) -> str:
    """``file:line`` with the file relative to the working directory."""
    shown = display_path(file)
    return f"{shown}:{line}" if line else shown


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h``, ``2.0 d``: how long a version served."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def plural(count: int, noun: str) -> str:
    """``1 tool``, ``2 tools``: a count with its noun, so summaries read naturally."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def problems_phrase(statuses: Iterable[FileStatus]) -> str:
    """``1 file failed, 2 conflicts``: failures and conflicts counted apart ("" when neither)."""
    listed = list(statuses)
    failed = sum(1 for s in listed if s.state in (FileState.FAILED, FileState.STUCK, FileState.REJECTED))
    conflicts = sum(1 for s in listed if s.state is FileState.CONFLICT)
    parts = []
    if failed:
        parts.append(f"{plural(failed, 'file')} failed")
    if conflicts:
        parts.append(plural(conflicts, "conflict"))
    return ", ".join(parts)


def unreadable_phrase(folder: UnreadableFolder) -> str:
    """Why tools may be missing: a folder the scan could not list (the same words in every command)."""
    if folder.root:
        return f"cannot read {display_path(folder.path)} ({folder.reason}): no tool file in it was loaded"
    where = display_path(folder.path)
    return f"cannot read the sub-folder {where} ({folder.reason}): its tool files were not loaded"


def conflict_message(name: str, owner: str | os.PathLike[str]) -> str:
    """``tool 'greet' is already defined in tools/a.py, which keeps it (...)``: who keeps it, and why."""
    return (
        f"tool {name!r} is already defined in {display_path(owner)}, which keeps it "
        "(the first owner keeps a name; among files loaded together, the path that sorts first)"
    )


def module_clash_phrase(clash: ModuleClash) -> str:
    """Why a file may not be named ``<name>.py``: one wording for ``new``, ``check``, ``list``, ``watch``."""
    if clash.kind is ModuleClashKind.STANDARD_LIBRARY:
        what = f"the standard-library module {clash.name}"
    else:
        what = f"the installed module {clash.name}" + (
            f" ({display_path(clash.origin)})" if clash.origin else ""
        )
    return (
        f"{clash.name!r} is also {what}: `import {clash.name}` means that module in every tool file, "
        "never a tool file of that name"
    )


def module_clashes(paths: Iterable[Path], roots: Sequence[Path]) -> list[tuple[Path, ModuleClash]]:
    """The tool files named like a real top-level module (``math.py``, ``json.py``), in order."""
    found = []
    for path in paths:
        clash = module_clash(path.stem, roots) if path.name != "__init__.py" else None
        if clash is not None:
            found.append((path, clash))
    return found


def tool_source(tool: AgentTool, loader: ToolLoader | None = None) -> tuple[str | None, int | None]:
    """Where a tool is defined: its ``source_file``/``source_line``, else the file that registered it."""
    file = tool.source_file
    line = tool.source_line
    if not isinstance(file, str) or not file:
        file = loader.registry.source_of(tool.tool_name) if loader is not None else None
    return file, line if isinstance(line, int) else None


def tool_location(tool: AgentTool, loader: ToolLoader | None = None) -> str:
    """``file:line`` of a tool's definition."""
    file, line = tool_source(tool, loader)
    return location(file, line)


def one_line(text: str | None, limit: int | None = None) -> str:
    """The first line of ``text``, cut to ``limit`` characters with an ellipsis."""
    first = (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""
    if limit is not None and len(first) > limit:
        return first[: max(0, limit - 1)].rstrip() + "…"
    return first


def tool_description(tool: AgentTool) -> str:
    """The description the model reads."""
    return str(tool.tool_spec.get("description") or "")


def input_schema(spec: ToolSpec) -> Mapping[str, Any]:
    """The JSON schema of a tool's input (empty when the spec has none)."""
    schema = spec.get("inputSchema", {})
    schema = schema.get("json", schema) if isinstance(schema, Mapping) else {}
    return schema if isinstance(schema, Mapping) else {}


def input_properties(spec: ToolSpec) -> tuple[dict[str, Any], set[str]]:
    """The input schema's top-level properties and the required names."""
    schema = input_schema(spec)
    if not schema:
        return {}, set()
    properties = schema.get("properties")
    required = schema.get("required")
    return (
        dict(properties) if isinstance(properties, Mapping) else {},
        {str(r) for r in required} if isinstance(required, list) else set(),
    )


def parameter_labels(spec: ToolSpec) -> list[str]:
    """Parameter names in schema order, required ones marked ``name*``."""
    properties, required = input_properties(spec)
    return [f"{name}*" if name in required else str(name) for name in properties]


def status_of_tool(tool: AgentTool, loader: ToolLoader) -> FileStatus | None:
    """The status of the file a tool was loaded from."""
    source = loader.registry.source_of(tool.tool_name)
    return loader.file_status(source) if source else None


def _metadata(tool: AgentTool) -> Any:
    """The ``ToolMetadata`` of a class tool (None for other kinds)."""
    from ..tools.class_tool import get_tool_metadata

    return get_tool_metadata(tool)


def tool_version(tool: AgentTool, status: FileStatus | None, *, short: bool = True) -> str:
    """A class tool's declared version plus the file's content hash (``1.2.0 #3f2a9c1b``)."""
    parts: list[str] = []
    metadata = _metadata(tool)
    if metadata is not None:
        parts.append(str(metadata.version))
    if status is not None and status.content_hash:
        parts.append("#" + (status.content_hash[:8] if short else status.content_hash))
    return " ".join(parts) or "-"


# -------------------------------------------------------------------- JSON
def _jsonable(value: Any) -> Any:
    """``value`` after a JSON round trip (anything JSON cannot hold becomes its ``repr``)."""
    return json.loads(json.dumps(value, default=repr))


def error_record(error: LoadErrorInfo | None) -> dict[str, Any] | None:
    """A load error as a JSON object."""
    if error is None:
        return None
    return {
        "type": error.exc_type,
        "message": error.message,
        "file": error.file,
        "line": error.line,
        "location": location(error.file, error.line),
        "source": error.source,
        "traceback": error.traceback,
    }


NOTE_WORDING = {FileNote.REWRITES_ITSELF: "rewrites itself when imported; reloads slowed down"}
"""How each ``FileNote`` reads in the console and in JSON output."""


def note_words(status: FileStatus) -> str:
    """The file's notes as one phrase (empty when it has none)."""
    return "; ".join(NOTE_WORDING.get(note, str(note)) for note in status.notes)


def status_record(status: FileStatus) -> dict[str, Any]:
    """A file's status as a JSON object."""
    return {
        "path": str(status.path),
        "display_path": display_path(status.path),
        "state": str(status.state),
        "tools": list(status.tools),
        "content_hash": status.content_hash,
        "loaded_at": status.loaded_at,
        "load_ms": None if status.load_seconds is None else round(status.load_seconds * 1000, 3),
        "error": error_record(status.error),
        "conflicts": [{"tool": name, "owner": str(owner)} for name, owner in status.conflicts],
        "notes": [NOTE_WORDING.get(note, str(note)) for note in status.notes],
    }


def tool_record(tool: AgentTool, loader: ToolLoader) -> dict[str, Any]:
    """A tool with its full spec and metadata as a JSON object."""
    file, line = tool_source(tool, loader)
    status = status_of_tool(tool, loader)
    metadata = _metadata(tool)
    spec = tool.tool_spec
    properties, required = input_properties(spec)
    return {
        "name": tool.tool_name,
        "kind": tool.tool_type,
        "source": {"file": file, "line": line, "location": location(file, line)},
        "description": tool_description(tool),
        "parameters": [{"name": name, "required": name in required} for name in properties],
        "category": tool.category,
        "tags": list(tool.tags),
        "version": None if metadata is None else metadata.version,
        "content_hash": None if status is None else status.content_hash,
        "digest": tool_digest(tool),
        "dynamic": tool.is_dynamic,
        "spec": _jsonable(spec),
        "metadata": None if metadata is None else _jsonable(metadata.model_dump(mode="json", by_alias=True)),
        "display": _jsonable(tool.get_display_properties()),
    }


# ------------------------------------------------------------------ tables
def titled_table(title: str | None, *, title_style: str = "bold", collapse_padding: bool = False) -> Table:
    """An edgeless table under a left-aligned title: the one look every command's tables share."""
    return Table(
        title=title,
        title_justify="left",
        title_style=title_style,
        header_style="bold",
        box=box.SIMPLE_HEAD,
        collapse_padding=collapse_padding,
        pad_edge=False,
        show_edge=False,
    )


def _state_text(state: str) -> Text:
    return Text(state, style=STATE_STYLES.get(state, ""))


_HEADERS = {"dynamic": "dyn"}
_STYLES = {"name": "bold cyan", "source": "dim", "version": "dim"}


def _tool_cells(tool: AgentTool, loader: ToolLoader) -> dict[str, list[str]]:
    """Each column's lines for one tool (parameters, tags and version one item a line)."""
    status = status_of_tool(tool, loader)
    return {
        "name": [tool.tool_name],
        "kind": [tool.tool_type],
        "source": [tool_location(tool, loader)],
        "description": [one_line(tool_description(tool))],
        "parameters": parameter_labels(tool.tool_spec) or ["-"],
        "category": [tool.category or "-"],
        "tags": list(tool.tags) or ["-"],
        "version": tool_version(tool, status).split(" "),
        "dynamic": ["yes" if tool.is_dynamic else "no"],
    }


def _list_columns(rows: Sequence[dict[str, list[str]]]) -> list[Column]:
    def longest(name: str) -> int:
        return max([len(_HEADERS.get(name, name)), *(len(line) for row in rows for line in row[name])])

    return [
        Column("name", 0, min(longest("name"), 24), longest("name")),
        Column("kind", 4, 8, longest("kind")),
        Column("source", 1, min(longest("source"), 20), min(longest("source"), 32), most=longest("source")),
        Column("description", 2, 28, min(longest("description"), 40), flexible=True),
        Column("parameters", 3, min(longest("parameters"), 14), longest("parameters")),
        Column("category", 6, min(longest("category"), 10), longest("category")),
        Column("tags", 7, min(longest("tags"), 10), longest("tags")),
        Column("version", 5, 9, longest("version")),
        Column("dynamic", 8, 3, 3, header="dyn"),
    ]


def tools_table(
    tools: Iterable[AgentTool], loader: ToolLoader, *, title: str | None = None, width: int = 200
) -> Table:
    """One row per tool, fitted to ``width``: least useful columns dropped first, names never broken.

    Only descriptions wrap (between words); names, paths and parameters are cut with ``…``.
    """
    rows = [_tool_cells(tool, loader) for tool in tools]
    widths = fit_columns(_list_columns(rows), width, gap=2)  # a divider and a padding space
    table = titled_table(title, collapse_padding=True)
    for name, size in widths.items():
        wraps = name == "description"
        table.add_column(
            _HEADERS.get(name, name),
            width=size,
            no_wrap=not wraps,
            overflow="fold" if wraps else "ellipsis",
            style=_STYLES.get(name, ""),
        )
    for row in rows:
        cells = []
        for name, size in widths.items():
            if name == "description":
                cells.append(Text(row[name][0]))
                continue
            cut = clip_left if name == "source" else clip
            cells.append(Text("\n".join(cut(line, size) for line in row[name])))
        table.add_row(*cells)
    return table


class ProblemRow(NamedTuple):
    """One failed, stuck or conflicting file as the console shows it."""

    where: str
    state: str
    what: str
    source: str = ""
    """The offending source line and a caret under the error (syntax errors), as Python prints them."""
    traceback: str = ""


def problem_rows(statuses: Iterable[FileStatus]) -> list[ProblemRow]:
    """A ``ProblemRow`` for every failed, stuck or conflicting file."""
    rows: list[ProblemRow] = []
    for status in statuses:
        if (
            status.state in (FileState.FAILED, FileState.STUCK, FileState.REJECTED)
            and status.error is not None
        ):
            error = status.error
            where = location(error.file or str(status.path), error.line)
            what = f"{error.exc_type}: {error.message}"
            serving = [*status.tools, *component_labels(status.components)]
            if serving:
                what += f" (still serving the last good {', '.join(serving)})"
            rows.append(ProblemRow(where, str(status.state), what, error.source, error.traceback))
        elif status.state is FileState.CONFLICT:
            for name, owner in status.conflicts:
                rows.append(ProblemRow(display_path(status.path), "conflict", conflict_message(name, owner)))
    return rows


def problem_text(row: ProblemRow) -> Text:
    """The error, then the source line and its caret on lines of their own (never folded)."""
    text = Text(row.what)
    if row.source:
        text.append("\n" + row.source, style="bold")
    return text


def problems_table(statuses: Iterable[FileStatus], *, title: str = "Problems") -> Table | None:
    """Failed, stuck and conflicting files with their error and its ``file:line``; None when all is well."""
    rows = problem_rows(statuses)
    if not rows:
        return None
    table = titled_table(title, title_style="bold red")
    table.add_column("file", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("error", overflow="fold")
    for row in rows:
        table.add_row(Text(row.where), _state_text(row.state), problem_text(row))
    return table


def print_tracebacks(console: Console, rows: Iterable[ProblemRow]) -> None:
    """At ``-v``: each failed file's traceback, as Python printed it, under its ``file:line``."""
    for row in rows:
        if row.traceback:
            console.print(f"\n{row.where}:", style="bold red", markup=False, highlight=False)
            console.print(row.traceback, markup=False, highlight=False, soft_wrap=True)


def callback_line(console: Console) -> Callable[[str], None]:
    """A function printing one plain line (no markup, no wrapping) and flushing it at once."""

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
        console.file.flush()

    return say


def plain_console() -> Console:
    """A stdout console that never emits ANSI codes (for pipes and logs)."""
    return Console(file=sys.stdout, force_terminal=False, no_color=True, highlight=False, soft_wrap=True)
