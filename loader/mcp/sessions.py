"""The handshake-era sessions a server announces list changes to, and letting go of the ended ones.

A 2024-11-05 .. 2025-11-25 client hears of a changed tool list through
``notifications/tools/list_changed`` on its session's standalone channel, so
the server keeps each initialized session. The SDK says nothing when a session
ends (an idle timeout, a client gone), and a kept session holds everything
the SDK built for it; kept until the next announcement, on a fleet whose tools
rarely change that is forever. So the sessions are checked now and then: a
ping to an ended session fails at once (its stream is closed) and it is
forgotten; one that merely does not answer in time is kept (its client may
not have opened its standalone stream yet).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from mcp.server.session import ServerSession

__all__ = ["CHECK_INTERVAL", "NOTIFY_TIMEOUT", "HandshakeSessions"]

logger = logging.getLogger(__name__)

NOTIFY_TIMEOUT = 5.0
"""Seconds one session may take to accept a list-changed notification before it is dropped."""

CHECK_INTERVAL = 30.0
"""Seconds between two looks for ended sessions (lowered to the idle timeout when that is shorter)."""


class HandshakeSessions:
    """Sessions to notify, keyed by identity; ``announce`` tells them all, ``check`` lets ended ones go."""

    def __init__(self) -> None:
        self._sessions: dict[int, ServerSession] = {}
        self.check_interval = CHECK_INTERVAL

    def __len__(self) -> int:
        return len(self._sessions)

    def add(self, session: ServerSession) -> None:
        self._sessions[id(session)] = session
        logger.debug("sessions=<%d> | handshake-era client initialized", len(self._sessions))

    async def announce(self, *, tools: bool = True, prompts: bool = False, resources: bool = False) -> int:
        """Notify every session concurrently (a stalled one delays no other); returns how many were told.

        ``tools``, ``prompts``, ``resources``: which ``notifications/*/list_changed`` to send.
        One that fails or stalls past ``NOTIFY_TIMEOUT`` is forgotten.
        """
        sends: list[Callable[[ServerSession], Awaitable[None]]] = []
        if tools:
            sends.append(ServerSession.send_tool_list_changed)
        if prompts:
            sends.append(ServerSession.send_prompt_list_changed)
        if resources:
            sends.append(ServerSession.send_resource_list_changed)
        sessions = list(self._sessions.items())
        async with anyio.create_task_group() as group:
            for key, session in sessions:
                group.start_soon(self._notify, key, session, sends)
        return len(sessions)

    async def check(self) -> None:
        """Forget the sessions that ended since the last look (their ping fails at once)."""
        sessions = list(self._sessions.items())
        async with anyio.create_task_group() as group:
            for key, session in sessions:
                group.start_soon(self._ping, key, session)

    async def keep_checking(self) -> None:
        """``check`` every ``check_interval`` seconds, until cancelled."""
        while True:
            await anyio.sleep(self.check_interval)
            await self.check()

    async def _notify(
        self, key: int, session: ServerSession, sends: list[Callable[[ServerSession], Awaitable[None]]]
    ) -> None:
        """Notify one session, then ping it: a closed connection drops notifications silently."""
        alive = False
        with anyio.move_on_after(NOTIFY_TIMEOUT):
            try:
                for send in sends:
                    await send(session)
                await session.send_ping()
                alive = True
            except Exception:  # a closed session: forget it, never starve the others
                logger.debug("a handshake-era session is gone", exc_info=True)
        if not alive:
            self._forget(key)

    async def _ping(self, key: int, session: ServerSession) -> None:
        with anyio.move_on_after(NOTIFY_TIMEOUT):
            try:
                await session.send_ping()
            except Exception:  # its stream is closed: the session ended
                logger.debug("a handshake-era session ended", exc_info=True)
                self._forget(key)

    def _forget(self, key: int) -> None:
        if self._sessions.pop(key, None) is not None:
            logger.debug("sessions=<%d> | forgot a handshake-era session", len(self._sessions))
