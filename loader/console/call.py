"""``tool-loader call``: run one tool from the command line, streaming its events as they come.

Stream events go to stderr and the result to stdout, so
``tool-loader call word_count text=hi | jq`` sees only the result.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, cast

from rich.console import Console
from rich.json import JSON
from rich.markup import escape
from rich.text import Text

from ..calls.containment import HostInterrupt
from ..context.handlers import ContextHandlers
from ..names import is_valid_tool_name
from ..registry.snapshot import RegistrySnapshot
from ..results import exception_result, finite_json, is_tool_result_like
from ..types import AgentTool, ToolResult, new_tool_use_id
from .call_context import TerminalContextHandlers
from .call_input import merge_inputs, parse_input, read_inputs
from .common import UsageError, add_dirs_argument, error_console, stderr_console, stdout_console
from .completion import complete_tool_names
from .loader_options import add_gate_arguments
from .raised import RaiseCatcher, formatted_traceback, raising_frame
from .render import find_tool, input_schema, quiet_logs, unreadable_phrase
from .tool_scope import load_for_tool

__all__ = ["HELP", "add_arguments", "parse_input", "run", "stream_tool"]

HELP = "call a tool with JSON input or key=value pairs and show its stream events and result"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``call NAME [JSON] [key=value ...] [--input-file F] [--dir DIR...]``."""
    name = parser.add_argument("name", metavar="NAME", help="the tool to call")
    name.completer = complete_tool_names  # type: ignore[attr-defined]
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="JSON | key=value",
        help="a JSON object and/or key=value pairs, each value read as its parameter's type says "
        '(city=123 is "123" for a string, 123 for an integer; objects and arrays as JSON); '
        "later ones override earlier ones",
    )
    parser.add_argument(
        "--input-file", "-i", type=Path, metavar="F", help="read a JSON object from F ('-' for stdin) first"
    )
    add_dirs_argument(parser, positional=False)
    add_gate_arguments(parser)
    parser.set_defaults(_extra_positionals="inputs")


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


async def stream_tool(
    snapshot: RegistrySnapshot,
    tool: AgentTool,
    input: Any,
    on_event: Callable[[Any], None],
    context_handlers: ContextHandlers | None = None,
) -> ToolResult:
    """Stream ``tool`` through the registry's call runner (its deadline and lanes, as every caller
    gets them) and hand every event but the final result to ``on_event`` as it arrives.

    An event shaped like a ``ToolResult`` is held back until the next one shows
    it was not the last. ``context_handlers`` answer the tool's context calls.
    """
    tool_use_id = new_tool_use_id()
    held: Any = None
    holding = False
    async for event in snapshot.astream(
        tool.tool_name, input, tool_use_id=tool_use_id, context_handlers=context_handlers
    ):
        if holding:
            on_event(held)
            holding = False
        if _is_result(event):
            held, holding = event, True
        else:
            on_event(event)
    return _as_result(held if holding else None, tool_use_id)


def _event_printer(console: Console) -> Callable[[Any], None]:
    def show(event: Any) -> None:
        line = Text("event ", style="dim cyan")
        try:
            line.append_text(JSON.from_data(finite_json(event), indent=None).text)
        except (TypeError, ValueError):
            line.append(repr(event))
        console.print(line, soft_wrap=True)

    return show


def _print_result(console: Console, result: ToolResult) -> None:
    """The result's blocks; an error's JSON twin of its text (validation problems) is shown once."""
    error = result.get("status") == "error"
    blocks = list(result.get("content", []))
    if error and any("text" in block for block in blocks):
        blocks = [block for block in blocks if "json" not in block]
    for block in blocks:
        if "text" in block:
            console.print(
                block["text"], markup=False, highlight=False, soft_wrap=True, style="red" if error else None
            )
        elif "json" in block:
            console.print_json(data=finite_json(block["json"]), default=repr)
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
        elif "audio" in block:
            audio = block["audio"]
            size = len(audio.get("source", {}).get("bytes", b""))
            console.print(f"[audio {audio.get('format', '?')}, {size} bytes]", markup=False, highlight=False)
        elif "resource" in block:
            _print_resource(console, block["resource"])


def _print_resource(console: Console, resource: Any) -> None:
    """An embedded resource: its URI, then its text (a binary one by its size)."""
    uri, mime = resource.get("uri", "?"), resource.get("mimeType")
    if "text" in resource:
        console.print(f"[resource {uri}{f' ({mime})' if mime else ''}]", markup=False, highlight=False)
        console.print(str(resource["text"]), markup=False, highlight=False, soft_wrap=True)
        return
    size = len(resource.get("source", {}).get("bytes", b""))
    console.print(f"[resource {uri} ({mime or 'binary'}), {size} bytes]", markup=False, highlight=False)


