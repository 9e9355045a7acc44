"""Every version of a tool that went live, kept in SQLite outside the tools folder.

One database per watched folder, named by a short hash of the folder's absolute
path, under the platform's user state directory (``platformdirs``) unless a
state directory is given. WAL mode and a busy timeout let several processes
watching the same folder write at once; a version two of them both saw is kept
once (the write checks the newest row inside an immediate transaction).

The same database keeps the versions of prompts, resources, resource
templates, skills and skill files (``component_store``), beside the tools'.

Each version keeps its tool's digest (``loader.fingerprint.spec_digest``), the
identity clients and traces see; a database written before the column existed
gets it on open, worked out from the stored specs (the digest depends on the
spec alone).

History is an auxiliary record, never a reason to stop serving: a database
that is not a database any more is set aside (renamed with a timestamp) and a
fresh one started (``open_store``), and what happened to the record itself
(a reset, versions dropped while the database was busy) is kept as events
that ``tool-loader history`` shows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import platformdirs

from ..errors import ToolLoaderError
from ..fingerprint import spec_digest
from ..spec_diff.kinds import SpecChange
from ..spec_diff.specs import compare_specs
from . import component_store
from .component_store import (
    COMPONENT_SCHEMA,
    ComponentVersion,
    LiveSpan,
    NewComponentVersion,
    file_moved_on,
)

__all__ = [
    "DEFAULT_KEEP",
    "STATE_DIR_ENV",
    "HistoryError",
    "HistoryEvent",
    "HistoryEventKind",
    "HistoryStore",
    "NewVersion",
    "ToolVersion",
    "database_path",
    "default_state_dir",
    "is_corruption",
    "open_store",
]

logger = logging.getLogger(__name__)

DEFAULT_KEEP = 50
"""Versions kept per tool unless configured otherwise."""

STATE_DIR_ENV = "TOOL_LOADER_STATE_DIR"
"""Environment variable naming the state directory (beats the platform default)."""

_BUSY_TIMEOUT = 30.0
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS folder (
    path TEXT PRIMARY KEY,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    file_path TEXT NOT NULL,
    content BLOB,
    content_hash TEXT NOT NULL,
    went_live_at REAL NOT NULL,
    replaced_at REAL,
    change_json TEXT,
    note TEXT,
    pid INTEGER NOT NULL,
    digest TEXT,
    provenance_json TEXT
);
CREATE INDEX IF NOT EXISTS versions_by_tool ON versions (tool, id);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    detail_json TEXT NOT NULL,
    pid INTEGER NOT NULL
);
"""
    + COMPONENT_SCHEMA
)
_EVENTS_KEPT = 100


class HistoryError(ToolLoaderError):
    """The history database cannot be opened or does not hold what was asked for."""


class HistoryEventKind(StrEnum):
    """Something that happened to the record itself rather than to a tool."""

    RESET = "reset"
    """The database could not be read as one; it was set aside and this one started."""
    DROPPED = "dropped"
    """Versions went live but were not recorded (the database stayed busy and the queue was full)."""


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One event of the record: when, what, and its facts (``set_aside`` for a reset, ``count`` and
    ``since`` for dropped versions)."""

    at: float
    kind: HistoryEventKind
    set_aside: Path | None = None
    reason: str | None = None
    count: int = 0
    since: float | None = None

    def detail_json(self) -> str:
        return json.dumps(
            {
                "set_aside": None if self.set_aside is None else str(self.set_aside),
                "reason": self.reason,
                "count": self.count,
                "since": self.since,
            }
        )

    @classmethod
    def from_row(cls, at: float, kind: str, detail_json: str) -> HistoryEvent:
        detail = json.loads(detail_json)
        set_aside = detail.get("set_aside")
        return cls(
            at=at,
            kind=HistoryEventKind(kind),
            set_aside=None if set_aside is None else Path(set_aside),
            reason=detail.get("reason"),
            count=int(detail.get("count") or 0),
            since=detail.get("since"),
        )


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A tool version about to be recorded: what went live, from which bytes."""

    tool: str
    spec: Mapping[str, Any]
    file_path: Path
    content: bytes | None
    content_hash: str
    went_live_at: float
    note: str | None = None
    provenance: Mapping[str, Any] | None = None
    """Where a promoted version came from (``loader.history.provenance``); None for one written by hand."""


