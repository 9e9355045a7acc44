"""``tool-loader serve``: the tool folders as a Model Context Protocol server that follows every save."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from ..distribution import install_command
from ..reload.file_steps import LOAD_FAILED
from .common import UsageError, add_dirs_argument, resolve_dirs, stderr_console
from .history_options import add_history_arguments, attach_history
from .loader_options import add_gate_arguments, loader_config, loader_plugins
from .render import plural
from .serve_status import StatusLine, reporting

if TYPE_CHECKING:
    from ..mcp.drain import DrainReport
    from ..mcp.probes import MetricsSource
    from ..mcp.server import MCPToolServer
    from ..mcp.streams import StdioWire
    from ..mcp.transports import HttpOptions
    from ..reload.loader import ToolLoader

__all__ = ["AUTH_TOKEN_FILE_ENV", "HELP", "add_arguments", "http_options", "run"]

HELP = "serve the tools over MCP (stdio or streamable HTTP); clients see every change as files are saved"

AUTH_TOKEN_FILE_ENV = "TOOL_LOADER_AUTH_TOKEN_FILE"

_HTTP_ONLY = (
    "host",
    "port",
    "path",
    "stateless",
    "json_response",
    "auth_token_file",
    "metrics_auth",
    "no_metrics",
    "ready_requires_clean",
    "health_path",
    "ready_path",
    "metrics_path",
    "session_idle_timeout",
    "header_timeout",
    "body_timeout",
    "max_connections",
    "keep_alive_timeout",
    "shutdown_grace",
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
    parser.add_argument(
        "--agent-authoring",
        action="store_true",
        help="also serve propose_tool(filename, source) and list_proposals() for the first folder "
        "(proposals are gated in the sandbox; docs/agent-written-tools.md)",
    )
    parser.add_argument(
        "--autonomy",
        choices=("propose", "auto"),
        default="propose",
        help="with --agent-authoring: 'propose' (default) leaves promotion to a person; "
        "'auto' also serves promote_proposal(proposal_id)",
    )
    parser.add_argument(
        "--discovery",
        choices=("all", "search", "hybrid"),
        default="all",
        help="all lists every tool (default); search lists search_tools and call_tool; "
        "hybrid also the @tool(always_load=True) tools",
    )
    add_history_arguments(parser, recording=True)
    add_gate_arguments(parser)
    http = parser.add_argument_group("HTTP transport (fleet)")
    http.add_argument(
        "--stateless",
        action="store_true",
        help="no sessions: any replica behind a load balancer can answer any request",
    )
    http.add_argument(
        "--json-response",
        action="store_true",
        help="answer each request with one JSON body, not an SSE stream: results over 1 MiB reach the "
        "MCP SDK's client, but no progress or questions while a call runs",
    )
    http.add_argument(
        "--auth-token-file",
        type=Path,
        default=os.environ.get(AUTH_TOKEN_FILE_ENV) or None,
        metavar="PATH",
        help=f"bearer tokens, one per line, re-read when the file changes (env {AUTH_TOKEN_FILE_ENV})",
    )
    http.add_argument(
        "--metrics-auth",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="require a token on the metrics path (default: whenever --auth-token-file guards MCP; "
        "--no-metrics-auth leaves it open)",
    )
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
        default=300.0,
        metavar="SECONDS",
        help="forget handshake-era sessions idle this long (default: 300; 0: never)",
    )
    http.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close connections that take longer to send request headers (default: 10; 0: no limit)",
    )
    http.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="answer 408 when a request body takes longer after its headers (default: 30; 0: no limit)",
    )
    http.add_argument(
        "--max-connections",
        type=int,
        default=512,
        metavar="N",
        help="connections served at once; more are answered 503 (default: 512, lowered to leave the loader "
        "a quarter of the open-files limit; 0: only that cap)",
    )
    http.add_argument(
        "--shutdown-grace",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM or Ctrl-C, refuse new requests and give calls in flight this long to finish; "
        "then they get an error result and the server exits (default: 30)",
    )
    http.add_argument(
        "--keep-alive-timeout",
        type=int,
        default=5,
        metavar="SECONDS",
        help="close idle keep-alive connections after this long (default: 5)",
    )


_AT_A_TERMINAL = (
    ": waiting for an MCP client on stdin, which is this terminal; to use the tools, let a client "
    "launch the server (`tool-loader mcp-config` prints the configuration it needs). Ctrl-C to stop"
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
    for option in (
        "session_idle_timeout",
        "header_timeout",
        "body_timeout",
        "keep_alive_timeout",
        "max_connections",
        "shutdown_grace",
    ):
        if getattr(args, option) < 0:
            raise UsageError(f"--{option.replace('_', '-')} must not be negative")


def http_options(args: argparse.Namespace) -> HttpOptions:
    """The HTTP transport's options from the command line.

    Raises:
        UsageError: Settings that cannot serve safely (metrics auth without tokens, a public host without
            tokens, an unusable token file).
    """
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
        json_response=args.json_response,
        session_idle_timeout=args.session_idle_timeout or None,
        header_timeout=args.header_timeout or None,
        body_timeout=args.body_timeout or None,
        max_connections=args.max_connections or None,
        keep_alive_timeout=args.keep_alive_timeout,
        shutdown_grace=args.shutdown_grace,
        health_path=args.health_path,
        ready_path=args.ready_path,
        metrics_path=args.metrics_path,
        metrics_require_auth=args.metrics_auth if args.metrics_auth is not None else verifier is not None,
        token_verifier=verifier,
    )


def _metrics(server: MCPToolServer, console: Console, wanted: bool) -> MetricsSource | None:
    if not wanted:
        return None
    try:
        from ..mcp.metrics import ServeMetrics
    except ImportError:
        _say(console, f"metrics off: needs the metrics extra: {install_command('metrics')}", "yellow")
        return None
    return ServeMetrics(server)


def _add_authoring_tools(loader: ToolLoader, args: argparse.Namespace, dirs: list[Path]) -> None:
    """``--agent-authoring``: the proposal tools for the first folder, beside the folder's own."""
    if not args.agent_authoring:
        return
    from ..authoring.agent_tools import authoring_tools
    from ..authoring.gate import GateOptions
    from ..isolation.sandbox.options import SandboxOptions

    options = GateOptions(
        sandbox=SandboxOptions(best_effort=bool(getattr(args, "sandbox_best_effort", False)))
    )
    for tool in authoring_tools(dirs[0], autonomy=args.autonomy, options=options):
        loader.registry.register(tool)


