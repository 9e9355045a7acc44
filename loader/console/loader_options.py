"""The options that shape a ``ToolLoader``, and the ``LoaderConfig`` and plugins they make.

Folder filters (``--include``/``--exclude``), isolation (``--isolation``,
``--worker-env``, ``--max-memory-mb``, ``--max-processes``), the gate (``--gate``,
``--example-timeout``) and the call limits (``--call-timeout``, ``--max-result-bytes``,
``--max-concurrent-per-tool``) all end up here, in one config.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from ..hookspecs import hookimpl
from ..reload.config import DEFAULT_MAX_MEMORY_MB, DEFAULT_MAX_PROCESSES
from ..reload.loader import LoaderConfig
from .common import UsageError

__all__ = [
    "ISOLATION_COMMANDS",
    "SourceFilter",
    "add_gate_arguments",
    "add_isolation_arguments",
    "loader_config",
    "loader_plugins",
]

ISOLATION_COMMANDS: Final = ("list", "watch", "call", "serve")
"""The commands that run tool code, and so can run it in worker processes."""


def add_isolation_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the process-isolation options to one command's parser."""
    group = parser.add_argument_group("process isolation")
    group.add_argument(
        "--isolation",
        choices=("thread", "process"),
        default="thread",
        help="run tool imports and calls in this process (thread, the default) or in worker processes "
        "(process: a crashing or stuck tool harms only its worker)",
    )
    group.add_argument(
        "--worker-env",
        action="append",
        default=[],
        metavar="NAME",
        help="with --isolation process: an environment variable (or pattern such as MYAPP_*) workers "
        "inherit besides PATH, HOME, LANG, LC_*, TMPDIR...; repeat or separate with commas",
    )
    group.add_argument(
        "--max-memory-mb",
        type=int,
        default=None,
        metavar="N",
        help="with --isolation process: limit the memory each worker writes to N MB "
        f"(default: {DEFAULT_MAX_MEMORY_MB}; 0: no limit)",
    )
    group.add_argument(
        "--max-processes",
        type=int,
        default=None,
        metavar="N",
        help="with --isolation process: stop a worker, with everything it started, once its tools "
        f"run more than N processes (default: {DEFAULT_MAX_PROCESSES}; 0: no limit)",
    )


def _isolation_config(args: argparse.Namespace, config: LoaderConfig) -> LoaderConfig:
    """``config`` with the isolation options of ``args``."""
    isolation = getattr(args, "isolation", "thread")
    names = tuple(
        name.strip() for item in getattr(args, "worker_env", []) for name in item.split(",") if name.strip()
    )
    limit = getattr(args, "max_memory_mb", None)
    processes = getattr(args, "max_processes", None)
    if isolation != "process" and (names or limit is not None or processes is not None):
        raise UsageError(
            "--worker-env, --max-memory-mb and --max-processes apply to worker processes; "
            "add --isolation process"
        )
    for flag, value in (("--max-memory-mb", limit), ("--max-processes", processes)):
        if value is not None and value < 0:
            raise UsageError(f"{flag} must be a whole number >= 0 (0: no limit), not {value}")
    if isolation == "thread":
        return config
    config = replace(config, isolation="process", worker_env=names)
    if limit is not None:
        config = replace(config, max_memory_mb=limit)
    if processes is not None:
        config = replace(config, max_processes=processes)
    return config


_DEFAULT_TIMEOUT = LoaderConfig().example_timeout


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """``--gate`` and ``--example-timeout SECONDS``."""
    parser.add_argument(
        "--gate",
        action="store_true",
        help="run each changed file's tool examples first; if one fails, keep serving the last good version",
    )
    parser.add_argument(
        "--example-timeout",
        type=float,
        default=_DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long each example may take under --gate (default {_DEFAULT_TIMEOUT:g})",
    )


def _gate_config(args: argparse.Namespace, config: LoaderConfig) -> LoaderConfig:
    """``config`` with the gate on when ``--gate`` was given."""
    if not getattr(args, "gate", False):
        return config
    return replace(config, gate=True, example_timeout=args.example_timeout)


class SourceFilter:
    """A discovery plugin applying ``--include``/``--exclude`` through ``tool_loader_is_tool_source``.

    It only ever says no (or nothing), so the built-in rule still decides for
    the files it lets through. A pattern with a ``/`` matches the path below
    the watched folder; one without matches the file name.
    """

    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.include = tuple(include)
        self.exclude = tuple(exclude)

    @staticmethod
    def _matches(path: Path, root: Path, patterns: Sequence[str]) -> bool:
        try:
            relative = path.relative_to(root).as_posix()
        except ValueError:
            relative = path.name
        return any(fnmatch.fnmatch(relative if "/" in p else path.name, p) for p in patterns)

    @hookimpl
    def tool_loader_is_tool_source(self, path: Path, root: Path) -> bool | None:
        """False for files the patterns leave out; None lets the other rules decide."""
        if self.exclude and self._matches(path, root, self.exclude):
            return False
        if self.include and not self._matches(path, root, self.include):
            return False
        return None


def loader_config(args: argparse.Namespace) -> LoaderConfig:
    """The ``LoaderConfig`` every option of the command asks for, built in one place.

    ``--recursive``; ``--isolation``, ``--worker-env``, ``--max-memory-mb``; ``--gate`` and
    ``--example-timeout``; ``--call-timeout``, ``--max-result-bytes``, ``--max-concurrent-per-tool``.
    """
    config = _isolation_config(args, LoaderConfig(recursive=bool(getattr(args, "recursive", True))))
    config = _gate_config(args, config)
    if hasattr(args, "call_timeout"):
        config = replace(config, call_timeout=args.call_timeout)
    if hasattr(args, "max_result_bytes"):
        config = replace(config, max_result_bytes=args.max_result_bytes)
    if hasattr(args, "max_concurrent_per_tool"):
        config = replace(config, max_concurrent_calls_per_tool=args.max_concurrent_per_tool)
    return config


def loader_plugins(args: argparse.Namespace) -> list[object]:
    """Extra plugins the command's options ask for (``--include``/``--exclude``)."""
    include = getattr(args, "include", None) or []
    exclude = getattr(args, "exclude", None) or []
    return [SourceFilter(include, exclude)] if include or exclude else []
