"""The files ``call NAME`` and ``inspect NAME`` import: those that can define NAME first, the rest if need be.

A one-shot call needs one tool. Importing every file first makes it wait for
the slowest (a file whose import hangs holds it for the whole import timeout).
So the files whose name or text mentions the tool are loaded alone; only when
the tool is not among them does the call scan the whole folder (then its
"unknown tool" message lists everything there is).
"""

from __future__ import annotations

import argparse
import glob
import os
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ..names import normalise_tool_name
from ..reload.loader import ToolLoader
from ..reload.sources import is_default_source_name, is_ignored_dir
from ..reload.walk import walk_folders
from ..status import ScanReport
from .loader_options import SourceFilter, loader_config, loader_plugins
from .render import existing_dirs, load_tools

__all__ = ["candidate_files", "load_for_tool"]

_MAX_READ = 1 << 20
"""The most of one file read to look for the tool's name (larger files are candidates unread)."""


def _mentions(path: str, spellings: Sequence[bytes]) -> bool:
    try:
        with open(path, "rb") as handle:
            text = handle.read(_MAX_READ + 1)
    except OSError:
        return True  # unreadable here: the loader says why
    return len(text) > _MAX_READ or any(spelling in text for spelling in spellings)


def candidate_files(roots: Sequence[Path], name: str, *, recursive: bool) -> tuple[list[Path], bool]:
    """The tool files that may define ``name`` (named like it, or mentioning it), and whether they are all.

    Only text is read: no file's code runs here.
    """
    key = normalise_tool_name(name)
    spellings = sorted({name.encode(), key.encode(), key.replace("_", "-").encode()})
    found: list[Path] = []
    every = True
    for root in roots:
        for directory, dirnames, filenames in walk_folders(str(root)):
            dirnames[:] = [d for d in dirnames if not is_ignored_dir(d)] if recursive else []
            for filename in filenames:
                if not is_default_source_name(filename):
                    continue
                path = os.path.join(directory, filename)
                if normalise_tool_name(filename[:-3]) == key or _mentions(path, spellings):
                    found.append(Path(path))
                else:
                    every = False
    return found, every


def _relative_patterns(roots: Sequence[Path], files: Sequence[Path]) -> list[str]:
    patterns = []
    for path in files:
        for root in roots:
            if path.is_relative_to(root):
                patterns.append(glob.escape(path.relative_to(root).as_posix()))
                break
    return patterns


def load_for_tool(
    args: argparse.Namespace, name: str, *, progress_console: Console | None
) -> tuple[ToolLoader, ScanReport]:
    """A loader holding ``name`` if any file defines it, importing as few files as it can.

    The files that can define it load first, alone; if the tool is not among
    them, every file loads (as ``load_from_args`` would).
    """
    roots = existing_dirs(args.dirs)
    config = loader_config(args)
    plugins = loader_plugins(args)
    files, every = candidate_files(roots, name, recursive=config.recursive)
    if files and not every:
        narrow = SourceFilter(_relative_patterns(roots, files), ())
        loader, report = load_tools(
            roots, progress_console=progress_console, config=config, plugins=[*plugins, narrow]
        )
        if loader.registry.get(name) is not None:
            return loader, report
        loader.close()
    return load_tools(roots, progress_console=progress_console, config=config, plugins=plugins)
