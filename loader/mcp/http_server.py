"""The uvicorn server under the HTTP transport: deadlines for headers and bodies, a cap on connections.

uvicorn closes idle keep-alive connections but waits forever for the rest of
a request that was started and never finished, so a client that opens
connections and sends half a request holds them (and their descriptors) for
good. Here each connection gets ``header_timeout`` seconds from its first byte
(or from its opening) to deliver complete request headers, then
``body_timeout`` seconds to deliver the body those headers announced (answered
408 when it does not). A response sent before the body arrived (a 401 decided
from the headers) closes the connection instead of waiting for a body nobody
will read. At ``max_connections``, a new connection takes the place of the one
idle the longest (no request in progress); when none is idle it is answered
503 and closed at once, so a flood never takes the descriptors the loader
needs to open the files it reloads (the descriptor limit is shared by the
whole process), and connections that send nothing never keep out the probes.

The cap is kept at ``accept()``, by the listening socket itself: asyncio
accepts a whole backlog of connections before the first of them reaches its
protocol, so a check there would come after the descriptors were gone.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

import h11
import uvicorn
from starlette.requests import ClientDisconnect
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "ConnectionGate",
    "ConnectionLimits",
    "GatedSocket",
    "ReadyServer",
    "connection_cap",
    "guarded_protocol",
    "quiet_client_disconnects",
]

logger = logging.getLogger(__name__)

_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: 25\r\n"
    b"\r\n"
    b"too many connections now\n"
)
_BODY_TOO_SLOW = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: 32\r\n"
    b"\r\n"
    b"request body not sent in time\r\n"
)
_SLACK = 16
"""Connections open over the cap while the idle ones they replace are being closed."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a client may take to send a request, and how many connections are served at once."""

    header_timeout: float | None = 10.0
    """Seconds to send complete request headers (None: no limit)."""
    body_timeout: float | None = 30.0
    """Seconds, after the headers, to send the whole body they announced (None: no limit)."""
    max_connections: int | None = 512
    """Connections open at once; more are answered 503 and closed (None: no limit)."""


def connection_cap(wanted: int | None) -> int | None:
    """``wanted``, lowered to leave the loader a share of the process's descriptor limit.

    The loader opens tool files, history databases, watches and worker pipes
    from the same ``RLIMIT_NOFILE`` as the sockets: a quarter of it (at least
    64) stays out of the connections' reach.
    """
    try:
        import resource
    except ImportError:  # not POSIX: no descriptor limit to share
        return wanted
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    room = max(1, soft - max(64, soft // 4))
    if wanted is None or wanted > room:
        logger.warning(
            "max_connections=<%s>, open_files_limit=<%d>, cap=<%d> | connections capped below the "
            "descriptor limit",
            wanted,
            soft,
            room,
        )
        return room
    return wanted


class _Idler(Protocol):
    """A connection as the gate sees it: whether it has a request in progress, and how to close it."""

    def is_idle(self) -> bool: ...

    def evict(self) -> None: ...


class ConnectionGate:
    """Counts the connections open now; admits one below ``cap`` (None: always) or in an idle one's place.

    At the cap, the connection idle the longest (no request in progress: one
    that never sent complete headers, or a keep-alive between requests) is
    closed to make room, so connections that send nothing cannot keep the
    probes or a caller with a token out; only connections all busy with
    requests make the gate refuse. asyncio accepts a whole backlog before any
    of it reaches its protocol: when no connection with a protocol is idle, one
    accepted but not handed over yet (``pending``) is, and the first to arrive
    while some are owed (``owed``) closes at once.
    """

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.open = 0
        self.refused = 0
        self.evicted = 0
        self._pending = 0
        self._owed = 0
        self._lock = threading.Lock()
        self._by_activity: dict[_Idler, None] = {}  # least recently active first

    def admit(self) -> bool:
        with self._lock:
            if self.cap is not None and self.open >= self.cap and not self._evict_one():
                self.refused += 1
                return False
            self.open += 1
            self._pending += 1
            return True

    def _evict_one(self) -> bool:
        """Close (or mark to close) the least recently active idle connection (lock held).

        A closed connection holds its descriptor until asyncio lets it go, and
        ``open`` counts it until then: at most ``_SLACK`` over the cap are open.
        """
        assert self.cap is not None
        if self.open >= self.cap + _SLACK:
            return False
        idle = next((c for c in self._by_activity if c.is_idle()), None)
        if idle is not None:
            del self._by_activity[idle]
            idle.evict()
        elif self._owed < self._pending:  # accepted in this pass, not handed over yet: idle too
            self._owed += 1
        else:
            return False
        self.evicted += 1
        return True

    def arrived(self, connection: _Idler) -> bool:
        """An admitted connection reached its protocol; False: it was given up to make room (close it)."""
        with self._lock:
            self._pending = max(0, self._pending - 1)
            if self._owed:
                self._owed -= 1
                return False
            self._by_activity[connection] = None
            return True

    def active(self, connection: _Idler) -> None:
        """``connection`` received bytes: it is the last to be evicted."""
        with self._lock:
            if self._by_activity.pop(connection, False) is None:
                self._by_activity[connection] = None

    def release(self, connection: _Idler | None = None) -> None:
        with self._lock:
            self.open = max(0, self.open - 1)
            if connection is not None:
                self._by_activity.pop(connection, None)


class GatedSocket(socket.socket):
    """A listening socket whose ``accept()`` answers 503 to, and closes, connections its gate refuses."""

    gate: ConnectionGate = ConnectionGate(None)

    def accept(self) -> tuple[socket.socket, Any]:
        while True:
            conn, address = super().accept()  # BlockingIOError once the backlog is empty
            if self.gate.admit():
                return conn, address
            _refuse(conn, address, self.gate)


def _refuse(conn: socket.socket, address: Any, gate: ConnectionGate) -> None:
    if gate.refused == 1 or gate.refused % 1000 == 0:
        logger.warning(
            "client=<%s>, cap=<%s>, refused=<%d> | connection refused: too many open",
            address,
            gate.cap,
            gate.refused,
        )
    try:
        conn.setblocking(False)
        conn.send(_REFUSED)
    except OSError:
        pass
    finally:
        conn.close()


def quiet_client_disconnects() -> None:
    """Keep the SDK from logging a traceback for each client that went away mid-body (408 or gone).

    A client that never finished its request is no server error; during a
    flood of slow bodies those tracebacks would be the flood.
    """
    sdk = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, _ClientDisconnectFilter) for f in sdk.filters):
        sdk.addFilter(_ClientDisconnectFilter())


