"""``tool-loader check``: a linter for tool folders, for CI.

Errors: files that fail to load (including invalid tool names, which the loader
refuses), files stuck importing, names two files define, and files named like a
real module (``math.py``: ``import math`` never means them). Warnings (errors
with ``--strict``): tools without a real description, parameters without a
description (the generated ``"Parameter <name>"`` counts as none), and
docstrings documenting parameters the function does not have.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import docstring_parser
from rich.table import Table
from rich.text import Text

from ..reload.gate import run_example
from ..reload.loader import ToolLoader
from ..status import FileState, FileStatus, ScanReport
from ..types import AgentTool
from .common import add_dirs_argument, print_json, stderr_console, stdout_console
from .loader_options import sandbox_layers
from .render import (
    ProblemRow,
    conflict_message,
    display_path,
    input_properties,
    load_from_args,
    location,
    module_clash_phrase,
    module_clashes,
    plural,
    print_tracebacks,
    quiet_logs,
    titled_table,
    tool_description,
    tool_source,
    unreadable_phrase,
)
from .sandbox_report import layer_records, layer_table, wants_sandbox

__all__ = [
    "HELP",
    "ExampleRun",
    "Finding",
    "add_arguments",
    "find_problems",
    "finding_record",
    "run",
    "run_examples",
]

HELP = "lint the tool folders: load errors, conflicts, names, descriptions, docstrings (exit 1 on errors)"

ERROR = "error"
WARNING = "warning"
_DOC_PARAM_SECTIONS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
_INVALID_NAME = re.compile(r"invalid tool name", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, pointing at the line to fix."""

    severity: str
    code: str
    file: str | None
    line: int | None
    message: str
    tool: str | None = None
    source: str = ""
    """The offending source line and a caret under the error (syntax errors)."""
    traceback: str = ""

    @property
    def where(self) -> str:
        """``file:line`` relative to the working directory."""
        return location(self.file, self.line)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``check [DIR...] [--strict] [--json]``."""
    add_dirs_argument(parser)
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument(
        "--examples", action="store_true", help="also run every tool's examples (errors if one fails)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the findings as JSON (for CI annotations and scripts)"
    )


def _file_findings(statuses: Iterable[FileStatus]) -> list[Finding]:
    found: list[Finding] = []
    for status in statuses:
        error = status.error
        if status.state in (FileState.FAILED, FileState.STUCK) and error is not None:
            code = "stuck" if status.state is FileState.STUCK else "load-failed"
            if error.exc_type == "InvalidToolNameError" or _INVALID_NAME.search(error.message):
                code = "invalid-name"
            found.append(
                Finding(
                    ERROR,
                    code,
                    error.file or str(status.path),
                    error.line,
                    f"{error.exc_type}: {error.message}",
                    source=error.source,
                    traceback=error.traceback,
                )
            )
        elif status.state is FileState.CONFLICT:
            for name, owner in status.conflicts:
                found.append(
                    Finding(
                        ERROR,
                        "conflict",
                        str(status.path),
                        None,
                        conflict_message(name, owner),
                        name,
                    )
                )
    return found


def _function_name(tool: AgentTool) -> str | None:
    function = getattr(tool, "original_function", None) or getattr(tool, "function", None)
    name = getattr(function, "__name__", None)
    return name if isinstance(name, str) else None


def _documented_parameters(function: Any) -> list[str]:
    """Parameter names the function's docstring documents (Google, reST or NumPy)."""
    doc = inspect.getdoc(function)
    if not doc:
        return []
    try:
        parsed = docstring_parser.parse(doc)
    except docstring_parser.ParseError:
        return []
    names: list[str] = []
    for param in parsed.params:
        if param.args and param.args[0] in _DOC_PARAM_SECTIONS and param.arg_name:
            names.append(param.arg_name.split()[0].lstrip("*"))
    return names


