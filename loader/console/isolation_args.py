"""The ``--isolation``, ``--worker-env`` and ``--max-memory-mb`` options, and the config they make."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Final

from ..reload.loader import LoaderConfig
from .common import UsageError

__all__ = ["ISOLATION_COMMANDS", "add_isolation_arguments", "loader_config"]

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
        help="with --isolation process: limit each worker's address space to N MB",
    )


def loader_config(args: argparse.Namespace, base: LoaderConfig | None = None) -> LoaderConfig:
    """``base`` (default ``LoaderConfig()``) with the isolation options of ``args``."""
    config = base or LoaderConfig()
    isolation = getattr(args, "isolation", "thread")
    names = tuple(
        name.strip() for item in getattr(args, "worker_env", []) for name in item.split(",") if name.strip()
    )
    limit = getattr(args, "max_memory_mb", None)
    if isolation != "process" and (names or limit is not None):
        raise UsageError(
            "--worker-env and --max-memory-mb apply to worker processes; add --isolation process"
        )
    if limit is not None and limit < 1:
        raise UsageError(f"--max-memory-mb must be a positive number of megabytes, not {limit}")
    if isolation == "thread":
        return config
    return replace(config, isolation="process", worker_env=names, max_memory_mb=limit)
