"""Running one file's import for the loader without letting a slow file hold up the others.

While the loader watches, it waits for an import only a short ``patience``;
an import still running then is *in flight*: the batch goes on without it, and
the file is looked at again when the import ends or its deadline passes,
whichever comes first. At the deadline the file is reported stuck (with the
line it is executing) and its job abandoned. A one-off ``scan()`` waits up to
the deadline, since its caller wants every file's outcome.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..importing.backend import Discover, Found, LoadBackend
from ..importing.threads import ImportJob, ImportTimeout
from ..status import ImportInProgress, LoadErrorInfo, LoadErrorKind, error_info_from_exception
from ..types import AgentTool, Component
from .config import LoaderConfig
from .disk import read_file
from .file_state import FileRecord, SourceRead, stat_signature

__all__ = ["ImportOutcome", "ImportRunner", "Overtaken"]

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
    components: dict[str, Component] = field(default_factory=dict)
    """The prompts, resources and resource templates, by ``component_id``."""
    rewrote_itself: bool = False
    """The file was written while its import ran (most likely by its own code)."""


@dataclass(frozen=True, slots=True)
class Overtaken:
    """An import of older bytes that ran to the end before the batch that found newer ones."""

    digest: str
    outcome: ImportOutcome


@dataclass(frozen=True, slots=True)
class _Flight:
    job: ImportJob[Found]
    read: SourceRead
    since: float

    @property
    def digest(self) -> str:
        return self.read.digest


class ImportRunner:
    """Starts, waits for, defers and times out the loader's imports (scheduler thread only).

    An import's deadline counts from the moment it starts running: one queued
    behind slower imports (every import thread taken, or the one import worker
    busy) has not overrun anything yet, and reporting it stuck would leave its
    bytes marked as tried when they never ran.
    """

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
        # A backend that ends stuck jobs itself gets a little slack to report its own timeout.
        self._slack = _BACKEND_DEADLINE_SLACK if backend.enforces_timeouts else 0.0
        self._look_again = look_again
        self._flights: dict[Path, _Flight] = {}
        self._view: tuple[ImportInProgress, ...] = ()
        self._started: dict[Path, tuple[str, ImportJob[Found]]] = {}

    def in_progress(self) -> tuple[ImportInProgress, ...]:
        """Imports still running past the patience window (safe to read from any thread)."""
        return self._view

    def is_in_flight(self, path: Path, digest: str) -> bool:
        """Whether ``path``'s content ``digest`` is being imported now."""
        flight = self._flights.get(path)
        return flight is not None and flight.digest == digest

    def in_flight(self, path: Path) -> bool:
        """Whether some content of ``path`` is being imported now (safe to read from any thread)."""
        return path in self._flights

    def supersede(self, path: Path, digest: str) -> Overtaken | None:
        """``path`` holds ``digest`` now: give up on an import of other bytes still in flight.

        An import that had already run to the end is returned instead: its module is the
        current one, and those bytes were the file's when it started, so they go live
        first and the newer bytes load after them (a file that rewrites itself while
        it imports would otherwise never serve anything).
        """
        flight = self._flights.get(path)
        if flight is None or flight.digest == digest:
            return None
        self._land(path)
        if flight.job.done and not _failed(flight.job):
            return Overtaken(flight.digest, self._finished(path, flight.job, flight.read))
        self._backend.abandon(flight.job)
        return None

    def drop(self, path: Path) -> None:
        """Give up on ``path``'s import in flight, whatever its bytes (its outcome would be stale)."""
        flight = self._flights.get(path)
        if flight is not None:
            self._land(path)
            self._backend.abandon(flight.job)

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
            self.supersede(path, read.digest)
            flight = None
        if flight is None:
            since = time.time()
            job = self._start(record, read)
            if job.wait(min(self._patience, self._timeout)) or (
                not watching and self._wait_out(job, path, since)
            ):
                return self._finished(path, job, read if watching else None)  # not in flight: nothing to land
            flight = _Flight(job, read, since)
        if flight.job.done:
            self._land(path)
            return self._finished(path, flight.job, flight.read if watching else None)
        remaining = self._remaining(flight.job)
        if not watching or (remaining is not None and remaining <= 0):
            self._land(path)
            error = flight.job.timeout_error(self._timeout)
            self._backend.abandon(flight.job)
            return ImportOutcome({}, _timeout_info(error, path), self._timeout)
        if path not in self._flights:
            self._flights[path] = flight
            self._refresh_view()
            flight.job.on_done(lambda: self._look_again(path, 0.0))
        # Not started yet: its deadline is not running; look again once it could be.
        self._look_again(path, self._timeout if remaining is None else remaining)
        return None

    def _start(self, record: FileRecord, read: SourceRead) -> ImportJob[Found]:
        """The job importing ``read``: one started ahead for these bytes, else a new one."""
        ahead = self._started.pop(record.path, None)
        if ahead is not None and ahead[0] == read.digest:
            return ahead[1]
        if ahead is not None:
            self._backend.abandon(ahead[1])
        return self._backend.start_load(
            record.path, record.module_name, read.data, read.digest, self._discover
        )

    def _remaining(self, job: ImportJob[Found]) -> float | None:
        """Seconds left before ``job`` overruns its deadline; None while it waits to start."""
        if job.started is None:
            return None
        return job.started + self._timeout + self._slack - time.monotonic()

    def _wait_out(self, job: ImportJob[Found], path: Path, since: float) -> bool:
        """A one-off scan: wait for ``job`` until it ends or overruns its deadline; True if it ended.

        A scan's imports run one after another, so each starts at once; one that does not
        start within a deadline of its own (every import thread held by an import that never
        returned) is given up too, so the scan itself always ends. Meanwhile ``in_progress``
        names the file waited on (a console says which file it waits for).
        """
        self._view = (*self._view, ImportInProgress(path, since))
        try:
            return self._wait_for_deadline(job)
        finally:
            self._refresh_view()

    def _wait_for_deadline(self, job: ImportJob[Found]) -> bool:
        start_by = time.monotonic() + self._timeout + self._slack
        while True:
            remaining = self._remaining(job)
            if remaining is None:
                remaining = start_by - time.monotonic()
            if remaining <= 0 or job.wait(remaining):
                return job.done

    def abandon_all(self) -> None:
        """Give up on every import in flight (the loader is closing)."""
        for path in list(self._flights):
            self.drop(path)

    def _land(self, path: Path) -> None:
        if self._flights.pop(path, None) is not None:
            self._refresh_view()

    def _refresh_view(self) -> None:
        self._view = tuple(
            ImportInProgress(path, flight.since) for path, flight in sorted(self._flights.items())
        )

    def _finished(self, path: Path, job: ImportJob[Found], read: SourceRead | None) -> ImportOutcome:
        """The outcome of a finished ``job``; with the ``read`` it imported, whether it rewrote its file
        (a one-off scan does not ask: it reloads nothing)."""
        outcome = self._outcome(path, job)
        if read is not None and _written_during(path, job, read):
            return replace(outcome, rewrote_itself=True)
        return outcome

    def _outcome(self, path: Path, job: ImportJob[Found]) -> ImportOutcome:
        seconds = time.monotonic() - (job.started or job.submitted)
        try:
            found = job.outcome()
        except ImportTimeout as exc:  # a backend that enforces its own deadline
            return ImportOutcome({}, _timeout_info(exc, path), seconds)
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and not _raised_in(exc, path):
                raise
            return ImportOutcome({}, error_info_from_exception(exc, path, self._roots), seconds)
        tools = {item.tool_name: item for item in found if isinstance(item, AgentTool)}
        for tool in tools.values():
            tool.mark_dynamic()
        components = {item.component_id: item for item in found if isinstance(item, Component)}
        return ImportOutcome(tools, None, seconds, components=components)


_CLOCK_SLACK_NS = 20_000_000
"""File times come from a coarser clock than ``time.time()``: how far apart the two may read."""


def _written_during(path: Path, job: ImportJob[Found], read: SourceRead) -> bool:
    """Whether ``path`` was written after ``read`` was taken, by the time its import ``job`` ended.

    Its stat tells, but for a write at the same size within the same clock tick as the
    one read (a counter a fast import bumps): when the file was written about when the
    import ran, its bytes are compared too.
    """
    now = stat_signature(path)
    if now is None:
        return False
    if now != read.signature:
        return True
    if job.started is None:
        return False
    began = time.time_ns() - int((time.monotonic() - job.started) * 1e9)
    if now[2] < began - _CLOCK_SLACK_NS:
        return False  # written well before the import began: what was read is what is there
    data = read_file(path)
    return isinstance(data, bytes) and hashlib.sha256(data).hexdigest() != read.digest


def _failed(job: ImportJob[Found]) -> bool:
    """Whether a finished job raised (its module did not become the current one)."""
    try:
        job.outcome()
    except BaseException:
        return True
    return False


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
