"""One tool file's life, as a small state machine with named phases and transitions.

The loader keeps one ``FileRecord`` per source file, touched only on its
scheduler thread. Every change of phase goes through a method here, so the
rules (a failed save keeps the last good tools; a file that suddenly defines
nothing keeps serving for a grace period, because editors truncate before they
write) live in one place and can be tested transition by transition::

                 load ok                      load raised / timed out
      (new) ─────────────► LOADED ◄──────────────────► FAILED / STUCK
                           │   ▲  load ok                  (last good tools kept)
          no tools, had    │   │ same content again, or
          some: grace      ▼   │ tools again
                        LOADED + EmptyGrace ── grace over ──► LOADED with no tools
      any phase ── missing for the disappear grace ──► REMOVED ── appears again ──► (new)
                   (back within it: nothing happened; ``absent_wait``)

``CONFLICT`` is not a phase: it is derived from name ownership when a status
is published (``loader.reload.events``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path

from ..spec_diff.kinds import SpecChange
from ..status import LoadErrorInfo, LoadErrorKind
from ..types import AgentTool, Component

__all__ = [
    "EmptyGrace",
    "FileRecord",
    "Phase",
    "Plan",
    "SourceRead",
    "Step",
    "source_read",
    "stat_signature",
]

Signature = tuple[int, int, int]
"""A file's ``(inode, size, mtime_ns)``: changes whenever its content may have."""


class Phase(StrEnum):
    """Where a file's newest content stands."""

    LOADED = "loaded"
    FAILED = "failed"
    STUCK = "stuck"
    REJECTED = "rejected"
    REMOVED = "removed"


REWRITES_BEFORE_BACK_OFF = 2
"""Imports in a row that wrote their own file before reloads slow down (one may be a user's save)."""
BACK_OFF_FIRST = 0.25
"""Seconds the first slowed-down reload waits; each next one waits twice as long."""
BACK_OFF_CAP = 10.0
"""The longest wait: a fix saved into a file that rewrites itself still loads within it."""

_PHASE_OF_ERROR = {LoadErrorKind.IMPORT_TIMEOUT: Phase.STUCK, LoadErrorKind.EXAMPLE_FAILED: Phase.REJECTED}


@dataclass(frozen=True, slots=True)
class EmptyGrace:
    """The file lost all its tools at ``since``; its last tools serve until the grace ends."""

    since: float
    content_hash: str
    signature: Signature | None = None
    """The empty file's stat when the grace began: another stat means it was written again since."""


class Step(Enum):
    """What the loader should do with a file's content in this batch."""

    SKIP = "skip"
    """The content is already serving, or already failed the same way: nothing to do."""
    KEEP_SERVING = "keep-serving"
    """During a grace the content went back to what is serving: end the grace, change nothing."""
    WAIT = "wait"
    """Still within the grace: look again in ``Plan.wait`` seconds."""
    DROP_TOOLS = "drop-tools"
    """The grace is over and the file still defines nothing: let its tools go."""
    LOAD = "load"
    """Import the content and discover its tools."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A ``Step`` and, for ``WAIT``, how long to wait."""

    step: Step
    wait: float = 0.0


_PLAN_LOAD, _PLAN_SKIP = Plan(Step.LOAD), Plan(Step.SKIP)
_PLAN_KEEP_SERVING, _PLAN_DROP_TOOLS = Plan(Step.KEEP_SERVING), Plan(Step.DROP_TOOLS)
"""The plans without a wait, made once (a scan plans every file)."""


@dataclass(frozen=True, slots=True)
class SourceRead:
    """A file's bytes as read once for a batch, with their stat signature and hash."""

    data: bytes
    signature: Signature | None
    digest: str

    @property
    def blank(self) -> bool:
        """Whether the file holds nothing but whitespace (a save caught between truncate and write, or an
        emptied file); found without copying the bytes, as ``strip`` would."""
        return not self.data or self.data.isspace()


