"""Running one file's import for the loader without letting a slow file hold up the others.

While the loader watches, it waits for an import only a short ``patience``;
an import still running then is *in flight*: the batch goes on without it, and
the file is looked at again when the import ends or its deadline passes,
whichever comes first. At the deadline the file is reported stuck (with the
line it is executing) and its job abandoned. A one-off ``scan()`` waits up to
the deadline, since its caller wants every file's outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..importing.backend import Discover, LoadBackend
from ..importing.threads import ImportJob, ImportTimeout
from ..status import ImportInProgress, LoadErrorInfo, LoadErrorKind, error_info_from_exception
from ..types import AgentTool
from .config import LoaderConfig
from .file_state import FileRecord, SourceRead

__all__ = ["ImportOutcome", "ImportRunner"]

_BACKEND_DEADLINE_SLACK = 5.0
"""How long past the deadline to wait for a backend that ends stuck jobs itself (it reports as soon
as it has; the wait covers an import that first waited for a worker process to start, which on a
busy machine takes more than a second, so the report keeps the line the import hangs at)."""


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """A finished import: the tools, or why there are none, and how long it took."""

    tools: dict[str, AgentTool]
    error: LoadErrorInfo | None
    seconds: float


@dataclass(frozen=True, slots=True)
class _Flight:
    job: ImportJob[list[AgentTool]]
    digest: str
    deadline: float
    since: float


class ImportRunner:
    """Starts, waits for, defers and times out the loader's imports (scheduler thread only)."""

    def __init__(
        self,
        backend: LoadBackend,
        discover: Discover,
        roots: tuple[Path, ...],
        *,
        config: LoaderConfig,
        look_again: Callable[[Path, float], None],
    ) -> None:
        self._backend = backend
        self._discover = discover
        self._roots = roots
        self._timeout = config.import_timeout
        self._patience = config.import_patience
        self._look_again = look_again
        self._flights: dict[Path, _Flight] = {}
        self._view: tuple[ImportInProgress, ...] = ()
        self._started: dict[Path, tuple[str, ImportJob[list[AgentTool]]]] = {}

    def in_progress(self) -> tuple[ImportInProgress, ...]:
        """Imports still running past the patience window (safe to read from any thread)."""
        return self._view

    def is_in_flight(self, path: Path, digest: str) -> bool:
        """Whether ``path``'s content ``digest`` is being imported now."""
        flight = self._flights.get(path)
        return flight is not None and flight.digest == digest

    def start_ahead(self, loads: list[tuple[FileRecord, SourceRead]]) -> None:
        """Start these imports now, one after another on one thread, for ``run`` to collect in order.

        A one-off scan waits for every file anyway: its import thread then goes
        from one file to the next without waiting for the loader between them.
        """
        items = [(record.path, record.module_name, read.data, read.digest) for record, read in loads]
        for (record, read), job in zip(loads, self._backend.start_loads(items, self._discover), strict=False):
            self._started[record.path] = (read.digest, job)

    def drop_ahead(self) -> None:
        """Give up on imports started ahead that the batch did not collect."""
        started, self._started = self._started, {}
        for _, job in started.values():
            self._backend.abandon(job)

    def run(self, record: FileRecord, read: SourceRead, *, watching: bool) -> ImportOutcome | None:
        """Import the content (or collect an import in flight); None while it is still running."""
        path = record.path
        flight = self._flights.get(path)
        if flight is not None and flight.digest != read.digest:
            self._land(path)
            self._backend.abandon(flight.job)  # superseded by newer content
            flight = None
        if flight is None:
            ahead = self._started.pop(path, None)
            if ahead is not None and ahead[0] != read.digest:
                self._backend.abandon(ahead[1])
                ahead = None
            job = (
                ahead[1]
                if ahead is not None
                else self._backend.start_load(
                    path, record.module_name, read.data, read.digest, self._discover
                )
            )
            deadline, since = time.monotonic() + self._timeout, time.time()
            slack = _BACKEND_DEADLINE_SLACK if self._backend.enforces_timeouts else 0.0
            if job.wait(min(self._patience, self._timeout) if watching else self._timeout + slack):
                return self._finished(path, job)  # not in flight: nothing to land
            flight = _Flight(job, read.digest, deadline, since)
        if flight.job.done:
            self._land(path)
            return self._finished(path, flight.job)
        # A backend that ends stuck jobs itself gets a little slack to report its own timeout.
        slack = _BACKEND_DEADLINE_SLACK if self._backend.enforces_timeouts else 0.0
        remaining = flight.deadline + slack - time.monotonic()
        if remaining <= 0 or not watching:
            self._land(path)
            error = flight.job.timeout_error(self._timeout)
            self._backend.abandon(flight.job)
            return ImportOutcome({}, _timeout_info(error, path), self._timeout)
        if path not in self._flights:
            self._flights[path] = flight
            self._refresh_view()
            flight.job.on_done(lambda: self._look_again(path, 0.0))
        self._look_again(path, remaining)
        return None

    def abandon_all(self) -> None:
        """Give up on every import in flight (the loader is closing)."""
        for path, flight in list(self._flights.items()):
            self._land(path)
            self._backend.abandon(flight.job)

    def _land(self, path: Path) -> None:
        if self._flights.pop(path, None) is not None:
            self._refresh_view()

    def _refresh_view(self) -> None:
        self._view = tuple(
            ImportInProgress(path, flight.since) for path, flight in sorted(self._flights.items())
        )

    def _finished(self, path: Path, job: ImportJob[list[AgentTool]]) -> ImportOutcome:
        seconds = time.monotonic() - (job.started or job.submitted)
        try:
            found = job.outcome()
        except ImportTimeout as exc:  # a backend that enforces its own deadline
            return ImportOutcome({}, _timeout_info(exc, path), seconds)
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and not _raised_in(exc, path):
                raise
            return ImportOutcome({}, error_info_from_exception(exc, path, self._roots), seconds)
        for tool in found:
            tool.mark_dynamic()
        return ImportOutcome({tool.tool_name: tool for tool in found}, None, seconds)


def _timeout_info(error: ImportTimeout, path: Path) -> LoadErrorInfo:
    return LoadErrorInfo(
        "ImportTimeout", str(error), str(path), error.line, error.stack, kind=LoadErrorKind.IMPORT_TIMEOUT
    )


def _raised_in(exc: BaseException, path: Path) -> bool:
    """Whether an exception was raised by the tool file's own code (e.g. ``sys.exit()`` at import)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            return True
        tb = tb.tb_next
    return False