class _ClientDisconnectFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, ClientDisconnect)


class _Deadline:
    """One connection's deadline for a stage of its request: armed once until it expires or is cancelled."""

    __slots__ = ("_expired", "_handle", "_seconds")

    def __init__(self, seconds: float | None, expired: Callable[[], None]) -> None:
        self._seconds = seconds  # None: no deadline
        self._expired = expired
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._handle is None and self._seconds is not None:
            self._handle = loop.call_later(self._seconds, self._expire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _expire(self) -> None:
        self._handle = None
        self._expired()


def guarded_protocol(limits: ConnectionLimits, gate: ConnectionGate | None = None) -> type[H11Protocol]:
    """An h11 protocol class that enforces ``limits``' deadlines and hands its slot back to ``gate``."""

    class GuardedProtocol(H11Protocol):
        _header_deadline: _Deadline
        _body_deadline: _Deadline

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._header_deadline = _Deadline(limits.header_timeout, self._header_timeout_expired)
            self._body_deadline = _Deadline(limits.body_timeout, self._body_timeout_expired)
            super().connection_made(transport)
            self._header_deadline.arm(self.loop)
            if gate is not None and not gate.arrived(self):
                self.evict()

        def is_idle(self) -> bool:
            return (
                self.conn.their_state is h11.IDLE
                and self.conn.our_state is h11.IDLE
                and not self.transport.is_closing()
            )

        def evict(self) -> None:
            logger.debug("client=<%s> | idle connection closed to make room for a new one", self.client)
            self.transport.write(_REFUSED)  # its request, if one was on the way, was not read: say why
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            if gate is not None:
                gate.active(self)
            if self.conn.their_state is h11.IDLE:
                self._header_deadline.arm(self.loop)
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._header_deadline.cancel()
            if self.conn.their_state is h11.SEND_BODY:
                self._body_deadline.arm(self.loop)
            else:
                self._body_deadline.cancel()

        def on_response_complete(self) -> None:
            if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
                # Answered before the body came (a 401 from the headers): nobody will read that body.
                self._body_deadline.cancel()
                self.conn.send(h11.ConnectionClosed())
                self.transport.close()
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._header_deadline.cancel()
            self._body_deadline.cancel()
            if gate is not None:
                gate.release(self)
            super().connection_lost(exc)

        def _header_timeout_expired(self) -> None:
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                logger.debug(
                    "client=<%s>, timeout=<%s> | request headers too slow", self.client, limits.header_timeout
                )
                self.transport.close()

        def _body_timeout_expired(self) -> None:
            if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
                return
            logger.debug(
                "client=<%s>, timeout=<%s> | request body too slow", self.client, limits.body_timeout
            )
            if self.conn.our_state is h11.SEND_RESPONSE:
                self.transport.write(_BODY_TOO_SLOW)
            cycle = self.cycle
            if cycle is not None:  # the application waiting for the body hears of a disconnect
                cycle.disconnected = True
                cycle.message_event.set()
            self.transport.close()

    return GuardedProtocol


class ReadyServer(uvicorn.Server):
    """A uvicorn server that says when it accepts connections, and drains on SIGTERM or Ctrl-C.

    uvicorn on a signal stops at once (its graceful shutdown gives requests a
    couple of seconds, then cuts them) and re-raises the signal, so the
    process dies of it. Here the first signal runs ``drain`` (the application
    finishes or stops its calls in flight) and only then lets uvicorn close
    the connections; the process then exits normally. A second signal stops
    at once.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        on_ready: Callable[[], None] | None,
        drain: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(config)
        self._on_ready = on_ready
        self._drain = drain
        self._loop: asyncio.AbstractEventLoop | None = None
        self._signalled = False
        self._draining: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets=sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._on_ready is not None:
            self._on_ready()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The signal handler (main thread, between two bytecodes of whatever runs): start the drain."""
        if self._drain is None or self._loop is None:
            super().handle_exit(sig, frame)
            return
        if self._signalled:
            logger.warning("signal=<%d> | second signal: stopping without waiting for calls", sig)
            self.should_exit = self.force_exit = True
            return
        self._signalled = True
        self._loop.call_soon_threadsafe(self._begin_drain)

    def _begin_drain(self) -> None:
        if self._draining is None and self._loop is not None:
            self._draining = self._loop.create_task(self._drain_then_exit(), name="tool-loader-drain")

    async def _drain_then_exit(self) -> None:
        try:
            if self._drain is not None:
                await self._drain()
        except Exception:
            logger.exception("the drain failed; stopping")
        finally:
            self.should_exit = True
