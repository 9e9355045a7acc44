"""The ``tool-loader`` command line: argparse for parsing, rich for every line of output."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Protocol, cast

from rich.markup import escape

from .calls import DEFAULT_CALL_TIMEOUT, CallLimits
from .console.common import UsageError, stderr_console
from .console.isolation_args import ISOLATION_COMMANDS, add_isolation_arguments

__all__ = ["build_parser", "call_timeout_seconds", "main"]


class _CommandModule(Protocol):
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


# command name -> module under loader.console; each module has HELP, add_arguments(parser), run(args) -> int
COMMANDS: dict[str, str] = {
    "list": "loader.console.list_cmd",
    "watch": "loader.console.watch",
    "call": "loader.console.call",
    "inspect": "loader.console.inspect_cmd",
    "check": "loader.console.check",
    "new": "loader.console.new",
    "serve": "loader.console.serve",
}

# Issue 13 (safe iteration): tool history, diff and rollback.
COMMANDS.update(
    {
        "history": "loader.console.history_cmd",
        "diff": "loader.console.diff_cmd",
        "rollback": "loader.console.rollback_cmd",
    }
)


def build_parser() -> argparse.ArgumentParser:
    """The full parser, one sub-command per entry of ``COMMANDS``."""
    parser = argparse.ArgumentParser(
        prog="tool-loader",
        description="Hot-reloading loader for AI-agent tools: list, watch, call, inspect, check, new, serve.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-v info, -vv debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        module = cast(_CommandModule, importlib.import_module(module_name))
        command_parser = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command_parser)
        # -- process isolation (issue 10 B): the same options on every command that runs tool code --
        if name in ISOLATION_COMMANDS:
            add_isolation_arguments(command_parser)
        command_parser.set_defaults(_run=module.run)
    _add_call_timeout(sub.choices["call"], sub.choices["serve"])
    return parser


# -- --call-timeout (call, serve): parsed here, read as args.call_timeout (None: no limit) ---------


def call_timeout_seconds(text: str) -> float | None:
    """``--call-timeout`` as ``LoaderConfig.call_timeout``: seconds, 0 for no limit."""
    try:
        return CallLimits(timeout=float(text)).timeout
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds >= 0 (0: no limit), got {text!r}"
        ) from None


def _add_call_timeout(*parsers: argparse.ArgumentParser) -> None:
    for parser in parsers:
        parser.add_argument(
            "--call-timeout",
            type=call_timeout_seconds,
            default=DEFAULT_CALL_TIMEOUT,
            metavar="SECONDS",
            help=f"stop waiting for a tool call after SECONDS; it returns an error result "
            f"(default: {DEFAULT_CALL_TIMEOUT:g}; 0: no limit)",
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tool-loader`` and ``python -m loader``; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # Positionals may follow options (``call NAME --dir D a=1``): argparse leaves them over.
    spill = getattr(args, "_extra_positionals", None)
    if extra and spill and not any(item.startswith("-") for item in extra):
        setattr(args, spill, [*getattr(args, spill), *extra])
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run = cast(Callable[[argparse.Namespace], int], args._run)
    try:
        return run(args)
    except UsageError as exc:
        stderr_console().print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:  # the user's Ctrl-C (a tool's own KeyboardInterrupt is an error result)
        return 130


if __name__ == "__main__":
    sys.exit(main())