def _scan(loader: ToolLoader, console: Console, dirs: list[Path]) -> None:
    report = loader.scan()
    failed = report.failed
    _say(
        console,
        f"loaded {plural(report.tool_count, 'tool')} from {plural(len(report.files), 'file')} "
        f"in {', '.join(map(str, dirs))}"
        + (f" ({plural(len(failed), 'file')} failed)" if failed else "")
        + f"; fingerprint {loader.fingerprint()}",
    )


def _serve_http(
    args: argparse.Namespace, server: MCPToolServer, loader: ToolLoader, console: Console, dirs: list[Path]
) -> None:
    """Listen first, then scan: probes answer (``/readyz`` 503) while a large folder loads."""
    import anyio

    from ..mcp.probes import Readiness
    from ..mcp.transports import serve_http

    options = http_options(args)
    readiness = Readiness(server, requires_clean=args.ready_requires_clean)
    metrics = _metrics(server, console, not args.no_metrics)
    listening: list[str] = []
    lock = threading.Lock()

    def announce_when_both() -> None:
        with lock:
            if listening and readiness.scanned:
                _say(console, f"serving {plural(len(loader.registry), 'tool')} at {listening[0]}")

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
    loader.threads.watch(scanner)  # a scan that dies leaves /readyz 503 for good: /healthz must say so
    scanner.start()
    try:
        anyio.run(
            functools.partial(
                serve_http,
                server,
                options,
                readiness=readiness,
                metrics=metrics,
                on_ready=ready,
                on_draining=functools.partial(
                    _draining, console, " /readyz now 503,", options.shutdown_grace
                ),
                on_drained=functools.partial(_drained, console),
            )
        )
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    finally:
        scanner.join()


