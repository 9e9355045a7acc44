"""What a replica tells its orchestrator: is it alive, is it ready, which tool set does it serve.

Typed facts only (``ReadyReport``); the HTTP transport turns them into
``/healthz`` and ``/readyz`` responses.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from ..status import FileState
from .server import MCPToolServer

__all__ = ["LiveReport", "MetricsSource", "Readiness", "ReadyReport", "liveness"]

_FAILED_STATES = (FileState.FAILED, FileState.STUCK, FileState.CONFLICT)


class MetricsSource(Protocol):
    """What ``/metrics`` serves (``metrics.ServeMetrics`` fits); the transport never imports prometheus."""

    @property
    def content_type(self) -> str: ...

    def render(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class ReadyReport:
    """The body of ``/readyz``."""

    ready: bool
    fingerprint: str
    tools: int
    failed_files: int
    generation: int
    scanned: bool
    draining: bool = False
    """The replica is shutting down: finishing its calls in flight, taking no new work."""
    workers: str | None = None
    """Why tools cannot be called now (process isolation: no worker process starts), else None."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class LiveReport:
    """The body of a failing ``/healthz``: the loader threads that died (the process answers, but no save
    would ever go live again, so only a restart helps)."""

    alive: bool
    dead_threads: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"alive": self.alive, "dead_threads": list(self.dead_threads)}


def liveness(server: MCPToolServer) -> LiveReport:
    """Alive while none of the loader's watched threads has died."""
    loader = server.loader
    deaths = loader.threads.deaths() if loader is not None else ()
    return LiveReport(alive=not deaths, dead_threads=tuple(death.one_line() for death in deaths))


class Readiness:
    """Ready once the initial scan finished (and, with ``requires_clean``, while no file is failed),
    while its tools can be called (worker processes start), until the server begins to drain."""

    def __init__(self, server: MCPToolServer, *, requires_clean: bool = False, scanned: bool = False) -> None:
        self._server = server
        self._requires_clean = requires_clean
        self._scanned = threading.Event()
        if scanned:
            self._scanned.set()

    def mark_scanned(self) -> None:
        """The initial scan is over: from now on the replica may take traffic."""
        self._scanned.set()

    @property
    def scanned(self) -> bool:
        return self._scanned.is_set()

    def report(self) -> ReadyReport:
        """The facts ``/readyz`` answers with, taken from one served record (tools and files agree)."""
        served = self._server.served()
        snapshot = served.snapshot
        failed = sum(1 for status in served.statuses.values() if status.state in _FAILED_STATES)
        scanned = self.scanned
        draining = self._server.draining
        loader = self._server.loader
        workers = loader.serving_problem() if loader is not None else None
        ready = scanned and not draining and workers is None and not (self._requires_clean and failed)
        return ReadyReport(
            ready=ready,
            fingerprint=served.fingerprint,
            tools=len(snapshot),
            failed_files=failed,
            generation=snapshot.generation,
            scanned=scanned,
            draining=draining,
            workers=workers,
        )
