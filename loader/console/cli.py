"""The ``tool-loader`` command line: argparse for parsing, rich for every line of output.

Each command is a module under ``loader.console`` with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; adding a command is one
line in ``COMMANDS``. Optional module attributes:

* ``APPLIES_ONLY_WITH = {"host": ("transport", "http")}``: an option given on
  the command line when another option has a different value is a usage error.

Every option of every command is configurable through ``TOOL_LOADER_<OPTION>``
and ``[tool.tool-loader]`` in the nearest ``pyproject.toml`` that has one (``console/settings.py``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

from rich.markup import escape

from .. import __version__
from ..calls.runner import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_BYTES, CallLimits
from . import settings
from .common import UsageError, error_console, set_quiet
from .loader_options import (
    IMPORT_TIMEOUT_COMMANDS,
    ISOLATION_COMMANDS,
    add_import_timeout_argument,
    add_isolation_arguments,
)

__all__ = [
    "COMMANDS",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "ParsedCommand",
    "build_parser",
    "call_timeout_seconds",
    "command_named",
    "main",
    "parse",
    "settings_for",
]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


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
    "search": "loader.console.search_cmd",
    "mcp-config": "loader.console.mcp_config",
    "config": "loader.console.config_cmd",
    "completion": "loader.console.completion",
    "history": "loader.console.history_cmd",
    "diff": "loader.console.diff_cmd",
    "rollback": "loader.console.rollback_cmd",
    "propose": "loader.console.propose_cmd",
    "proposals": "loader.console.proposals_cmd",
    "promote": "loader.console.promote_cmd",
    "withdraw": "loader.console.withdraw_cmd",
    "quarantine": "loader.console.quarantine_cmd",
    "unquarantine": "loader.console.quarantine_cmd",
}

_EPILOG = """\
configuration (highest first):
  1. options on the command line
  2. environment variables TOOL_LOADER_<OPTION>, e.g. TOOL_LOADER_DIRS=tools:more_tools
  3. the [tool.tool-loader] table of the nearest pyproject.toml that has one (walking up from here);
     [tool.tool-loader.<command>] overrides it for one command
  4. the defaults shown in each command's --help
`tool-loader config` prints the effective settings and where each came from.