def run(args: argparse.Namespace) -> int:
    """Load the folders, watch them, and serve until the client leaves (stdio) or a signal drains the server.

    Every line this command prints goes to stderr: on stdio, stdout is the protocol channel.
    """
    dirs = resolve_dirs(args.dirs)
    _check_args(args, dirs)
    if not args.verbose:  # each load failure has its own line (serve_status): not a second one in the log
        logging.getLogger("loader.reload.loader").addFilter(_not_a_load_failure)
    try:
        import anyio

        from ..mcp.discovery import Discovery
        from ..mcp.server import MCPToolServer
        from ..mcp.transports import serve_stdio
    except ImportError as exc:
        missing = exc.__cause__ if isinstance(exc.__cause__, ImportError) else exc
        raise UsageError(
            "`tool-loader serve` needs the mcp extra (the MCP SDK); "
            f"install it with: {install_command('mcp')} (missing here: {missing.name or missing})"
        ) from exc
    from ..reload.loader import ToolLoader

    console = stderr_console()
    if args.transport == "http":
        http_options(args)  # refuse bad auth settings before loading anything
    with _standard_streams(stdio=args.transport == "stdio") as wire:
        loader = ToolLoader(dirs, config=loader_config(args), plugins=loader_plugins(args))
        if loader.config.isolation in ("process", "sandbox"):  # /proc/<pid>/cmdline: readable to workers
            from ..isolation.host import hide_option_values

            hide_option_values(["--auth-token-file"])
        recorder = None
        try:
            recorder = attach_history(loader, args)
            _add_authoring_tools(loader, args, dirs)
            server = MCPToolServer(
                loader.registry,
                loader=loader,
                name=args.name,
                instructions="These tools come from a live folder and change as files are saved.",
                discovery=Discovery(args.discovery),
            )
            try:
                with reporting(loader.registry, loader, functools.partial(_show, console)):
                    if args.transport == "stdio":
                        _scan(loader, console, dirs)
                        loader.start()
                        _say(console, "serving over stdio" + (_AT_A_TERMINAL if _at_a_terminal(wire) else ""))
                        serve = functools.partial(
                            serve_stdio,
                            server,
                            wire,
                            shutdown_grace=args.shutdown_grace,
                            on_draining=functools.partial(_draining, console, "", args.shutdown_grace),
                            on_drained=functools.partial(_drained, console),
                        )
                        with contextlib.suppress(
                            KeyboardInterrupt
                        ):  # Ctrl-C is how a person stops it: exit 0
                            anyio.run(serve)
                    else:
                        _serve_http(args, server, loader, console, dirs)
            finally:
                server.close()
        finally:
            loader.close()
            loader.registry.close()
            if recorder is not None:
                recorder.close()
    return 0


def _draining(console: Console, probes: str, grace: float, calls: int) -> None:
    _say(
        console,
        f"shutting down: draining, {probes}new requests refused; {calls} calls in flight "
        f"get up to {grace:g} s",
        "yellow",
    )


def _drained(console: Console, report: DrainReport) -> None:
    stopped = f", {report.stopped} stopped with an error result" if report.stopped else ""
    _say(console, f"drained in {report.seconds:.1f} s: {report.finished} calls finished{stopped}")


def _not_a_load_failure(record: logging.LogRecord) -> bool:
    return not getattr(record, LOAD_FAILED, False)


def _show(console: Console, line: StatusLine) -> None:
    _say(console, line.text, line.style)


@contextlib.contextmanager
def _standard_streams(*, stdio: bool) -> Iterator[StdioWire | None]:
    """stderr through a bounded, never-blocking pump; over stdio, fd 1 kept for the protocol alone.

    Both before the loader exists: a plugin or a tool printing at import must
    not write into the protocol, and a client that never reads stderr must not
    freeze the server.
    """
    from ..mcp.streams import SUPPORTED, StderrPump, StdioWire

    if not SUPPORTED:
        yield None
        return
    pump = StderrPump()
    wire = StdioWire() if stdio else None
    try:
        yield wire
    finally:
        if wire is not None:
            wire.release()
        pump.close()


def _at_a_terminal(wire: StdioWire | None) -> bool:
    """Whether the protocol's stdin is a person's terminal (fd 0 points away once ``wire`` holds it)."""
    fd = wire.reader.fileno() if wire is not None else 0
    try:
        return os.isatty(fd)
    except OSError:
        return False
