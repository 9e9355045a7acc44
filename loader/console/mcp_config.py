"""``tool-loader mcp-config``: the JSON an MCP client needs to launch ``tool-loader serve`` on some folders.

The command is this interpreter (``sys.executable -m loader serve``) with
absolute folder paths, so the client starts the same installation from any
working directory. ``--write`` merges the entry into an existing client file
atomically (a temporary file renamed over it), after copying the old file to
``<file>.bak``, keeping every other entry.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.text import Text

from .common import UsageError, print_json, resolve_dirs, stderr_console

__all__ = ["CLIENTS", "HELP", "add_arguments", "client_entry", "merge_into", "run"]

HELP = "print (or --write) the MCP client configuration that launches `tool-loader serve` on the folders"

CLIENTS = ("claude", "cursor", "vscode")
_SECTION = {"claude": "mcpServers", "cursor": "mcpServers", "vscode": "servers"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``mcp-config [--client claude|cursor|vscode] [--name NAME] [--write PATH] [DIR...]``."""
    parser.add_argument("dirs", nargs="*", metavar="DIR", type=Path, help="tool folders (default: ./tools)")
    parser.add_argument(
        "--client", choices=CLIENTS, default="claude", help="the client's file format (default claude)"
    )
    parser.add_argument("--name", default="tool-loader", help="the server's key in the client file")
    parser.add_argument(
        "--write",
        type=Path,
        metavar="PATH",
        help="merge into this client file (a backup is kept as PATH.bak)",
    )


def client_entry(client: str, dirs: list[Path]) -> dict[str, Any]:
    """The server entry: this interpreter running ``-m loader serve`` on absolute folders."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "loader", "serve", *(str(d.resolve()) for d in dirs)],
    }
    if client == "vscode":
        entry = {"type": "stdio", **entry}
    return entry


def merge_into(path: Path, client: str, name: str, entry: dict[str, Any]) -> Path | None:
    """Write ``entry`` into the client file at ``path``; return the backup's path (None for a new file).

    Raises:
        UsageError: The existing file is not a JSON object (naming the file and the position).
    """
    section = _SECTION[client]
    document: dict[str, Any] = {}
    backup: Path | None = None
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"{path} line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg}); not changing it"
            ) from None
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        if not isinstance(loaded, dict) or not isinstance(loaded.get(section, {}), dict):
            raise UsageError(f"{path}: expected a JSON object with an object {section!r}; not changing it")
        document = loaded
        backup = path.with_name(path.name + ".bak")
        shutil.copy2(path, backup)
    document.setdefault(section, {})[name] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(document, indent=2) + "\n")
        if backup is not None:
            shutil.copymode(backup, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return backup


def run(args: argparse.Namespace) -> int:
    """Print the client JSON, or merge it into ``--write PATH``."""
    dirs = resolve_dirs(args.dirs)
    missing = [str(d) for d in dirs if not Path(d).is_dir()]
    if missing:
        raise UsageError(f"not a directory: {', '.join(missing)}")
    entry = client_entry(args.client, dirs)
    if args.write is None:
        document = {_SECTION[args.client]: {args.name: entry}}
        print_json(document)
        return 0
    backup = merge_into(args.write, args.client, args.name, entry)
    message = Text.assemble(("wrote ", "green"), (str(args.write), "bold"), f" (server {args.name!r})")
    if backup is not None:
        message.append(f"; the previous file is in {backup}")
    stderr_console().print(message, highlight=False, soft_wrap=True)
    return 0