exit status: 0 ok, 1 failure or error result, 2 usage error, 130 interrupted.
"""


def _add_global_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    """``-v``, ``-q`` and ``--no-color``, accepted before or after the command."""
    default: Any = argparse.SUPPRESS if after_command else None
    group = parser.add_argument_group("global options")
    group.add_argument(
        "-v", "--verbose", action="count", default=default, help="log more (-v info, -vv debug, tracebacks)"
    )
    group.add_argument(
        "-q", "--quiet", action="store_true", default=default, help="only results and errors: no progress"
    )
    group.add_argument("--no-color", action="store_true", default=default, help="no colours (as NO_COLOR=1)")


def _module(name: str) -> _CommandModule:
    return cast(_CommandModule, importlib.import_module(COMMANDS[name]))


def command_named(argv: Sequence[str] | None) -> str | None:
    """The command ``argv`` (None: this process's arguments) runs: its first word that is not a global
    option, when that is a command.

    None for ``--help``, ``--version``, no command or an unknown one, which need the full parser.
    """
    for word in sys.argv[1:] if argv is None else argv:
        if word in ("-h", "--help", "-V", "--version"):
            return None
        if not word.startswith("-"):  # the global options take no values
            return word if word in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, one sub-command per entry of ``COMMANDS``.

    With ``only``, the other commands are names without options and their modules are not imported:
    a command line that runs ``only`` parses the same, and a command starts in less time.
    """
    parser = argparse.ArgumentParser(
        prog="tool-loader",
        description="Hot-reloading loader for AI-agent tools: " + ", ".join(COMMANDS) + ".",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"tool-loader {__version__}")
    _add_global_options(parser, after_command=False)
    parser.set_defaults(verbose=0, quiet=False, no_color=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        module = _module(name)
        command_parser = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command_parser)
        if name in ISOLATION_COMMANDS:  # the same options on every command that runs tool code
            add_isolation_arguments(command_parser)
        if name in IMPORT_TIMEOUT_COMMANDS:
            add_import_timeout_argument(command_parser)
        if name in CALL_TIMEOUT_COMMANDS:
            _add_call_timeout(command_parser)
        _add_global_options(command_parser, after_command=True)
        command_parser.set_defaults(_run=module.run, _command=name)
    return parser


_Limit = TypeVar("_Limit")

CALL_TIMEOUT_COMMANDS = ("call", "serve")


def _call_limit(text: str, read: Callable[[str], _Limit], expected: str) -> _Limit:
    """``text`` read as a ``CallLimits`` value (which checks it); else argparse's error naming it."""
    try:
        return read(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def call_timeout_seconds(text: str) -> float | None:
    """``--call-timeout`` as ``LoaderConfig.call_timeout``: seconds, 0 for no limit."""
    return _call_limit(
        text, lambda t: CallLimits(timeout=float(t)).timeout, "a number of seconds >= 0 (0: no limit)"
    )


def result_bytes(text: str) -> int | None:
    """``--max-result-bytes`` as ``LoaderConfig.max_result_bytes``: bytes, 0 for no limit."""
    return _call_limit(
        text,
        lambda t: CallLimits(max_result_bytes=int(t)).max_result_bytes,
        "a whole number of bytes >= 0 (0: no limit)",
    )


def concurrency_cap(text: str) -> int:
    """``--max-concurrent-per-tool`` as ``LoaderConfig.max_concurrent_calls_per_tool``: at least 1."""
    return _call_limit(
        text,
        lambda t: CallLimits(max_concurrent_per_tool=int(t)).max_concurrent_per_tool,
        "a whole number >= 1",
    )


def _add_call_timeout(parser: argparse.ArgumentParser) -> None:
    """The call limits: ``--call-timeout``, ``--max-result-bytes``, ``--max-concurrent-per-tool``."""
    parser.add_argument(
        "--call-timeout",
        type=call_timeout_seconds,
        default=DEFAULT_CALL_TIMEOUT,
        metavar="SECONDS",
        help=f"stop waiting for a tool call after SECONDS; it returns an error result "
        f"(default: {DEFAULT_CALL_TIMEOUT:g}; 0: no limit)",
    )
    parser.add_argument(
        "--max-result-bytes",
        type=result_bytes,
        default=DEFAULT_MAX_RESULT_BYTES,
        metavar="BYTES",
        help="a larger tool result becomes an error result naming the limit and the size "
        f"(default: {DEFAULT_MAX_RESULT_BYTES} = 32 MiB; 0: no limit)",
    )
    parser.add_argument(
        "--max-concurrent-per-tool",
        type=concurrency_cap,
        default=CallLimits().max_concurrent_per_tool,
        metavar="N",
        help="calls of one tool running at once; more wait in line within their call timeout "
        f"(default: {CallLimits().max_concurrent_per_tool})",
    )


def _subparsers(parser: argparse.ArgumentParser) -> Mapping[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return cast(Mapping[str, argparse.ArgumentParser], action.choices)
    return {}


class ParsedCommand:
    """A parsed command line with every option filled from its configuration layer."""

    def __init__(self, args: argparse.Namespace, settings: settings.Settings) -> None:
        self.args = args
        self.settings = settings


def parse(
    argv: Sequence[str] | None,
    *,
    environ: Mapping[str, str] | None = None,
    parser: argparse.ArgumentParser | None = None,
) -> ParsedCommand:
    """Parse ``argv`` and fill options from env, ``pyproject.toml`` and defaults.

    Raises:
        SystemExit: argparse's own usage errors (status 2), ``--help``, ``--version``.
        UsageError: A configured value does not fit its option, or an option
            does not apply with the others given.
    """
    parser = parser or build_parser(only=command_named(argv))
    defaults = _prepare(parser)
    args, extra = parser.parse_known_args(argv)
    # Positionals may follow options (``call NAME --dir D a=1``): argparse leaves them over.
    spill = getattr(args, "_extra_positionals", None)
    if extra and spill and not any(item.startswith("-") for item in extra):
        setattr(args, spill, [*(getattr(args, spill) or []), *extra])
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    command = cast(str, args._command)
    effective = settings.resolve(
        args,
        [
            *settings.configurable_actions(parser),
            *settings.configurable_actions(_subparsers(parser)[command]),
        ],
        defaults[command],
        command=command,
        file=settings.load_file_config(),
        environ=os.environ if environ is None else environ,
    )
    _check_applies(command, effective)
    return ParsedCommand(args, effective)


def _prepare(parser: argparse.ArgumentParser) -> dict[str, dict[str, Any]]:
    """Every command's original defaults (globals included), with the parser's own set to None."""
    global_defaults = {"verbose": 0, "quiet": False, "no_color": False}
    settings.prepare(parser)
    parser.set_defaults(verbose=None, quiet=None, no_color=None)
    return {
        name: {**global_defaults, **settings.prepare(command_parser)}
        for name, command_parser in _subparsers(parser).items()
    }


def settings_for(command: str, environ: Mapping[str, str] | None = None) -> settings.Settings:
    """The settings ``command`` would run with given no options (env, file, defaults)."""
    parser = build_parser(only=command)
    defaults = _prepare(parser)
    return settings.resolve(
        argparse.Namespace(),
        [
            *settings.configurable_actions(parser),
            *settings.configurable_actions(_subparsers(parser)[command]),
        ],
        defaults[command],
        command=command,
        file=settings.load_file_config(),
        environ=os.environ if environ is None else environ,
    )


def _check_applies(command: str, effective: settings.Settings) -> None:
    rules: Mapping[str, tuple[str, str]] = getattr(_module(command), "APPLIES_ONLY_WITH", {})
    for dest, (other, wanted) in rules.items():
        given = effective.values.get(dest)
        current = effective.values.get(other)
        if given is None or current is None or given.source != "command line":
            continue
        if str(current.value) != wanted:
            option = "--" + dest.replace("_", "-")
            raise UsageError(
                f"{command} {option} applies only with --{other.replace('_', '-')} {wanted} "
                f"(the {other.replace('_', ' ')} is {current.value}, from {current.source})"
            )


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to ``sys.stderr`` as it is at each record, not as it was when logging was set up.

    A progress bar that diverts ``sys.stderr`` then prints a tool's log lines
    above itself, as it does its ``print`` and ``warnings``, instead of
    splicing them into the bar.
    """

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _apply_globals(args: argparse.Namespace) -> None:
    if args.no_color:
        os.environ["NO_COLOR"] = "1"
    set_quiet(bool(args.quiet))
    level = logging.ERROR if args.quiet else logging.WARNING - 10 * min(int(args.verbose or 0), 2)
    handler = _CurrentStderr()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


def _usage_error(message: str) -> int:
    error_console().print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tool-loader`` and ``python -m loader``; returns the exit status."""
    completing = "_ARGCOMPLETE" in os.environ
    parser = build_parser(only=None if completing else command_named(argv))
    if completing:
        from .completion import autocomplete

        autocomplete(parser)
    try:
        parsed = parse(argv, parser=parser)
    except UsageError as exc:
        return _usage_error(str(exc))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    args = parsed.args
    args._settings = parsed.settings
    _apply_globals(args)
    run = cast(Callable[[argparse.Namespace], int], args._run)
    try:
        return run(args)
    except UsageError as exc:
        return _usage_error(str(exc))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
