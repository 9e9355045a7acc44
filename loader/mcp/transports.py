"""Running an ``MCPToolServer``: stdio for a client that launches us, streamable HTTP for a fleet.

The HTTP app is the SDK's streamable-HTTP session manager at ``path`` plus
the probes a load balancer or Kubernetes asks (``/healthz``, ``/readyz``,
optionally ``/metrics``) on the same port. Bearer-token auth (any SDK
``TokenVerifier``, e.g. ``TokenFileVerifier``) guards the MCP endpoint; the
probes stay open; ``/metrics`` follows the MCP path unless told otherwise.
``/healthz`` fails (503) once a loader thread has died: the process still
answers, but only a restart brings saves back.

SIGTERM or Ctrl-C drains instead of cutting: ``/readyz`` turns 503, new work
at ``path`` (calls, new sessions) is refused with a 503 whose JSON-RPC error
names the shutdown (a balancer may retry it elsewhere: nothing ran), listings
and pings are still answered (a client may need the tool list to accept a
result), the calls in flight get ``shutdown_grace`` seconds to finish, then the
server exits. A second signal stops at once.
"""

from __future__ import annotations

import io
import ipaddress
import json
import logging
import os
import re
import signal
import socket
import stat
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast

import anyio
import uvicorn
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import ToolLoaderError
from .drain import FOLLOW_UP_SECONDS, SHUTTING_DOWN, DrainReport, ExchangesInFlight, answered_while_draining
from .http_server import (
    ConnectionGate,
    ConnectionLimits,
    GatedSocket,
    ReadyServer,
    connection_cap,
    guarded_protocol,
    quiet_client_disconnects,
)
from .probes import MetricsSource, Readiness, liveness
from .server import MCPToolServer
from .sessions import CHECK_INTERVAL
from .streams import SUPPORTED as STREAMS_SUPPORTED
from .streams import StdioWire

__all__ = ["HttpOptions", "InsecureBindError", "http_app", "is_loopback", "serve_http", "serve_stdio"]

logger = logging.getLogger(__name__)

_LOOPBACK_NAMES = ("localhost",)

_FLUSH_SECONDS = 3
"""After a drain, how long connections get to deliver the answers just made (streams left open are cut)."""


_DRAIN_BODY_LIMIT = 64 * 1024
"""The largest request read during a drain to see whether it is still answered (a listing is small)."""