def stat_signature(path: Path) -> Signature | None:
    """``(inode, size, mtime_ns)`` of ``path``, or None if it is gone."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def source_read(data: bytes, st: os.stat_result) -> SourceRead:
    """The ``SourceRead`` of bytes read from an open file whose ``fstat`` is ``st``."""
    return SourceRead(data, (st.st_ino, st.st_size, st.st_mtime_ns), hashlib.sha256(data).hexdigest())


@dataclass(slots=True, eq=False)
class FileRecord:
    """What the loader knows of one source file.

    ``discovered`` holds the tools of the last content that loaded (the last
    good version); it survives failures and the empty-file grace.
    """

    path: Path
    root: Path
    module_name: str
    phase: Phase = Phase.LOADED
    content_hash: str | None = None
    attempted_hash: str | None = None
    signature: Signature | None = None
    discovered: dict[str, AgentTool] = field(default_factory=dict)
    components: dict[str, Component] = field(default_factory=dict)
    """The prompts, resources and templates of the last good version, by ``component_id``."""
    loaded_at: float | None = None
    load_seconds: float | None = None
    error: LoadErrorInfo | None = None
    grace: EmptyGrace | None = None
    absent_since: float | None = None
    """When a batch first found the file missing, or (a helper others import) empty, while watching
    (``time.monotonic()``); None while it holds content."""
    spec_changes: tuple[tuple[str, SpecChange], ...] = ()
    rewrites: int = 0
    """Imports in a row during which the file was written (by its own code, most likely)."""
    held_until: float = 0.0
    """No import starts before this ``time.monotonic()`` (a file that keeps rewriting itself)."""
    owes_run: bool = False
    """A module it imported changed and its content has not run since: whatever it holds next runs."""

    @property
    def is_removed(self) -> bool:
        """Whether the file is gone from disk (its record stays for its status)."""
        return self.phase is Phase.REMOVED

    @property
    def serves_anything(self) -> bool:
        """Whether its last good version defines tools, prompts or resources."""
        return bool(self.discovered or self.components)

    @property
    def rewrites_itself(self) -> bool:
        """Whether its imports keep writing the file, so that its reloads are slowed down."""
        return self.rewrites >= REWRITES_BEFORE_BACK_OFF

    def plan(self, content_hash: str, *, forced: bool, now: float, grace_seconds: float) -> Plan:
        """Decide what to do with ``content_hash``, read from disk in this batch.

        ``forced`` means a module this file imported changed, so even unchanged
        content must run again; it is remembered until the content runs (a batch that
        reads the file empty in the middle of a save cannot run it, and its bytes coming
        back unchanged must). A file held back (``note_rewrite``) waits before any import.
        """
        self.owes_run = self.owes_run or forced
        plan = self._plan(content_hash, forced=self.owes_run, now=now, grace_seconds=grace_seconds)
        if plan.step is Step.LOAD and self.held_until > now:
            return Plan(Step.WAIT, self.held_until - now)
        return plan

    def note_rewrite(self, rewrote: bool, now: float) -> bool:
        """An import ended; ``rewrote``: the file was written while it ran. True when the back-off grows.

        A file whose every import writes it again (a counter, a timestamp) would reload
        as fast as the machine allows: from the second such import in a row, the next
        import waits, twice as long each time up to ``BACK_OFF_CAP``. An import that
        leaves the file alone ends the back-off.
        """
        if not rewrote:
            self.rewrites, self.held_until = 0, 0.0
            return False
        self.rewrites += 1
        if not self.rewrites_itself:
            return False
        steps = self.rewrites - REWRITES_BEFORE_BACK_OFF
        self.held_until = now + min(BACK_OFF_FIRST * 2**steps, BACK_OFF_CAP)
        return True

    def _plan(self, content_hash: str, *, forced: bool, now: float, grace_seconds: float) -> Plan:
        grace = self.grace
        if grace is not None:
            if content_hash == self.content_hash and not forced:
                return _PLAN_KEEP_SERVING
            if content_hash == grace.content_hash:
                waited = now - grace.since
                if waited < grace_seconds:
                    return Plan(Step.WAIT, grace_seconds - waited)
                return _PLAN_DROP_TOOLS
            return _PLAN_LOAD
        if forced:
            return _PLAN_LOAD
        if content_hash == self.content_hash and self.phase is Phase.LOADED:
            return _PLAN_SKIP
        if content_hash == self.attempted_hash and self.phase in (Phase.FAILED, Phase.STUCK, Phase.REJECTED):
            return _PLAN_SKIP
        return _PLAN_LOAD

    def absent_wait(self, now: float, grace_seconds: float) -> float | None:
        """Seconds this missing (or emptied) file's last version still serves; None once the grace is over.

        Editors save by renaming the file to a backup (or deleting it, or truncating
        it) and then writing it anew, and a batch can fall in between: the file counts
        as removed (or empty) only once it has been so for the whole grace.
        """
        if self.absent_since is None:
            return grace_seconds if grace_seconds > 0 else None
        left = grace_seconds - (now - self.absent_since)
        return left if left > 0 else None

    def attempted(self, content_hash: str, seconds: float | None) -> None:
        """An import of ``content_hash`` ran for ``seconds`` (whatever its outcome)."""
        self.attempted_hash = content_hash
        self.load_seconds = seconds

    def accept(
        self,
        tools: dict[str, AgentTool],
        content_hash: str,
        wall_time: float,
        components: dict[str, Component] | None = None,
    ) -> None:
        """The content loaded: ``tools`` (and ``components``) become the file's own (LOADED)."""
        self.discovered = tools
        self.components = components or {}
        self.content_hash = content_hash
        self.loaded_at = wall_time
        self.error = None
        self.phase = Phase.LOADED
        self.grace = None
        self.owes_run = False

    def fail(self, error: LoadErrorInfo) -> None:
        """The content did not go live: FAILED, STUCK (a timeout) or REJECTED (an example failed).

        The last good tools stay.
        """
        self.phase = _PHASE_OF_ERROR.get(error.kind, Phase.FAILED)
        self.error = error
        self.owes_run = False

    def cannot_read(self, error: LoadErrorInfo) -> None:
        """The file is there but unreadable: FAILED, last good tools kept.

        The last attempt is forgotten, so the same bytes load again once the file is readable.
        """
        self.fail(error)
        self.attempted_hash = None

    def refuse(self, error: LoadErrorInfo) -> None:
        """The path must never load (a link out of the folder): FAILED with no tools at all."""
        self.phase = Phase.FAILED
        self.error = error
        self.discovered = {}
        self.components = {}
        self.grace = None

    def start_grace(self, content_hash: str, now: float) -> None:
        """The content defines no tools while the serving version had some: keep serving a while."""
        if self.grace is None or self.grace.content_hash != content_hash:
            self.grace = EmptyGrace(now, content_hash, self.signature)

    def saw_write(self, content_hash: str, signature: Signature | None, now: float) -> None:
        """A batch read ``content_hash`` with stat ``signature``: the same empty content written anew restarts
        the grace.

        A file rewritten without pause (truncated, then written, many times) can be caught
        empty by the batch that ends its grace although it held content in between, which
        no batch saw (a burst of events keeps postponing its batches): its stat tells.
        """
        grace = self.grace
        if grace is not None and grace.content_hash == content_hash and grace.signature != signature:
            self.grace = EmptyGrace(now, content_hash, signature)

    def saw_content(self, content_hash: str) -> None:
        """The file holds ``content_hash`` now: a grace begun for other (empty) content is over.

        The grace measures how long the file has been empty *without a break*.
        Content that is still importing when the file is emptied again must not
        leave the first grace standing: its old start would drop the tools at once.
        """
        if self.grace is not None and self.grace.content_hash != content_hash:
            self.grace = None

    def end_grace(self) -> None:
        """The content went back to what is serving: forget the grace."""
        self.grace = None

    def remove(self) -> None:
        """The file is gone: REMOVED, no tools, no error."""
        self.phase = Phase.REMOVED
        self.discovered = {}
        self.components = {}
        self.error = None
        self.grace = None
        self.absent_since = None