def _tool_findings(tool: AgentTool, loader: ToolLoader) -> list[Finding]:
    found: list[Finding] = []
    name = tool.tool_name
    file, line = tool_source(tool, loader)
    description = tool_description(tool).strip()
    if not description or description in {name, _function_name(tool)}:
        found.append(
            Finding(
                WARNING,
                "no-description",
                file,
                line,
                f"tool {name!r} has no description (write a docstring: the model chooses tools by it)",
                name,
            )
        )
    properties, _required = input_properties(tool.tool_spec)
    for parameter, schema in properties.items():
        text = schema.get("description") if isinstance(schema, dict) else None
        if not isinstance(text, str) or not text.strip() or text.strip() == f"Parameter {parameter}":
            found.append(
                Finding(
                    WARNING,
                    "parameter-description",
                    file,
                    line,
                    f"tool {name!r}: parameter {parameter!r} has no description (document it under Args:)",
                    name,
                )
            )
    function = getattr(tool, "original_function", None)
    if tool.tool_type == "function" and callable(function):
        try:
            accepted = set(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            accepted = set()
        for documented in _documented_parameters(function):
            if accepted and documented not in accepted:
                found.append(
                    Finding(
                        WARNING,
                        "docstring-parameter",
                        file,
                        line,
                        f"tool {name!r}: the docstring documents {documented!r}, which is not a parameter "
                        "of the function",
                        name,
                    )
                )
    return found


def find_problems(loader: ToolLoader, report: ScanReport, *, strict: bool = False) -> list[Finding]:
    """Every finding for a scanned loader, sorted by file and line; warnings become errors if ``strict``."""
    found = _file_findings(report.files)
    for folder in report.unreadable:
        found.append(Finding(ERROR, "unreadable-folder", str(folder.path), None, unreadable_phrase(folder)))
    for path, clash in module_clashes((status.path for status in report.files), loader.paths):
        found.append(
            Finding(ERROR, "module-name", str(path), None, f"{module_clash_phrase(clash)}; rename the file")
        )
    for tool in loader.registry.snapshot().tools():
        found.extend(_tool_findings(tool, loader))
    if strict:
        found = [replace(f, severity=ERROR) if f.severity == WARNING else f for f in found]
    return sorted(found, key=lambda f: (display_path(f.file), f.line or 0, f.severity, f.message))


def finding_record(finding: Finding) -> dict[str, Any]:
    """A finding as a JSON object (``file`` absolute, ``location`` as shown)."""
    return {
        "severity": finding.severity,
        "code": finding.code,
        "file": finding.file,
        "line": finding.line,
        "location": finding.where,
        "tool": finding.tool,
        "message": finding.message,
        "source": finding.source or None,
    }


def _table(findings: list[Finding]) -> Table:
    table = titled_table("Findings")
    table.add_column("location", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("check", no_wrap=True, style="dim")
    table.add_column("message", overflow="fold")
    for finding in findings:
        style = "bold red" if finding.severity == ERROR else "yellow"
        message = Text(finding.message)
        if finding.source:
            message.append("\n" + finding.source, style="bold")
        table.add_row(Text(finding.where), Text(finding.severity, style=style), finding.code, message)
    return table


def run(args: argparse.Namespace) -> int:
    """Load once, report; exit 1 when there are errors (warnings count under ``--strict``)."""
    quiet_logs(args.verbose)
    layers = sandbox_layers(args) if wants_sandbox(args) else None
    if layers is not None and not args.json:
        stdout_console().print(layer_table(layers))
    loader, report = load_from_args(args, progress_console=stderr_console())
    examples: ExampleRun | None = None
    try:
        findings = find_problems(loader, report, strict=args.strict)
        if args.examples:
            examples = run_examples(loader)
            findings += examples.findings
        tool_count = len(loader.registry)
    finally:
        loader.close()
    errors = sum(1 for f in findings if f.severity == ERROR)
    warnings = len(findings) - errors
    if args.json:
        summary: dict[str, Any] = {
            "tools": tool_count,
            "files": len(report.files),
            "errors": errors,
            "warnings": warnings,
            "strict": bool(args.strict),
        }
        if examples is not None:
            summary["examples"] = {"ran": examples.ran, "failed": examples.failed}
        document = {
            "directories": [str(path) for path in loader.paths],
            "findings": [finding_record(f) for f in findings],
            "summary": summary,
        }
        if layers is not None:
            document["sandbox"] = layer_records(layers)
        print_json(document)
        return 1 if errors else 0
    console = stdout_console()
    if findings:
        console.print(_table(findings))
        if args.verbose:
            print_tracebacks(
                console, (ProblemRow(f.where, f.code, f.message, traceback=f.traceback) for f in findings)
            )
    where = ", ".join(display_path(path) for path in loader.paths)
    checked = f"checked {plural(tool_count, 'tool')} in {plural(len(report.files), 'file')} in {where}: "
    console.print(_summary(checked, findings, examples, strict=args.strict), highlight=False)
    return 1 if errors else 0


def _summary(checked: str, findings: list[Finding], examples: ExampleRun | None, *, strict: bool) -> Text:
    """``checked 2 tools in 1 file in tools: 1 error, 0 warnings; 3 examples ran, 1 failed``."""
    errors = sum(1 for f in findings if f.severity == ERROR)
    warnings = len(findings) - errors
    summary = Text(checked)
    if not findings:
        summary.append("no problems found", style="bold green")
    else:
        summary.append(plural(errors, "error"), style="bold red" if errors else "green")
        summary.append(", ")
        summary.append(plural(warnings, "warning"), style="yellow" if warnings else "green")
        if strict and warnings == 0 and errors:
            summary.append(" (--strict: warnings count as errors)", style="dim")
    if examples is not None:
        summary.append(f"; {plural(examples.ran, 'example')} ran, ")
        summary.append(f"{examples.failed} failed", style="bold red" if examples.failed else "green")
    return summary


EXAMPLE_TIMEOUT = 10.0
"""Seconds each example may take under ``check --examples``."""


@dataclass(frozen=True, slots=True)
class ExampleRun:
    """What ``check --examples`` did: how many examples ran, and a finding per failing one."""

    ran: int
    findings: list[Finding]

    @property
    def failed(self) -> int:
        """How many examples failed (one finding each)."""
        return len(self.findings)


def run_examples(loader: ToolLoader, timeout: float = EXAMPLE_TIMEOUT) -> ExampleRun:
    """Run every example of every tool the loader serves (all of them, whatever fails)."""
    found: list[Finding] = []
    ran = 0
    for tool in loader.registry.snapshot().tools():
        for index, example in enumerate(tool.examples):
            ran += 1
            failure = run_example(tool, example, index, timeout)
            if failure is None:
                continue
            file, line = tool_source(tool, loader)
            found.append(
                Finding(ERROR, f"example-{failure.kind}", file, line, failure.message(), tool.tool_name)
            )
    return ExampleRun(ran, found)
