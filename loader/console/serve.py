"""``tool-loader serve``: the tool folders as a Model Context Protocol server that follows every save."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from .common import (
    UsageError,
    add_dirs_argument,
    loader_config,
    loader_plugins,
    resolve_dirs,
    stderr_console,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve the tools over MCP (stdio or streamable HTTP); clients see every change as files are saved"

APPLIES_ONLY_WITH = {
    "host": ("transport", "http"),
    "port": ("transport", "http"),
    "path": ("transport", "http"),
}
"""Options refused on the command line unless ``--transport http`` (``loader.cli`` checks them)."""

_STYLES = {
    "tools changed": "cyan",
    "load failed": "bold red",
    "load stuck": "bold red",
    "conflict": "yellow",
    "recovered": "green",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``serve [DIR...] [--transport stdio|http] [--host H] [--port N] [--path P]``."""
    add_dirs_argument(parser)
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio for a client that launches this command (default), http for streamable HTTP",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface for --transport http (default: 127.0.0.1, loopback only)",
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port for --transport http (default: 8000; 0 picks a free one)"
    )
    parser.add_argument("--path", default="/mcp", help="endpoint path for --transport http (default: /mcp)")
    parser.add_argument("--name", default="tool-loader", help="the server name clients see")


def _say(console: Console, line: str, style: str | None = None) -> None:
    """One plain line (no markup, no wrapping: paths and error messages stay whole and greppable)."""
    console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)


def _status_printer(console: Console) -> Callable[[str], None]:
    def show(line: str) -> None:
        _say(
            console, line, next((style for prefix, style in _STYLES.items() if line.startswith(prefix)), None)
        )

    return show


def run(args: argparse.Namespace) -> int:
    """Load the folders, watch them, and serve until the client leaves (stdio) or Ctrl-C (http).

    Every line this command prints goes to stderr: on stdio, stdout is the protocol channel.
    """
    dirs = resolve_dirs(args.dirs)
    missing = [str(d) for d in dirs if not Path(d).is_dir()]
    if missing:
        raise UsageError(f"not a directory: {', '.join(missing)}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}")
    if not str(args.path).startswith("/"):
        raise UsageError(f"--path must start with '/', got {args.path!r}")
    try:
        import anyio

        from ..mcp_server import MCPToolServer
    except ImportError as exc:
        raise UsageError(
            f"`tool-loader serve` needs the MCP SDK ({exc}); install it with: pip install 'tool-loader[mcp]'"
        ) from exc
    from ..reload.loader import ToolLoader

    console = stderr_console()
    loader = ToolLoader(dirs, config=loader_config(args), plugins=loader_plugins(args))
    report = loader.scan()
    failed = report.failed
    _say(
        console,
        f"loaded {report.tool_count} tools from {len(report.files)} files in {', '.join(map(str, dirs))}"
        + (f" ({len(failed)} failed)" if failed else ""),
    )
    for status in failed:
        detail = status.error.one_line() if status.error is not None else str(status.state)
        _say(console, f"  {status.state}: {status.path}: {detail}", "red")
    server = MCPToolServer(
        loader.registry,
        loader=loader,
        name=args.name,
        instructions="These tools come from a live folder and change as files are saved.",
        status=_status_printer(console),
    )
    loader.start()
    try:
        if args.transport == "stdio":
            _say(console, "serving over stdio")
            anyio.run(server.run_stdio)
        else:

            def ready(url: str) -> None:
                _say(console, f"serving {len(loader.registry)} tools at {url}")

            try:
                anyio.run(
                    functools.partial(server.run_http, args.host, args.port, path=args.path, on_ready=ready)
                )
            except OSError as exc:
                raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    finally:
        loader.close()
        loader.registry.close()
    return 0
