"""The uvicorn server under the HTTP transport, with a deadline for reading request headers.

uvicorn closes idle keep-alive connections but waits forever for the headers
of a request that was started and never finished, so a client that opens
connections and sends half a request holds them (and their memory) for good.
Each connection here gets ``header_timeout`` seconds from its first byte (or
from its opening) to deliver complete request headers.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ReadyServer", "header_timeout_protocol"]

logger = logging.getLogger(__name__)


def header_timeout_protocol(header_timeout: float) -> type[H11Protocol]:
    """An h11 protocol class that closes a connection whose request headers take over ``header_timeout``."""

    class HeaderTimeoutProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_header_timer()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:
                self._arm_header_timer()
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._cancel_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout, self._header_timeout_expired)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timeout_expired(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                logger.debug(
                    "client=<%s>, timeout=<%s> | request headers too slow", self.client, header_timeout
                )
                self.transport.close()

    return HeaderTimeoutProtocol


class ReadyServer(uvicorn.Server):
    """A uvicorn server that says when it accepts connections."""

    def __init__(self, config: uvicorn.Config, *, on_ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._on_ready is not None:
            self._on_ready()
