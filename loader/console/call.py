"""``tool-loader call``: run one tool from the command line, streaming its events as they come.

Stream events go to stderr and the result to stdout, so
``tool-loader call word_count text=hi | jq`` sees only the result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.json import JSON
from rich.markup import escape
from rich.text import Text

from ..results import exception_result, is_tool_result_like
from ..types import AgentTool, ToolResult, ToolUse, new_tool_use_id
from .common import UsageError, add_dirs_argument, stderr_console, stdout_console
from .completion import complete_tool_names
from .render import find_tool, load_from_args, quiet_logs

__all__ = ["HELP", "add_arguments", "parse_input", "run", "stream_tool"]

HELP = "call a tool with JSON input or key=value pairs and show its stream events and result"

_PAIR = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$", re.DOTALL)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``call NAME [JSON] [key=value ...] [--input-file F] [--dir DIR...]``."""
    name = parser.add_argument("name", metavar="NAME", help="the tool to call")
    name.completer = complete_tool_names  # type: ignore[attr-defined]
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="JSON | key=value",
        help="a JSON object and/or key=value pairs (a value is JSON if it parses, else a string: "
        'a=2 is 2, name=Ada is "Ada"); later ones override earlier ones',
    )
    parser.add_argument(
        "--input-file", "-i", type=Path, metavar="F", help="read a JSON object from F ('-' for stdin) first"
    )
    add_dirs_argument(parser, positional=False)
    parser.set_defaults(_extra_positionals="inputs")


def _json_problem(exc: json.JSONDecodeError, source: str) -> str:
    """``invalid JSON in <source>: <msg> at line L, column C`` with the line and a caret under the spot."""
    lines = exc.doc.splitlines() or [""]
    shown = lines[min(exc.lineno, len(lines)) - 1]
    caret = " " * (exc.colno - 1) + "^"
    return (
        f"invalid JSON in {source}: {exc.msg} at line {exc.lineno}, column {exc.colno}\n  {shown}\n  {caret}"
    )


def _load_object(text: str, source: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(escape(_json_problem(exc, source))) from None
    if not isinstance(value, dict):
        raise UsageError(escape(f"the input in {source} must be a JSON object, not {type(value).__name__}"))
    return value


def _pair_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def parse_input(
    inputs: Sequence[str], input_file: Path | None, stdin: Callable[[], str] | None = None
) -> Any:
    """Merge the input file, a JSON object argument and ``key=value`` pairs, in that order.

    Raises:
        UsageError: Invalid JSON (naming where and the position), a JSON value
            that is not an object, or more than one JSON argument.
    """
    data: dict[str, Any] = {}
    if input_file is not None:
        if str(input_file) == "-":
            data.update(_load_object(stdin() if stdin is not None else sys.stdin.read(), "stdin"))
        else:
            try:
                text = input_file.read_text(encoding="utf-8")
            except OSError as exc:
                raise UsageError(
                    escape(f"cannot read --input-file {input_file}: {exc.strerror or exc}")
                ) from None
            data.update(_load_object(text, str(input_file)))
    documents = 0
    for index, item in enumerate(inputs, 1):
        pair = None if item.lstrip().startswith(("{", "[")) else _PAIR.match(item)
        if pair is not None:
            data[pair.group(1)] = _pair_value(pair.group(2))
            continue
        documents += 1
        if documents > 1:
            raise UsageError(
                escape(f"more than one JSON input given (argument {index}: {item!r}); merge them")
            )
        data.update(_load_object(item, f"argument {index}"))
    return data


def _is_result(event: Any) -> bool:
    return is_tool_result_like(event) or is_tool_result_like(getattr(event, "tool_result", None))


def _as_result(event: Any, tool_use_id: str) -> ToolResult:
    for candidate in (event, getattr(event, "tool_result", None)):
        if is_tool_result_like(candidate):
            return cast(ToolResult, candidate)
    return {
        "toolUseId": tool_use_id,
        "status": "error",
        "content": [{"text": "Error: the tool finished without producing a result"}],
    }


async def stream_tool(tool: AgentTool, input: Any, on_event: Callable[[Any], None]) -> ToolResult:
    """Run ``tool.stream`` and hand every event but the final result to ``on_event`` as it arrives.

    An event shaped like a ``ToolResult`` is held back until the next one shows
    it was not the last.
    """
    tool_use: ToolUse = {"toolUseId": new_tool_use_id(), "name": tool.tool_name, "input": input}
    held: Any = None
    holding = False
    async for event in tool.stream(tool_use, {}):
        if holding:
            on_event(held)
            holding = False
        if _is_result(event):
            held, holding = event, True
        else:
            on_event(event)
    return _as_result(held if holding else None, tool_use["toolUseId"])


def _event_printer(console: Console) -> Callable[[Any], None]:
    def show(event: Any) -> None:
        line = Text("event ", style="dim cyan")
        try:
            line.append_text(JSON.from_data(event, indent=None).text)
        except (TypeError, ValueError):
            line.append(repr(event))
        console.print(line, soft_wrap=True)

    return show


def _print_result(console: Console, result: ToolResult) -> None:
    error = result.get("status") == "error"
    for block in result.get("content", []):
        if "text" in block:
            console.print(
                block["text"], markup=False, highlight=False, soft_wrap=True, style="red" if error else None
            )
        elif "json" in block:
            console.print_json(data=block["json"], default=repr)
        elif "image" in block:
            image = block["image"]
            size = len(image.get("source", {}).get("bytes", b""))
            console.print(f"[image {image.get('format', '?')}, {size} bytes]", markup=False, highlight=False)
        elif "document" in block:
            document = block["document"]
            size = len(document.get("source", {}).get("bytes", b""))
            console.print(
                f"[document {document.get('name', '?')} ({document.get('format', '?')}), {size} bytes]",
                markup=False,
                highlight=False,
            )


def run(args: argparse.Namespace) -> int:
    """Load, call, print; exit 1 on an error result, 2 on bad input or an unknown tool."""
    quiet_logs(args.verbose, tool_errors=True)
    data = parse_input(args.inputs, args.input_file)
    err = stderr_console()
    loader, report = load_from_args(args, progress_console=err)
    try:
        tool = find_tool(loader, args.name, report)
        try:
            result = asyncio.run(stream_tool(tool, data, _event_printer(err)))
        except Exception as exc:  # a tool whose stream raises instead of yielding an error result
            result = exception_result("", exc)
        _print_result(stdout_console(), result)
        return 1 if result.get("status") == "error" else 0
    finally:
        loader.close()
