"""``tool-loader completion bash|zsh|fish``: the shell script that completes commands, options and tool names.

argcomplete does the work: the script calls ``tool-loader`` back with the
command line in the environment, and argparse's own parser answers, so new
commands and options complete without touching this file. Tool names for
``call`` and ``inspect`` come from loading the folders the line names (or the
configured ones).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

__all__ = ["HELP", "SHELLS", "add_arguments", "autocomplete", "complete_tool_names", "run"]

HELP = 'print a shell completion script: eval "$(tool-loader completion bash)" (or zsh, fish)'

SHELLS = ("bash", "zsh", "fish")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``completion bash|zsh|fish``."""
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def run(args: argparse.Namespace) -> int:
    """Print the script for ``args.shell``."""
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["tool-loader"], shell=args.shell))
    sys.stdout.flush()
    return 0


def complete_tool_names(prefix: str, parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """The names of the tools in the folders the command line names (else the configured ones)."""
    from . import settings
    from .common import resolve_dirs
    from .render import load_tools

    logging.disable(logging.CRITICAL)
    dirs = list(getattr(parsed_args, "dirs", None) or [])
    if not dirs:
        environ_dirs = settings.env_name("dirs")
        if environ_dirs in os.environ:
            dirs = [d for d in os.environ[environ_dirs].split(os.pathsep) if d]
        else:
            file = settings.load_file_config()
            found = file.value(getattr(parsed_args, "_command", None), "dirs")
            if found is not None and isinstance(found[0], list) and file.path is not None:
                dirs = [str(file.path.parent / d) for d in found[0]]
    try:
        loader, _report = load_tools(resolve_dirs(dirs))
    except Exception:
        return []
    try:
        return [name for name in loader.registry.names() if name.startswith(prefix)]
    finally:
        loader.close()


def autocomplete(parser: argparse.ArgumentParser) -> None:
    """Answer a completion request from the shell script (exits); does nothing otherwise."""
    import argcomplete

    argcomplete.autocomplete(parser)