def _refuse_folder_first(name: str, inputs: Sequence[str]) -> None:
    """``call DIR NAME ...``, the order other commands take: say how ``call`` wants it.

    Raises:
        UsageError: ``name`` is a folder and the first input a bare tool name (never a valid input).
    """
    if not inputs or not Path(name).is_dir():
        return
    tool, *rest = inputs
    if "=" in tool or not is_valid_tool_name(tool):
        return
    command = shlex.join(["tool-loader", "call", tool, *rest, "--dir", name])
    raise UsageError(
        escape(
            f"{shlex.quote(name)} is a folder: call takes the tool name first and its folders with --dir, "
            f"e.g. {command}"
        )
    )


def run(args: argparse.Namespace) -> int:
    """Load, call, print; exit 1 on an error result, 2 on bad input or an unknown tool."""
    quiet_logs(args.verbose)
    _refuse_folder_first(args.name, args.inputs)
    parts = read_inputs(args.inputs, args.input_file)  # bad JSON is refused before any loading
    err = stderr_console()
    loader, report = load_for_tool(args, args.name, progress_console=err)
    # stdin answers the tool's questions, unless it was the input file
    context = TerminalContextHandlers(err, interactive=sys.stdin.isatty() and str(args.input_file) != "-")
    try:
        tool = find_tool(loader, args.name, report)
        for folder in report.unreadable:  # the tool was found, but others (a namesake?) may hide there
            err.print(f"warning: {unreadable_phrase(folder)}", style="yellow", markup=False, highlight=False)
        data = merge_inputs(parts, input_schema(tool.tool_spec))
        raised: BaseException | None = None
        ending: AbstractContextManager[None] = (
            _EndingNoted(tool.tool_name) if loader.config.isolation == "thread" else nullcontext()
        )
        with RaiseCatcher() as catcher, ending:
            try:
                result = _run_interruptibly(
                    stream_tool(loader.registry.snapshot(), tool, data, _event_printer(err), context)
                )
            except Exception as exc:  # a tool whose stream raises instead of yielding an error result
                result = exception_result("", exc)
                raised = exc
            finally:
                context.close()
        _print_result(stdout_console(), result)
        raised = raised or catcher.exception
        if raised is not None and result.get("status") == "error":
            _print_raise(raised, loader.paths, verbose=bool(args.verbose))
        return 1 if result.get("status") == "error" else 0
    finally:
        loader.close()


class _EndingNoted:
    """In thread mode, a tool that ends the process (``os._exit``) is named, with the way to contain it.

    ``os._exit`` skips every handler and ``finally``, so it is wrapped for the
    call: the note is written, then the process ends with the tool's status.
    """

    def __init__(self, tool_name: str) -> None:
        self._tool_name = tool_name
        self._real: Callable[[int], NoReturn] = os._exit

    def _exit(self, status: int) -> NoReturn:
        message = (
            f"the tool {self._tool_name} ended the process (exit status {status}); "
            "run with --isolation process to contain it"
        )
        error_console().print(message, style="red", markup=False, highlight=False, soft_wrap=True)
        self._real(status)

    def __enter__(self) -> None:
        os._exit = self._exit

    def __exit__(self, *exc: object) -> None:
        os._exit = self._real  # type: ignore[assignment]  # the very function taken in __init__


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise HostInterrupt  # a KeyboardInterrupt containment never mistakes for the tool's own


def _run_interruptibly(coroutine: Coroutine[Any, Any, ToolResult]) -> ToolResult:
    """``asyncio.run``, but Ctrl-C interrupts at once (exit status 130).

    ``asyncio.run`` answers the first Ctrl-C by cancelling its task, which never
    happens while a synchronous tool holds the event loop; with a handler of
    our own installed it leaves SIGINT alone, and KeyboardInterrupt is raised
    wherever the main thread is, tool code included.
    """
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coroutine)
    previous = signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        return asyncio.run(coroutine)
    finally:
        signal.signal(signal.SIGINT, previous)


def _print_raise(exc: BaseException, roots: Sequence[Path], *, verbose: bool) -> None:
    """Where the tool raised (and with ``-v`` the traceback), on stderr."""
    console = error_console()
    if verbose:
        console.print(formatted_traceback(exc), markup=False, highlight=False, soft_wrap=True, style="dim")
    where = raising_frame(exc, roots)
    if where is not None:
        hint = "" if verbose else " (-v for the traceback)"
        console.print(f"raised at {where}{hint}", markup=False, highlight=False, soft_wrap=True, style="red")