@dataclass(frozen=True, slots=True)
class ToolVersion(LiveSpan):
    """One recorded version of a tool.

    ``change`` is the spec change against the version before it (None for the
    first one recorded); ``content`` is None when the loaded bytes could not be
    recovered (``note`` says why); ``digest`` is the tool's digest, as listings
    and traces name this version.
    """

    id: int
    tool: str
    spec: dict[str, Any]
    file_path: Path
    content: bytes | None
    content_hash: str
    went_live_at: float
    replaced_at: float | None
    change: SpecChange | None
    note: str | None
    digest: str
    provenance: dict[str, Any] | None = None

    def to_json(self, *, content: bool = False) -> dict[str, Any]:
        """A plain dict for ``--json`` output; the file content only when asked."""
        data: dict[str, Any] = {
            "id": self.id,
            "tool": self.tool,
            "content_hash": self.content_hash,
            "digest": self.digest,
            "file_path": str(self.file_path),
            "went_live_at": self.went_live_at,
            "replaced_at": self.replaced_at,
            "change": None if self.change is None else self.change.to_json(),
            "note": self.note,
            "provenance": self.provenance,
            "spec": self.spec,
        }
        return self.with_content(data, content)


def default_state_dir() -> Path:
    """``$TOOL_LOADER_STATE_DIR``, else the platform's user state directory for tool-loader."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_state_dir("tool-loader", appauthor=False))


def database_path(folder: str | os.PathLike[str], state_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the history of ``folder`` lives: ``<state>/history/<sha256(abs folder)[:16]>.sqlite3``."""
    absolute = str(Path(folder).expanduser().resolve())
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:16]
    base = Path(state_dir).expanduser() if state_dir is not None else default_state_dir()
    return base / "history" / f"{digest}.sqlite3"


