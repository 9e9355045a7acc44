"""``tool-loader list``: load the folders once and show every tool, then every file that failed."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from ..components.skills import skill_entries, skill_folders, skill_of_tool
from ..reload.loader import ToolLoader
from ..status import FileState, ScanReport
from ..types import AgentTool, ComponentKind
from .common import add_dirs_argument, print_json, stderr_console, stdout_console
from .components_view import (
    component_record,
    components_phrase,
    components_table,
    skill_record,
    skills_table,
)
from .proposal_view import quarantine_phrase
from .render import (
    display_path,
    load_from_args,
    module_clash_phrase,
    module_clashes,
    plural,
    print_tracebacks,
    problem_rows,
    problems_phrase,
    problems_table,
    quiet_logs,
    status_record,
    tool_record,
    tools_table,
    unreadable_phrase,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = (
    "load the tool folders once and list every tool "
    "(exit status 1 if a file failed or conflicts, or a folder is unreadable)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``list [DIR...] [--json]``."""
    add_dirs_argument(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print machine-readable JSON (tools with specs, files with status)",
    )


def run(args: argparse.Namespace) -> int:
    """Scan without watching; exit 1: a file failed, got stuck or lost a name, or a folder went unread."""
    quiet_logs(args.verbose)
    loader, report = load_from_args(args, progress_console=stderr_console())
    try:
        tools = loader.registry.snapshot().tools()
        if args.json:
            print_json(_document(loader, report, tools), default=repr)
        else:
            _print(stdout_console(), loader, report, tools, verbose=bool(args.verbose))
        return 1 if report.failed or report.unreadable else 0
    finally:
        loader.close()


def _document(loader: ToolLoader, report: ScanReport, tools: Sequence[AgentTool]) -> dict[str, Any]:
    components = loader.registry.snapshot().components()
    folders = skill_folders(components)
    return {
        "directories": [str(path) for path in loader.paths],
        "tools": [_with_skill(tool_record(tool, loader), tool, folders) for tool in tools],
        "components": [component_record(c) for c in components if c.kind is not ComponentKind.SKILL_FILE],
        "skills": [skill_record(e, report.failed) for e in skill_entries(components)],
        "files": [status_record(status) for status in report.files],
        "unreadable": [
            {"path": str(f.path), "reason": f.reason, "watched_folder": f.root} for f in report.unreadable
        ],
        "quarantined": sorted(loader.quarantined),
        "summary": {
            "tools": len(tools),
            "components": sum(1 for c in components if c.kind is not ComponentKind.SKILL_FILE),
            "files": len(report.files),
            "failed": sum(1 for s in report.failed if s.state is not FileState.CONFLICT),
            "conflicts": sum(1 for s in report.failed if s.state is FileState.CONFLICT),
            "seconds": round(report.seconds, 4),
        },
    }


def _with_skill(record: dict[str, Any], tool: AgentTool, folders: dict[str, str]) -> dict[str, Any]:
    """A tool's record, with ``skill`` when it is one of a skill's tools (``skills/<path>/tools/``)."""
    skill = skill_of_tool(tool.source_file, folders)
    return record if skill is None else {**record, "skill": skill}


def _print(
    console: Console, loader: ToolLoader, report: ScanReport, tools: Sequence[AgentTool], *, verbose: bool
) -> None:
    where = ", ".join(display_path(path) for path in loader.paths)
    if tools:
        console.print(tools_table(tools, loader, title=f"Tools in {where}", width=console.width))
    components = loader.registry.snapshot().components()
    if components_phrase(c for c in components if c.kind is not ComponentKind.SKILL):
        console.print(components_table(components, title=f"Prompts and resources in {where}"))
    skills = skills_table(components, report.failed, title=f"Skills in {where}")
    if skills is not None:
        console.print(skills)
    problems = problems_table(report.failed, title="Files that did not load")
    if problems is not None:
        console.print(problems)
    if verbose:
        print_tracebacks(console, problem_rows(report.failed))
    for folder in report.unreadable:
        label = ("error: " if folder.root else "warning: ", "bold red")
        console.print(Text.assemble(label, unreadable_phrase(folder)), soft_wrap=True)
    for path, clash in module_clashes((s.path for s in report.files), loader.paths):
        warning = f"{display_path(path)}: {module_clash_phrase(clash)}; rename it"
        console.print(Text.assemble(("warning: ", "bold yellow"), warning), soft_wrap=True)
    summary = Text(
        f"{plural(len(tools), 'tool')}"
        + (f", {phrase}" if (phrase := components_phrase(components)) else "")
        + f" from {plural(len(report.files), 'file')} in {where} "
        f"({report.seconds:.2f} s)"
    )
    if report.failed:
        summary.append(f"; {problems_phrase(report.failed)}", style="bold red")
    if report.unreadable:
        summary.append(f"; {plural(len(report.unreadable), 'folder')} unreadable", style="bold red")
    console.print(summary, highlight=False)
    if loader.quarantined:
        console.print(quarantine_phrase(loader.quarantined), style="yellow", highlight=False, soft_wrap=True)
