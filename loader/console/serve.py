"""``tool-loader serve``: the tool folders as a Model Context Protocol server that follows every save."""

from __future__ import annotations

import argparse
import functools
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from .common import UsageError, add_dirs_argument, resolve_dirs, stderr_console
from .history_options import add_history_arguments, attach_history
from .loader_options import add_gate_arguments, loader_config, loader_plugins
from .serve_status import StatusLine, reporting

if TYPE_CHECKING:
    from ..mcp.probes import MetricsSource
    from ..mcp.server import MCPToolServer
    from ..mcp.transports import HttpOptions
    from ..reload.loader import ToolLoader

__all__ = ["AUTH_TOKEN_FILE_ENV", "HELP", "add_arguments", "run"]

HELP = "serve the tools over MCP (stdio or streamable HTTP); clients see every change as files are saved"

AUTH_TOKEN_FILE_ENV = "TOOL_LOADER_AUTH_TOKEN_FILE"

_HTTP_ONLY = (
    "host",
    "port",
    "path",
    "stateless",
    "auth_token_file",
    "metrics_auth",
    "no_metrics",
    "ready_requires_clean",
    "health_path",
    "ready_path",
    "metrics_path",
    "session_idle_timeout",
    "header_timeout",
    "keep_alive_timeout",
)
APPLIES_ONLY_WITH = {name: ("transport", "http") for name in _HTTP_ONLY}
"""Options refused on the command line unless ``--transport http`` (``loader.console.cli`` checks them)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``serve [DIR...] [--transport stdio|http] [--host H] [--port N] [--path P]`` and the HTTP options."""
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
        help="interface for --transport http (default: 127.0.0.1, loopback only; others need auth)",
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port for --transport http (default: 8000; 0 picks a free one)"
    )
    parser.add_argument("--path", default="/mcp", help="endpoint path for --transport http (default: /mcp)")
    parser.add_argument("--name", default="tool-loader", help="the server name clients see")
    add_history_arguments(parser, recording=True)
    add_gate_arguments(parser)
    http = parser.add_argument_group("HTTP transport (fleet)")
    http.add_argument(
        "--stateless",
        action="store_true",
        help="no sessions: any replica behind a load balancer can answer any request",
    )
    http.add_argument(
        "--auth-token-file",
        type=Path,
        default=os.environ.get(AUTH_TOKEN_FILE_ENV) or None,
        metavar="PATH",
        help=f"bearer tokens, one per line, re-read when the file changes (env {AUTH_TOKEN_FILE_ENV})",
    )
    http.add_argument("--metrics-auth", action="store_true", help="require a token on the metrics path too")
    http.add_argument("--no-metrics", action="store_true", help="do not serve Prometheus metrics")
    http.add_argument(
        "--ready-requires-clean", action="store_true", help="not ready while any tool file fails to load"
    )
    http.add_argument("--health-path", default="/healthz", help="liveness probe path (default: /healthz)")
    http.add_argument("--ready-path", default="/readyz", help="readiness probe path (default: /readyz)")
    http.add_argument(
        "--metrics-path", default="/metrics", help="Prometheus metrics path (default: /metrics)"
    )
    http.add_argument(
        "--session-idle-timeout",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="forget handshake-era sessions idle this long (default: 1800; 0: never)",
    )
    http.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close connections that take longer to send request headers (default: 10; 0: no limit)",
    )
    http.add_argument(
        "--keep-alive-timeout",
        type=int,
        default=5,
        metavar="SECONDS",
        help="close idle keep-alive connections after this long (default: 5)",
    )


def _say(console: Console, line: str, style: str | None = None) -> None:
    """One plain line (no markup, no wrapping: paths and error messages stay whole and greppable)."""
    console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)


def _check_args(args: argparse.Namespace, dirs: list[Path]) -> None:
    missing = [str(d) for d in dirs if not Path(d).is_dir()]
    if missing:
        raise UsageError(f"not a directory: {', '.join(missing)}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}")
    for option in ("path", "health_path", "ready_path", "metrics_path"):
        if not str(getattr(args, option)).startswith("/"):
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} must start with '/', got {getattr(args, option)!r}")
    for option in ("session_idle_timeout", "header_timeout", "keep_alive_timeout"):
        if getattr(args, option) < 0:
            raise UsageError(f"--{option.replace('_', '-')} must not be negative")


