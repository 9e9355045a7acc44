"""The versions of prompts, resources, resource templates, skills and skill files, beside the tool versions.

One table, ``component_versions``, in the same database as the tools'
``versions``: a component is named by its kind and key (a prompt's name, a
resource's URI, a skill's path below ``skills/``). A version keeps the bytes
of the file that defined it (a prompt's text and front matter, a resource
file's bytes, a ``SKILL.md``, a tool file with ``@prompt``/``@resource``), their
sha256, and the component's ``digest``: a skill's is its manifest digest, so a
change to any file of a skill is a new version of the skill. Content above
``CONTENT_KEPT_BYTES`` keeps its digest and size only.

``HistoryStore`` owns the connection and the transactions; these functions
run inside them. The table is created by ``CREATE TABLE IF NOT EXISTS`` when a
store opens, so a database written before it existed is read as it was and
gains the table on its first open.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "COMPONENT_SCHEMA",
    "CONTENT_KEPT_BYTES",
    "ComponentVersion",
    "LiveSpan",
    "NewComponentVersion",
    "component_keys",
    "component_versions",
    "file_moved_on",
    "mark_component_removed",
    "record_component",
]

CONTENT_KEPT_BYTES = 1024 * 1024
"""A component version keeps its file's bytes up to this size; a larger one keeps its digest and size."""

COMPONENT_SCHEMA = """
CREATE TABLE IF NOT EXISTS component_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    file_path TEXT NOT NULL,
    content BLOB,
    content_hash TEXT NOT NULL,
    digest TEXT NOT NULL,
    went_live_at REAL NOT NULL,
    replaced_at REAL,
    facts_json TEXT NOT NULL,
    note TEXT,
    pid INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS component_versions_by_key ON component_versions (kind, key, id);
"""

_COLUMNS = (
    "id, kind, key, file_path, content, content_hash, digest, went_live_at, replaced_at, facts_json, note"
)


class LiveSpan:
    """What tool and component versions share: a file's sha256, and whether the version still serves."""

    __slots__ = ()
    content_hash: str
    replaced_at: float | None
    content: bytes | None

    @property
    def short_hash(self) -> str:
        """The first 12 hex digits of the file's sha256, as status records and the console show them."""
        return self.content_hash[:12]

    @property
    def live(self) -> bool:
        """Whether this version has not been replaced or removed (as far as any process recorded)."""
        return self.replaced_at is None

    def with_content(self, data: dict[str, Any], content: bool) -> dict[str, Any]:
        """``data`` (a ``to_json``), with the file's text under ``content`` when asked."""
        if content:
            data["content"] = None if self.content is None else self.content.decode("utf-8", "replace")
        return data


@dataclass(frozen=True, slots=True)
class _ComponentVersionFields:
    """What a component version is, recorded or about to be: which component, from which bytes, since when."""

    kind: str
    key: str
    file_path: Path
    content: bytes | None
    content_hash: str
    digest: str
    went_live_at: float


@dataclass(frozen=True, slots=True)
class NewComponentVersion(_ComponentVersionFields):
    """A component version about to be recorded: what went live, from which bytes."""

    facts: Mapping[str, Any]
    """What listings show of it: name, title, description, MIME type; a skill's front matter and manifest."""
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ComponentVersion(_ComponentVersionFields, LiveSpan):
    """One recorded version of a component; ``content`` is None when it was not kept (``note`` says why)."""

    id: int
    replaced_at: float | None
    facts: dict[str, Any]
    note: str | None

    def to_json(self, *, content: bool = False) -> dict[str, Any]:
        """A plain dict for ``--json`` output; the file content only when asked."""
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "key": self.key,
            "content_hash": self.content_hash,
            "digest": self.digest,
            "file": str(self.file_path),
            "went_live_at": self.went_live_at,
            "replaced_at": self.replaced_at,
            "live": self.live,
            "facts": self.facts,
            "note": self.note,
        }
        return self.with_content(data, content)


def file_moved_on(path: Path, content_hash: str) -> bool:
    """Whether the file at ``path`` now holds other bytes than ``content_hash`` (False when unreadable)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return hashlib.sha256(data).hexdigest() != content_hash


def record_component(
    db: sqlite3.Connection, version: NewComponentVersion, *, stale: bool, keep: int
) -> ComponentVersion | None:
    """Record ``version`` inside the caller's write transaction; None when it is the live version already,
    or an old one whose file has moved on (``stale``, else read now): the rules of tool versions."""
    kind, key = version.kind, version.key
    if db.execute(
        "SELECT 1 FROM component_versions WHERE kind = ? AND key = ? AND digest = ? AND content_hash = ? "
        "LIMIT 1",
        (kind, key, version.digest, version.content_hash),
    ).fetchone() and (stale or file_moved_on(version.file_path, version.content_hash)):
        return None
    last = db.execute(
        "SELECT digest, content_hash, replaced_at FROM component_versions WHERE kind = ? AND key = ? "
        "ORDER BY id DESC LIMIT 1",
        (kind, key),
    ).fetchone()
    if last is not None and last[2] is None and tuple(last[:2]) == (version.digest, version.content_hash):
        return None
    mark_component_removed(db, kind, key, version.went_live_at)
    facts_json = json.dumps(dict(version.facts), sort_keys=True, default=str)
    written = (
        kind,
        key,
        str(version.file_path),
        version.content,
        version.content_hash,
        version.digest,
        version.went_live_at,
        facts_json,
        version.note,
    )
    cursor = db.execute(
        "INSERT INTO component_versions (kind, key, file_path, content, content_hash, digest, went_live_at, "
        "facts_json, note, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*written, os.getpid()),
    )
    db.execute(
        "DELETE FROM component_versions WHERE kind = ? AND key = ? AND id NOT IN "
        "(SELECT id FROM component_versions WHERE kind = ? AND key = ? ORDER BY id DESC LIMIT ?)",
        (kind, key, kind, key, keep),
    )
    assert cursor.lastrowid is not None
    # Read back as every stored row is (``_COLUMNS``): the id first, and no replaced_at yet before the facts.
    return _version_of((cursor.lastrowid, *written[:7], None, *written[7:]))


def mark_component_removed(db: sqlite3.Connection, kind: str, key: str, at: float) -> bool:
    """End the live version of a component at ``at``; False if none was live."""
    cursor = db.execute(
        "UPDATE component_versions SET replaced_at = ? WHERE kind = ? AND key = ? AND replaced_at IS NULL",
        (at, kind, key),
    )
    return cursor.rowcount > 0


def component_keys(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every ``(kind, key)`` with a recorded version, sorted."""
    rows = db.execute("SELECT DISTINCT kind, key FROM component_versions ORDER BY kind, key").fetchall()
    return [(kind, key) for kind, key in rows]


def component_versions(db: sqlite3.Connection, kind: str, key: str) -> list[ComponentVersion]:
    """The versions of one component, newest first."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM component_versions WHERE kind = ? AND key = ? ORDER BY id DESC",
        (kind, key),
    ).fetchall()
    return [_version_of(row) for row in rows]


def _version_of(row: tuple[Any, ...]) -> ComponentVersion:
    ident, kind, key, file_path, content, content_hash, digest, went_live, replaced, facts_json, note = row
    return ComponentVersion(
        id=ident,
        kind=kind,
        key=key,
        file_path=Path(file_path),
        content=None if content is None else bytes(content),
        content_hash=content_hash,
        digest=digest,
        went_live_at=went_live,
        replaced_at=replaced,
        facts=json.loads(facts_json),
        note=note,
    )
