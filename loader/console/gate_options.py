"""``--gate`` for the commands that watch: a save whose tool examples fail never goes live."""

from __future__ import annotations

import argparse
from dataclasses import replace

from ..reload.loader import LoaderConfig

__all__ = ["add_gate_arguments", "gate_config"]

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


def gate_config(args: argparse.Namespace, base: LoaderConfig | None = None) -> LoaderConfig | None:
    """``base`` (default: the loader's defaults) with the gate on when ``--gate`` was given, else ``base``."""
    if not getattr(args, "gate", False):
        return base
    return replace(base or LoaderConfig(), gate=True, example_timeout=args.example_timeout)