def _http_options(args: argparse.Namespace) -> HttpOptions:
    from ..mcp.auth import TokenFileError, TokenFileVerifier
    from ..mcp.transports import HttpOptions, is_loopback

    verifier = None
    if args.metrics_auth and args.auth_token_file is None:
        raise UsageError(
            f"--metrics-auth needs tokens: give --auth-token-file PATH (or {AUTH_TOKEN_FILE_ENV})"
        )
    if args.auth_token_file is not None:
        try:
            verifier = TokenFileVerifier(args.auth_token_file)
        except TokenFileError as exc:
            raise UsageError(str(exc)) from exc
    elif not is_loopback(args.host):
        raise UsageError(
            f"--host {args.host} is reachable from other machines and a tool server runs code on request: "
            f"give --auth-token-file PATH (or {AUTH_TOKEN_FILE_ENV}), or serve on 127.0.0.1"
        )
    return HttpOptions(
        host=args.host,
        port=args.port,
        path=args.path,
        stateless=args.stateless,
        session_idle_timeout=args.session_idle_timeout or None,
        header_timeout=args.header_timeout or None,
        keep_alive_timeout=args.keep_alive_timeout,
        health_path=args.health_path,
        ready_path=args.ready_path,
        metrics_path=args.metrics_path,
        metrics_require_auth=args.metrics_auth,
        token_verifier=verifier,
    )


def _metrics(server: MCPToolServer, console: Console, wanted: bool) -> MetricsSource | None:
    if not wanted:
        return None
    try:
        from ..mcp.metrics import ServeMetrics
    except ImportError:
        _say(console, "metrics off: install prometheus_client (pip install 'tool-loader[metrics]')", "yellow")
        return None
    return ServeMetrics(server)


def _scan(loader: ToolLoader, console: Console, dirs: list[Path]) -> None:
    report = loader.scan()
    failed = report.failed
    _say(
        console,
        f"loaded {report.tool_count} tools from {len(report.files)} files in {', '.join(map(str, dirs))}"
        + (f" ({len(failed)} failed)" if failed else "")
        + f"; fingerprint {loader.fingerprint()}",
    )
    for status in failed:
        detail = status.error.one_line() if status.error is not None else str(status.state)
        _say(console, f"  {status.state}: {status.path}: {detail}", "red")


def _serve_http(
    args: argparse.Namespace, server: MCPToolServer, loader: ToolLoader, console: Console, dirs: list[Path]
) -> None:
    """Listen first, then scan: probes answer (``/readyz`` 503) while a large folder loads."""
    import anyio

    from ..mcp.probes import Readiness
    from ..mcp.transports import serve_http

    options = _http_options(args)
    readiness = Readiness(server, requires_clean=args.ready_requires_clean)
    metrics = _metrics(server, console, not args.no_metrics)
    listening: list[str] = []
    lock = threading.Lock()

    def announce_when_both() -> None:
        with lock:
            if listening and readiness.scanned:
                _say(console, f"serving {len(loader.registry)} tools at {listening[0]}")

    def scan_then_watch() -> None:
        _scan(loader, console, dirs)
        loader.start()
        readiness.mark_scanned()
        announce_when_both()

    def ready(url: str) -> None:
        _say(console, f"listening at {url}")
        listening.append(url)
        announce_when_both()

    scanner = threading.Thread(target=scan_then_watch, name="tool-loader-initial-scan", daemon=True)
    scanner.start()
    try:
        anyio.run(
            functools.partial(
                serve_http, server, options, readiness=readiness, metrics=metrics, on_ready=ready
            )
        )
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    finally:
        scanner.join()


def run(args: argparse.Namespace) -> int:
    """Load the folders, watch them, and serve until the client leaves (stdio) or Ctrl-C (http).

    Every line this command prints goes to stderr: on stdio, stdout is the protocol channel.
    """
    dirs = resolve_dirs(args.dirs)
    _check_args(args, dirs)
    try:
        import anyio

        from ..mcp.server import MCPToolServer
        from ..mcp.transports import serve_stdio
    except ImportError as exc:
        raise UsageError(
            f"`tool-loader serve` needs the MCP SDK ({exc}); install it with: pip install 'tool-loader[mcp]'"
        ) from exc
    from ..reload.loader import ToolLoader

    console = stderr_console()
    if args.transport == "http":
        _http_options(args)  # refuse bad auth settings before loading anything
    loader = ToolLoader(dirs, config=loader_config(args), plugins=loader_plugins(args))
    if loader.config.isolation == "process":  # /proc/<pid>/cmdline is readable by every worker
        from ..isolation.host import hide_option_values

        hide_option_values(["--auth-token-file"])
    attach_history(loader, args)
    server = MCPToolServer(
        loader.registry,
        loader=loader,
        name=args.name,
        instructions="These tools come from a live folder and change as files are saved.",
    )

    def show(line: StatusLine) -> None:
        _say(console, line.text, line.style)

    try:
        with reporting(loader.registry, loader, show):
            if args.transport == "stdio":
                _scan(loader, console, dirs)
                loader.start()
                _say(console, "serving over stdio")
                anyio.run(serve_stdio, server)
            else:
                _serve_http(args, server, loader, console, dirs)
    finally:
        server.close()
        loader.close()
        loader.registry.close()
    return 0
