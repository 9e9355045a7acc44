"""The tool digest in the version history: recorded with each version, and added to databases from before it."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from support import MakeLoader, eventually, function_tool_source, write

from loader.fingerprint import spec_digest
from loader.history.recorder import HistoryRecorder
from loader.history.store import HistoryStore, NewVersion, database_path

# The versions table as the store created it before the digest column existed.
OLD_SCHEMA = """
CREATE TABLE folder (path TEXT PRIMARY KEY, created_at REAL NOT NULL);
CREATE TABLE versions (
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
    pid INTEGER NOT NULL
);
CREATE INDEX versions_by_tool ON versions (tool, id);
"""


def spec(description: str) -> dict[str, object]:
    return {"name": "calc", "description": description, "inputSchema": {"json": {"type": "object"}}}


def test_each_version_keeps_the_digest_of_its_spec(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "f", tmp_path / "s") as store:
        first = store.record(NewVersion("calc", spec("one"), Path("/x/calc.py"), b"1", "h1", time.time()))
        second = store.record(NewVersion("calc", spec("two"), Path("/x/calc.py"), b"2", "h2", time.time()))
        assert first is not None and second is not None
        assert first.digest == spec_digest(spec("one")) != second.digest == spec_digest(spec("two"))
        assert [v.digest for v in store.versions("calc")] == [second.digest, first.digest]
        assert store.versions("calc")[0].to_json()["digest"] == second.digest


def test_a_database_from_before_the_digest_gets_it_from_the_stored_specs(tmp_path: Path) -> None:
    folder, state = tmp_path / "f", tmp_path / "s"
    folder.mkdir()
    path = database_path(folder, state)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        for index, description in enumerate(("one", "two")):
            db.execute(
                "INSERT INTO versions (tool, spec_json, file_path, content, content_hash, went_live_at, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    "calc",
                    json.dumps(spec(description), sort_keys=True),
                    "/x/calc.py",
                    b"x",
                    f"h{index}",
                    1.0,
                    1,
                ),
            )
    db.close()
    with HistoryStore(folder, state) as store:
        assert [v.digest for v in store.versions("calc")] == [
            spec_digest(spec("two")),
            spec_digest(spec("one")),
        ]
        newer = store.record(NewVersion("calc", spec("three"), Path("/x/calc.py"), b"3", "h3", time.time()))
        assert newer is not None and newer.digest == spec_digest(spec("three"))
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT digest FROM versions ORDER BY id").fetchall()
    db.close()
    assert stored == [(spec_digest(spec(d)),) for d in ("one", "two", "three")]
    with HistoryStore(folder, state) as again:  # opening a migrated database changes nothing
        assert len(again.versions("calc")) == 3


def test_the_recorder_stores_the_digest_the_registry_serves(
    tools_dir: Path, tmp_path: Path, make_loader: MakeLoader
) -> None:
    recorder = HistoryRecorder(tmp_path / "state")
    write(tools_dir / "calc.py", function_tool_source("calc"))
    loader = make_loader(tools_dir, plugins=[recorder])
    store = recorder.store_for(tools_dir / "calc.py")
    assert store is not None
    eventually(lambda: store.versions("calc"), message="first version recorded")
    assert store.versions("calc")[0].digest == loader.registry.snapshot().digest("calc")
    write(tools_dir / "calc.py", function_tool_source("calc", params="a: int"))
    eventually(lambda: len(store.versions("calc")) == 2, message="second version recorded")
    assert store.versions("calc")[0].digest == loader.registry.snapshot().digest("calc")
    recorder.close()
