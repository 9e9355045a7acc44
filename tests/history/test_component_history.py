"""Versions of prompts, resources and skills in the history store, recorded through the component hooks."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from support import MakeLoader, eventually, write

from loader import skill_entries
from loader.fingerprint import spec_digest
from loader.history.component_facts import manifest_digest
from loader.history.component_store import CONTENT_KEPT_BYTES, NewComponentVersion
from loader.history.recorder import HistoryRecorder
from loader.history.store import HistoryStore, database_path

PROMPT_V1 = "---\ndescription: Say hello.\n---\nHello {{who}}\n"
PROMPT_V2 = "---\ndescription: Say hello warmly.\n---\nHello dear {{who}}\n"
SKILL = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\n# pdf\nSee references/FORMS.md.\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _recording(tools: Path, state: Path, make_loader: MakeLoader) -> tuple[HistoryRecorder, HistoryStore]:
    recorder = HistoryRecorder(state)
    make_loader(tools, plugins=[recorder])
    assert recorder.flush(30)
    store = recorder.store_for(tools)
    assert store is not None
    return recorder, store


def test_a_prompt_file_keeps_each_version_of_its_text_and_front_matter(
    tools_dir: Path, tmp_path: Path, make_loader: MakeLoader
) -> None:
    path = write(tools_dir / "prompts" / "greet.md", PROMPT_V1)
    _, store = _recording(tools_dir, tmp_path / "state", make_loader)
    write(path, PROMPT_V2)
    eventually(lambda: len(store.component_versions("prompt", "greet")) == 2, message="the second version")
    newest, oldest = store.component_versions("prompt", "greet")
    assert (oldest.content, newest.content) == (PROMPT_V1.encode(), PROMPT_V2.encode())
    assert newest.digest == f"sha256:{_sha(PROMPT_V2.encode())}" == f"sha256:{newest.content_hash}"
    assert newest.facts == {"name": "greet", "description": "Say hello warmly."}
    assert newest.live and not oldest.live and oldest.replaced_at == newest.went_live_at
    assert store.components() == [("prompt", "greet")]

    path.unlink()
    eventually(lambda: not store.component_versions("prompt", "greet")[0].live, timeout=30, message="removed")


def test_a_resource_file_keeps_its_digest_and_a_large_one_only_its_digest(
    tools_dir: Path, tmp_path: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "resources" / "schema.sql", "create table t (id int);\n")
    big = tools_dir / "resources" / "big.bin"
    big.write_bytes(b"\x00\x01" * (CONTENT_KEPT_BYTES // 2 + 1))
    _, store = _recording(tools_dir, tmp_path / "state", make_loader)
    (schema,) = store.component_versions("resource", "tool-loader:///resources/schema.sql")
    assert schema.content == b"create table t (id int);\n"
    assert schema.digest == "sha256:" + _sha(schema.content)
    assert schema.facts["name"] == "resources/schema.sql" and "mime_type" in schema.facts
    (large,) = store.component_versions("resource", "tool-loader:///resources/big.bin")
    assert large.content is None
    assert large.digest == "sha256:" + _sha(big.read_bytes())
    assert large.note is not None and "content not kept" in large.note


def test_a_skill_is_a_new_version_whenever_its_manifest_changes(
    tools_dir: Path, tmp_path: Path, make_loader: MakeLoader
) -> None:
    skill_md = write(tools_dir / "skills" / "pdf" / "SKILL.md", SKILL)
    forms = write(tools_dir / "skills" / "pdf" / "references" / "FORMS.md", "Fields: name.\n")
    recorder = HistoryRecorder(tmp_path / "state")
    loader = make_loader(tools_dir, plugins=[recorder])
    assert recorder.flush(30)
    store = recorder.store_for(tools_dir)
    assert store is not None

    def served_digest() -> str:
        (entry,) = skill_entries(loader.registry.snapshot().components())
        manifest = sorted(entry.wire()["resources"], key=lambda item: item["uri"])
        return manifest_digest(manifest)

    (first,) = store.component_versions("skill", "pdf")
    assert first.digest == served_digest()
    assert first.content == SKILL.encode()
    assert first.facts["front_matter"] == {"name": "pdf", "description": "Fill in PDF forms."}
    assert [entry["uri"] for entry in first.facts["manifest"]] == [
        "skill://pdf/SKILL.md",
        "skill://pdf/references/FORMS.md",
    ]

    write(forms, "Fields: name, date.\n")  # the SKILL.md is the same: the skill's manifest is not
    eventually(lambda: len(store.component_versions("skill", "pdf")) == 2, message="a new skill version")
    newest = store.component_versions("skill", "pdf")[0]
    assert newest.digest == served_digest() != first.digest
    assert newest.content_hash == first.content_hash  # its SKILL.md did not change
    file_versions = store.component_versions("skill-file", "skill://pdf/references/FORMS.md")
    assert [v.content for v in file_versions] == [b"Fields: name, date.\n", b"Fields: name.\n"]
    assert file_versions[0].digest == "sha256:" + _sha(forms.read_bytes())

    write(skill_md, SKILL.replace("Fill in PDF forms.", "Fill in and sign PDF forms."))
    eventually(lambda: len(store.component_versions("skill", "pdf")) == 3, message="the SKILL.md's version")
    assert store.component_versions("skill", "pdf")[0].facts["description"] == "Fill in and sign PDF forms."
    assert recorder.flush(10)
    assert len(store.component_versions("skill", "pdf")) == 3  # once per manifest, however many hooks


OLD_SCHEMA = """
CREATE TABLE folder (path TEXT PRIMARY KEY, created_at REAL NOT NULL);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, spec_json TEXT NOT NULL,
    file_path TEXT NOT NULL, content BLOB, content_hash TEXT NOT NULL, went_live_at REAL NOT NULL,
    replaced_at REAL, change_json TEXT, note TEXT, pid INTEGER NOT NULL, digest TEXT, provenance_json TEXT
);
CREATE INDEX versions_by_tool ON versions (tool, id);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, kind TEXT NOT NULL,
    detail_json TEXT NOT NULL, pid INTEGER NOT NULL
);
"""
"""The schema as it was before component versions: the database every earlier release wrote."""


def test_a_database_from_before_component_versions_reads_as_it_was_and_records_them(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    state = tmp_path / "state"
    path = database_path(folder, state)
    path.parent.mkdir(parents=True)
    spec = {"name": "calc", "description": "Add.", "inputSchema": {"json": {"type": "object"}}}
    with sqlite3.connect(path) as db:  # a tool version as an earlier release recorded it
        db.executescript(OLD_SCHEMA)
        db.execute(
            "INSERT INTO versions (tool, spec_json, file_path, content, content_hash, went_live_at, pid, digest) "
            "VALUES ('calc', ?, ?, ?, ?, ?, 1, ?)",
            (json.dumps(spec), str(folder / "calc.py"), b"v1", _sha(b"v1"), time.time(), spec_digest(spec)),
        )

    with HistoryStore(folder, state) as store:
        assert store.tools() == ["calc"]
        assert store.versions("calc")[0].content == b"v1"
        assert store.components() == []
        recorded = store.record_component(
            NewComponentVersion(
                "prompt",
                "greet",
                folder / "prompts" / "greet.md",
                b"Hi",
                _sha(b"Hi"),
                "sha256:x",
                time.time(),
                {},
            )
        )
        assert recorded is not None and store.components() == [("prompt", "greet")]
    with HistoryStore(folder, state) as again:
        assert again.component_versions("prompt", "greet")[0].content == b"Hi"
        assert again.versions("calc")[0].content == b"v1"