class InsecureBindError(ToolLoaderError):
    """HTTP on a non-loopback interface without authentication: anyone reaching it could run tools."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"refusing to serve on {host} without authentication: a tool server runs code on request; "
            "configure bearer tokens (an auth token file) or bind to 127.0.0.1"
        )
        self.host = host


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How the HTTP transport listens and what it guards."""

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    stateless: bool = False
    """The SDK's stateless HTTP mode: no sessions, so any replica can answer any request."""
    json_response: bool = False
    """Answer each request POST with one JSON body instead of an SSE stream.

    The MCP Python SDK's client reads one SSE event of at most 1 MiB, so a larger result sent as
    an event never reaches it; a JSON body has no such cap. A JSON answer cannot carry progress,
    log messages or questions to the client while the call runs."""
    session_idle_timeout: float | None = 300.0
    """Seconds after which an idle handshake-era session is forgotten (None: never; unused when stateless).

    Each idle session holds what the SDK built for it (tens of KB) until then; clients whose session
    expired get 404 and start a new one, as the protocol says."""
    header_timeout: float | None = 10.0
    """Seconds a connection may take to send complete request headers (None: no limit)."""
    body_timeout: float | None = 30.0
    """Seconds, after its headers, a request may take to send its body (None: no limit)."""
    max_connections: int | None = 512
    """Connections served at once, lowered to fit the descriptor limit (None: as many as it allows)."""
    keep_alive_timeout: int = 5
    """Seconds an idle keep-alive connection stays open."""
    shutdown_grace: float = 30.0
    """Seconds calls in flight get to finish after SIGTERM or Ctrl-C; then they are stopped."""
    health_path: str = "/healthz"
    ready_path: str = "/readyz"
    metrics_path: str = "/metrics"
    metrics_require_auth: bool | None = None
    """Whether ``/metrics`` (tool names, call counts) needs a token; None: whenever the MCP path does."""
    token_verifier: TokenVerifier | None = None
    """Bearer-token check for ``path`` (static tokens, or an OAuth resource server's verifier)."""
    auth: AuthSettings | None = None
    """OAuth resource-server settings (issuer, resource URL, scopes); used with ``token_verifier``."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve_stdio(
    server: MCPToolServer,
    wire: StdioWire | None = None,
    *,
    shutdown_grace: float = 30.0,
    on_draining: Callable[[int], None] | None = None,
    on_drained: Callable[[DrainReport], None] | None = None,
) -> None:
    """Serve one client over stdin/stdout until it disconnects, or until SIGTERM or Ctrl-C drains it.

    With ``wire`` (taken before the first scan, so nothing a tool prints at
    import reaches the protocol) the protocol uses its private descriptors;
    without it, one is taken for the time it serves (on POSIX; elsewhere the
    SDK diverts fds 0 and 1, and signals are the platform's).

    The first signal stops taking requests, gives the calls in flight
    ``shutdown_grace`` seconds, lets their answers be written, then ends as if
    the client had left; a second signal ends at once. stdin is read once the
    event loop sees input waiting (a pipe, a socket, a terminal): a reader
    thread blocked in ``read()`` would hold the process until the next line.
    """
    if wire is None:
        if not STREAMS_SUPPORTED:
            low = server.server
            async with stdio_server() as (read_stream, write_stream):
                await low.run(read_stream, write_stream, low.create_initialization_options())
            return
        wire = StdioWire()
        try:
            await serve_stdio(
                server, wire, shutdown_grace=shutdown_grace, on_draining=on_draining, on_drained=on_drained
            )
        finally:
            wire.release()
        return
    reader_fd = wire.reader.fileno()
    stdout = anyio.wrap_file(io.TextIOWrapper(wire.writer, encoding="utf-8", write_through=True))
    if not _loop_can_wait_on(reader_fd):  # a file: its reads end by themselves
        stdin = anyio.wrap_file(io.TextIOWrapper(wire.reader, encoding="utf-8", errors="replace"))
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            await server.server.run(read_stream, write_stream, server.server.create_initialization_options())
        return
    lines = _LoopLines(reader_fd, _AnswersOwed(server.exchanges))

    async def drain_then_end() -> None:
        lines.hold()  # no new request reaches the server; an end of input would cancel the calls
        if on_draining is not None:
            on_draining(server.calls_in_flight)
        report = await server.drain(shutdown_grace)
        await server.exchanges.settled(_FLUSH_SECONDS)
        if on_drained is not None:
            on_drained(report)
        lines.end()  # the server then finishes as when a client leaves

    await _serve_lines(server, lines, _AnswerWriter(stdout, lines.requests), drain_then_end)


async def _serve_lines(
    server: MCPToolServer,
    lines: _LoopLines,
    stdout: _AnswerWriter,
    drain_then_end: Callable[[], Coroutine[Any, Any, None]],
) -> None:
    """Run the server on ``lines`` and ``stdout``, with the signals handled while it runs."""
    low = server.server
    with anyio.CancelScope() as stop:
        async with anyio.create_task_group() as signals:
            if _can_take_signals():
                signals.start_soon(_on_signals, drain_then_end, stop)
            stdin = cast("anyio.AsyncFile[str]", lines)  # the SDK only iterates its lines
            async with stdio_server(stdin=stdin, stdout=cast("anyio.AsyncFile[str]", stdout)) as (
                reads,
                writes,
            ):
                await low.run(reads, writes, low.create_initialization_options())
            signals.cancel_scope.cancel()


def _can_take_signals() -> bool:
    """Signal handlers go on the main thread's loop, and only where the platform has them."""
    return os.name == "posix" and threading.current_thread() is threading.main_thread()


async def _on_signals(
    drain_then_end: Callable[[], Coroutine[Any, Any, None]], stop: anyio.CancelScope
) -> None:
    """The first SIGTERM or SIGINT drains, a second stops at once (the process then exits 0)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async with anyio.create_task_group() as draining:
            started = False
            async for signum in received:
                if started:
                    logger.warning("signal=<%d> | second signal: stopping without waiting for calls", signum)
                    stop.cancel()
                    return
                started = True
                draining.start_soon(drain_then_end)


def _loop_can_wait_on(fd: int) -> bool:
    """Whether the event loop can wait for input on ``fd``: a pipe, a socket or a terminal, not a file."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)  # epoll refuses /dev/null


_ANSWER = re.compile(r'\{"jsonrpc":"2\.0","id":("(?:[^"\\]|\\.)*"|-?\d+),"(?:result|error)"')
"""The start of an answer as the SDK writes it (``model_dump_json``: fields in order, no spaces)."""


class _AnswersOwed:
    """Requests read from stdin and not answered yet, kept in ``exchanges`` so a drain can wait for them."""

    def __init__(self, exchanges: ExchangesInFlight) -> None:
        self._exchanges = exchanges
        self._ids: set[str] = set()

    def read(self, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict) and "method" in message and message.get("id") is not None:
            key = json.dumps(message["id"])
            if key not in self._ids:
                self._ids.add(key)
                self._exchanges.opened()

    def written(self, line: str) -> None:
        match = _ANSWER.match(line)
        if match is not None and match.group(1) in self._ids:
            self._ids.discard(match.group(1))
            self._exchanges.closed()


class _AnswerWriter:
    """stdout for the SDK (it only writes and flushes): an answer counts as given once flushed."""

    def __init__(self, stdout: anyio.AsyncFile[str], answers: _AnswersOwed) -> None:
        self._stdout = stdout
        self._answers = answers
        self._last = ""

    async def write(self, text: str) -> int:
        self._last = text
        return await self._stdout.write(text)

    async def flush(self) -> None:
        await self._stdout.flush()
        last, self._last = self._last, ""
        self._answers.written(last)


class _LoopLines:
    """Lines from a pipe, socket or terminal, read only once the event loop sees input waiting.

    The SDK reads stdin in a worker thread blocked in ``read()``; a cancelled
    task waits for that thread, and nothing ends the read but another line, so
    Ctrl-C or SIGTERM would keep the process alive until the client wrote
    again. Waiting on the loop instead lets a signal end the input at once:
    ``hold`` stops handing lines over (the server keeps its calls, which an
    end of input would cancel), ``end`` then ends the input.
    """

    def __init__(self, fd: int, requests: _AnswersOwed) -> None:
        self._fd = fd
        self._pending = b""
        self._ended = False
        self._held = False
        self._released = anyio.Event()
        self.requests = requests

    def __aiter__(self) -> _LoopLines:
        return self

    def hold(self) -> None:
        """Hand no more lines over (a drain began)."""
        if not self._held:
            self._held = True
            anyio.notify_closing(self._fd)  # wakes a wait for input; the descriptor stays open

    def end(self) -> None:
        """End the input: the SDK's reader sees an end of file."""
        self.hold()
        self._released.set()

    async def __anext__(self) -> str:
        while (end := self._pending.find(b"\n")) < 0 and not self._ended and not self._held:
            try:
                await anyio.wait_readable(self._fd)
            except anyio.ClosedResourceError:  # ``hold``
                continue
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:  # the terminal or the client went away
                chunk = b""
            self._ended = not chunk  # Ctrl-D, a hang-up, a closed pipe: nothing more will come
            self._pending += chunk
        if self._held:
            await self._released.wait()
            raise StopAsyncIteration
        if not self._pending:
            raise StopAsyncIteration
        cut = end + 1 if end >= 0 else len(self._pending)
        raw, self._pending = self._pending[:cut], self._pending[cut:]
        line = raw.decode("utf-8", errors="replace")
        self.requests.read(line)
        return line


class RefuseWhileDraining:
    """ASGI middleware: while the server drains, requests to the MCP path get a 503 JSON-RPC error.

    Until then it counts the POSTs being answered (``MCPToolServer.exchanges``), so
    the drain can let their answers be written before the server ends.

    Outermost, so a refused request costs no token check and no session; the
    probes and metrics keep answering (``/readyz`` says 503 itself).
    """

    def __init__(self, app: ASGIApp, *, server: MCPToolServer, path: str) -> None:
        self._app = app
        self._server = server
        self._path = path.rstrip("/") or "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (str(scope["path"]).rstrip("/") or "/") != self._path:
            await self._app(scope, receive, send)
            return
        if self._server.draining:
            replayed = await self._still_answered(scope, receive)
            if replayed is not None:
                await self._answer(scope, replayed, send)
                return
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32000,
                        "message": f"{SHUTTING_DOWN}: send the request to another replica",
                    },
                }
            ).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"1"),
                (b"connection", b"close"),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self._answer(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":  # a GET stream lasts as long as its client; the drain ends it
            await self._app(scope, receive, send)
            return
        self._server.exchanges.opened()
        try:
            await self._app(scope, receive, send)
        finally:
            self._server.exchanges.closed()

    @staticmethod
    async def _still_answered(scope: Scope, receive: Receive) -> Receive | None:
        """During a drain: a ``receive`` replaying the request if it is still answered, else None.

        A client owed the result of a call in flight may list the tools before it accepts the
        result (``answered_while_draining``); a session's end (DELETE) passes too.
        """
        if scope["method"] == "DELETE":
            return receive
        if scope["method"] != "POST":
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > _DRAIN_BODY_LIMIT:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            allowed = answered_while_draining(json.loads(body))
        except (ValueError, RecursionError):
            return None
        if not allowed:
            return None
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay


class _Exchange:
    """One HTTP exchange's ``receive`` and ``send``, let go of when the exchange ends."""

    __slots__ = ("_receive", "_send")

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive: Receive | None = receive
        self._send: Send | None = send

    async def receive(self) -> Message:
        receive = self._receive
        if receive is None:
            return {"type": "http.disconnect"}
        return await receive()

    async def send(self, message: Message) -> None:
        send = self._send
        if send is not None:
            await send(message)

    def end(self) -> None:
        self._receive = self._send = None


class LetGoAfterExchange:
    """ASGI wrapper: the SDK keeps the request a session's ``notifications/initialized`` came in (and through
    its ``receive``, the HTTP connection's own objects) for the session's whole life; what it gets here lets
    go of them once that exchange is over."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        exchange = _Exchange(receive, send)
        try:
            await self._app(scope, exchange.receive, exchange.send)
        finally:
            exchange.end()


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for loopback hosts, as the SDK's own ``streamable_http_app`` sets it."""
    if not is_loopback(host):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def http_app(
    server: MCPToolServer,
    options: HttpOptions | None = None,
    *,
    readiness: Readiness | None = None,
    metrics: MetricsSource | None = None,
) -> Starlette:
    """The ASGI app: MCP at ``options.path``, probes beside it, auth where configured.

    Raises:
        InsecureBindError: ``options.host`` is not loopback and no ``token_verifier`` is set.
    """
    options = options or HttpOptions()
    verifier = options.token_verifier
    if verifier is None and not is_loopback(options.host):
        raise InsecureBindError(options.host)
    readiness = readiness if readiness is not None else Readiness(server, scanned=True)
    manager = StreamableHTTPSessionManager(
        app=server.server,
        stateless=options.stateless,
        json_response=options.json_response,
        security_settings=_security(options.host),
        session_idle_timeout=None if options.stateless else options.session_idle_timeout,
    )
    required_scopes = list(options.auth.required_scopes or []) if options.auth is not None else []
    resource_url = options.auth.resource_server_url if options.auth is not None else None
    metadata_url: AnyHttpUrl | None = build_resource_metadata_url(resource_url) if resource_url else None

    def guarded(app: ASGIApp) -> ASGIApp:
        return RequireAuthMiddleware(app, required_scopes, metadata_url) if verifier is not None else app

    async def healthz(_: Request) -> Response:
        report = liveness(server)
        if report.alive:
            return PlainTextResponse("ok\n")
        return Response(json.dumps(report.as_json()) + "\n", status_code=503, media_type="application/json")

    async def readyz(_: Request) -> Response:
        report = readiness.report()
        return Response(
            json.dumps(report.as_json()) + "\n",
            status_code=200 if report.ready else 503,
            media_type="application/json",
        )

    routes: list[Route] = [
        Route(options.path, endpoint=guarded(LetGoAfterExchange(StreamableHTTPASGIApp(manager)))),
        Route(options.health_path, endpoint=healthz, methods=["GET"]),
        Route(options.ready_path, endpoint=readyz, methods=["GET"]),
    ]
    if metrics is not None:
        source = metrics

        async def scrape(_: Request) -> Response:
            return Response(source.render(), media_type=source.content_type)

        # A plain function is a request endpoint to Starlette; the guard is an ASGI app around one.
        require = options.metrics_require_auth
        if require is None:
            require = verifier is not None
        endpoint = guarded(request_response(scrape)) if require else scrape
        routes.append(Route(options.metrics_path, endpoint=endpoint, methods=["GET"]))
    if options.auth is not None and resource_url is not None:
        routes.extend(
            create_protected_resource_routes(
                resource_url=resource_url,
                authorization_servers=[options.auth.issuer_url],
                scopes_supported=options.auth.required_scopes,
            )
        )
    middleware: list[Middleware] = [Middleware(RefuseWhileDraining, server=server, path=options.path)]
    if verifier is not None:
        middleware += [
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
            Middleware(AuthContextMiddleware),
        ]
    return Starlette(routes=routes, middleware=middleware, lifespan=lambda _app: manager.run())


def _bind(host: str, port: int, gate: ConnectionGate) -> GatedSocket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = GatedSocket(family, socket.SOCK_STREAM)
    sock.gate = gate
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


async def serve_http(
    server: MCPToolServer,
    options: HttpOptions | None = None,
    *,
    readiness: Readiness | None = None,
    metrics: MetricsSource | None = None,
    on_ready: Callable[[str], None] | None = None,
    on_draining: Callable[[int], None] | None = None,
    on_drained: Callable[[DrainReport], None] | None = None,
) -> None:
    """Serve streamable HTTP at ``http://host:port/path`` until interrupted, then drain.

    Args:
        server: The MCP server.
        options: Interface, port, paths, timeouts and auth; loopback without auth by default.
        readiness: What ``/readyz`` reports; default ready at once.
        metrics: What ``/metrics`` serves; none by default.
        on_ready: Called with the URL once the server accepts connections (port 0 picks a free port).
        on_draining: Called with the number of calls in flight when a signal starts the drain.
        on_drained: Called with how the drain went, before the connections close.

    Raises:
        InsecureBindError: A non-loopback host without a token verifier.
        OSError: The address cannot be bound.
    """
    options = options or HttpOptions()
    app = http_app(server, options, readiness=readiness, metrics=metrics)
    if not options.stateless and options.session_idle_timeout is not None:
        server.check_sessions_every(min(CHECK_INTERVAL, options.session_idle_timeout))
    limits = ConnectionLimits(
        header_timeout=options.header_timeout,
        body_timeout=options.body_timeout,
        max_connections=connection_cap(options.max_connections),
    )
    gate = ConnectionGate(limits.max_connections)
    sock = _bind(options.host, options.port, gate)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{options.host.strip('[]')}]" if sock.family == socket.AF_INET6 else options.host
    url = f"http://{shown_host}:{bound_port}{options.path}"
    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_graceful_shutdown=_FLUSH_SECONDS,
        timeout_keep_alive=options.keep_alive_timeout,
        http=guarded_protocol(limits, gate),
        lifespan="on",
    )
    quiet_client_disconnects()

    async def drain() -> None:
        if on_draining is not None:
            on_draining(server.calls_in_flight)
        started = time.monotonic()
        report = await server.drain(options.shutdown_grace)
        # Ending the server ends every SSE stream still open, answers half-written included; and a
        # client just answered may still list the tools to accept its result.
        await server.exchanges.settled(_FLUSH_SECONDS, quiet=FOLLOW_UP_SECONDS, since=started)
        if on_drained is not None:
            on_drained(report)

    ready_server = ReadyServer(
        config, on_ready=(lambda: on_ready(url)) if on_ready is not None else None, drain=drain
    )
    try:
        await ready_server.serve(sockets=[sock])
    finally:
        sock.close()