class HistoryStore:
    """The version history of one tools folder.

    Thread-safe (one connection behind a lock) and safe across processes
    (SQLite WAL with a busy timeout; writes use ``BEGIN IMMEDIATE``).
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        state_dir: str | os.PathLike[str] | None = None,
        *,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        if keep < 1:
            raise ValueError(f"HistoryStore keep must be at least 1, got {keep}")
        self.folder = Path(folder).expanduser().resolve()
        self.path = database_path(self.folder, state_dir)
        self.keep = keep
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(f"cannot open the tool history {self.path} for {self.folder}: {exc}") from exc
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT * 1000)}")
            _switch_to_wal(self._db)
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(_SCHEMA)  # CREATE ... IF NOT EXISTS: safe when processes race
            with self._write() as db:
                db.execute(
                    "INSERT OR IGNORE INTO folder (path, created_at) VALUES (?, ?)",
                    (str(self.folder), time.time()),
                )
                _add_digests(db)
        except (OSError, sqlite3.Error) as exc:
            self._db.close()
            raise HistoryError(f"cannot open the tool history {self.path} for {self.folder}: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One immediate transaction: other writers wait (busy timeout) instead of interleaving."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ writing
    def record(self, version: NewVersion, *, stale: bool = False) -> ToolVersion | None:
        """Record that ``version`` went live; None when it is the version already live.

        The version before it is marked replaced at this version's time, and
        the spec change against it is stored; versions beyond ``keep`` are dropped.
        A version already recorded is not recorded again once its file has moved
        on (``stale`` says the caller knows it has; else the file is read now,
        inside the transaction): a process whose writer lags behind another's
        then adds no old versions after the newer ones.
        """
        spec_json = json.dumps(version.spec, sort_keys=True, default=str)
        with self._write() as db:
            if db.execute(
                "SELECT 1 FROM versions WHERE tool = ? AND content_hash = ? AND spec_json = ? LIMIT 1",
                (version.tool, version.content_hash, spec_json),
            ).fetchone() and (stale or file_moved_on(version.file_path, version.content_hash)):
                return None
            last = db.execute(
                "SELECT spec_json, content_hash, replaced_at FROM versions WHERE tool = ? "
                "ORDER BY id DESC LIMIT 1",
                (version.tool,),
            ).fetchone()
            change: SpecChange | None = None
            if last is not None:
                last_spec, last_hash, last_replaced = last
                if last_replaced is None and last_spec == spec_json and last_hash == version.content_hash:
                    return None
                change = compare_specs(json.loads(last_spec), json.loads(spec_json))
                db.execute(
                    "UPDATE versions SET replaced_at = ? WHERE tool = ? AND replaced_at IS NULL",
                    (version.went_live_at, version.tool),
                )
            provenance = version.provenance
            written = (
                version.tool,
                spec_json,
                str(version.file_path),
                version.content,
                version.content_hash,
                version.went_live_at,
                None if change is None else json.dumps(change.to_json()),
                version.note,
                spec_digest(version.spec),
                None if provenance is None else json.dumps(dict(provenance), sort_keys=True),
            )
            cursor = db.execute(
                "INSERT INTO versions (tool, spec_json, file_path, content, content_hash, went_live_at, "
                "change_json, note, digest, provenance_json, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*written, os.getpid()),
            )
            new_id = cursor.lastrowid
            db.execute(
                "DELETE FROM versions WHERE tool = ? AND id NOT IN "
                "(SELECT id FROM versions WHERE tool = ? ORDER BY id DESC LIMIT ?)",
                (version.tool, version.tool, self.keep),
            )
        assert new_id is not None
        # Read back as every stored row is: the id first, and no replaced_at yet before the change.
        return _version_of((new_id, *written[:6], None, *written[6:]))

    def note_event(self, event: HistoryEvent) -> None:
        """Keep an event of the record itself (the newest ``_EVENTS_KEPT`` are kept)."""
        with self._write() as db:
            db.execute(
                "INSERT INTO events (at, kind, detail_json, pid) VALUES (?, ?, ?, ?)",
                (event.at, str(event.kind), event.detail_json(), os.getpid()),
            )
            db.execute(
                "DELETE FROM events WHERE id NOT IN (SELECT id FROM events ORDER BY id DESC LIMIT ?)",
                (_EVENTS_KEPT,),
            )

    def events(self) -> list[HistoryEvent]:
        """The events of the record, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT at, kind, detail_json FROM events ORDER BY id").fetchall()
        return [HistoryEvent.from_row(*row) for row in rows]

    def mark_removed(self, tool: str, at: float | None = None) -> bool:
        """Record that ``tool`` left the registry; False if no version was live."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE versions SET replaced_at = ? WHERE tool = ? AND replaced_at IS NULL",
                (time.time() if at is None else at, tool),
            )
            return cursor.rowcount > 0

    def record_component(
        self, version: NewComponentVersion, *, stale: bool = False
    ) -> ComponentVersion | None:
        """Record that a component ``version`` went live (``record``'s rules); None when it is live."""
        with self._write() as db:
            return component_store.record_component(db, version, stale=stale, keep=self.keep)

    def mark_component_removed(self, kind: str, key: str, at: float | None = None) -> bool:
        """Record that a component left the registry; False if no version of it was live."""
        with self._write() as db:
            return component_store.mark_component_removed(db, kind, key, time.time() if at is None else at)

    # ------------------------------------------------------------ reading
    def components(self) -> list[tuple[str, str]]:
        """Every component ``(kind, key)`` with a recorded version, sorted."""
        with self._lock:
            return component_store.component_keys(self._db)

    def component_versions(self, kind: str, key: str) -> list[ComponentVersion]:
        """The versions of the component ``kind``/``key``, newest first."""
        with self._lock:
            return component_store.component_versions(self._db, kind, key)

    def tools(self) -> list[str]:
        """Every tool name with a recorded version, sorted."""
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT tool FROM versions ORDER BY tool").fetchall()
        return [row[0] for row in rows]

    def versions(self, tool: str) -> list[ToolVersion]:
        """The versions of ``tool``, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, tool, spec_json, file_path, content, content_hash, went_live_at, replaced_at, "
                "change_json, note, digest, provenance_json FROM versions WHERE tool = ? ORDER BY id DESC",
                (tool,),
            ).fetchall()
        return [_version_of(row) for row in rows]

    def find(self, tool: str, hash_prefix: str) -> ToolVersion:
        """The newest version of ``tool`` whose content hash starts with ``hash_prefix``.

        Raises:
            HistoryError: No such version, or the prefix names two different contents.
        """
        prefix = hash_prefix.strip().lower()
        matches = [v for v in self.versions(tool) if prefix and v.content_hash.startswith(prefix)]
        if not matches:
            raise HistoryError(
                f"tool {tool!r} has no recorded version with hash {hash_prefix!r} ({self.path})"
            )
        if len({v.content_hash for v in matches}) > 1:
            hashes = ", ".join(sorted({v.short_hash for v in matches}))
            raise HistoryError(
                f"hash {hash_prefix!r} of tool {tool!r} is ambiguous: {hashes}; give more digits"
            )
        return matches[0]


def _version_of(row: tuple[Any, ...]) -> ToolVersion:
    (
        ident,
        tool,
        spec_json,
        file_path,
        content,
        content_hash,
        went_live,
        replaced,
        change_json,
        note,
        digest,
        provenance_json,
    ) = row
    return ToolVersion(
        id=ident,
        tool=tool,
        spec=json.loads(spec_json),
        file_path=Path(file_path),
        content=None if content is None else bytes(content),
        content_hash=content_hash,
        went_live_at=went_live,
        replaced_at=replaced,
        change=None if change_json is None else SpecChange.from_json(json.loads(change_json)),
        note=note,
        digest=digest if digest is not None else spec_digest(json.loads(spec_json)),
        provenance=None if provenance_json is None else json.loads(provenance_json),
    )


def _add_digests(db: sqlite3.Connection) -> None:
    """Give a database from before the digest column that column, filled from the stored specs
    (and one from before the provenance column that column, empty).

    Runs inside the opening write transaction, so two processes opening an old
    database at once migrate it once; rows written by an older process later
    (without a digest) are filled in at the next open, and read meanwhile with
    the digest worked out from their spec.
    """
    columns = {row[1] for row in db.execute("PRAGMA table_info(versions)")}
    if "digest" not in columns:
        db.execute("ALTER TABLE versions ADD COLUMN digest TEXT")
    if "provenance_json" not in columns:
        db.execute("ALTER TABLE versions ADD COLUMN provenance_json TEXT")
    missing = db.execute("SELECT id, spec_json FROM versions WHERE digest IS NULL").fetchall()
    db.executemany(
        "UPDATE versions SET digest = ? WHERE id = ?",
        [(spec_digest(json.loads(spec_json)), ident) for ident, spec_json in missing],
    )


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` says the file is no (sound) SQLite database, as opposed to busy or unreachable."""
    cause = exc if isinstance(exc, sqlite3.Error) else exc.__cause__
    return isinstance(cause, sqlite3.DatabaseError) and not isinstance(cause, sqlite3.OperationalError)


def open_store(
    folder: str | os.PathLike[str],
    state_dir: str | os.PathLike[str] | None = None,
    *,
    keep: int = DEFAULT_KEEP,
) -> HistoryStore:
    """The store of ``folder``; a corrupt database is set aside and a fresh one started (event RESET).

    Raises:
        HistoryError: The database cannot be opened for another reason (a state directory that is not
            writable), or the fresh one cannot be made either.
    """
    try:
        return HistoryStore(folder, state_dir, keep=keep)
    except HistoryError as exc:
        if not is_corruption(exc):
            raise
        reason = str(exc.__cause__)
    path = database_path(folder, state_dir)
    set_aside = set_aside_corrupt(path)
    logger.warning(
        "path=<%s>, set_aside=<%s> | the tool history database is corrupt (%s); started a fresh one",
        path,
        set_aside,
        reason,
    )
    store = HistoryStore(folder, state_dir, keep=keep)
    store.note_event(HistoryEvent(time.time(), HistoryEventKind.RESET, set_aside=set_aside, reason=reason))
    return store


def set_aside_corrupt(path: Path) -> Path:
    """Rename ``path`` (and its WAL files) to ``<name>.corrupt-<timestamp>``; returns the new name."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
    try:
        path.rename(target)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                side.rename(target.with_name(target.name + suffix))
    except OSError as exc:
        raise HistoryError(f"cannot set the corrupt tool history {path} aside: {exc}") from exc
    return target


def _switch_to_wal(db: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, retried: two processes opening a new database at once
    race for the lock the switch needs, and SQLite's busy handler does not cover it."""
    deadline = time.monotonic() + _BUSY_TIMEOUT
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
