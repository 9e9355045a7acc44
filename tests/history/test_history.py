"""Tests for loader/history.py and loader/history_recorder.py: versions that went live, on disk."""

from __future__ import annotations

import hashlib
import json
import linecache
import logging
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from support import call_text, cli_env, eventually, function_tool_source, write

from loader import ToolLoader, hookimpl
from loader.history.recorder import NOTE_CONTENT_MISMATCH, HistoryRecorder
from loader.history.store import HistoryError, HistoryEventKind, HistoryStore, NewVersion, database_path
from loader.spec_diff.kinds import SpecChangeKind


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _new(tool: str, content: bytes, spec_desc: str = "d", **params: str) -> NewVersion:
    spec = {
        "name": tool,
        "description": spec_desc,
        "inputSchema": {
            "json": {"type": "object", "properties": {k: {"type": v} for k, v in params.items()}}
        },
    }
    return NewVersion(tool, spec, Path("/x/t.py"), content, _sha(content), time.time())


# ------------------------------------------------------------------ the store
def test_database_lives_outside_the_folder_keyed_by_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    state = tmp_path / "state"
    with HistoryStore(folder, state) as store:
        assert store.path == database_path(folder, state)
        assert store.path.is_relative_to(state)
        assert not store.path.is_relative_to(folder)
        assert store.path.name == _sha(str(folder.resolve()).encode())[:16] + ".sqlite3"
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT path FROM folder").fetchall() == [(str(folder.resolve()),)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_default_state_dir_comes_from_the_environment(tmp_path: Path, private_state_dir: Path) -> None:
    assert database_path(tmp_path).is_relative_to(private_state_dir)


def test_record_chain_replaced_and_change(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "f", tmp_path / "s") as store:
        first = store.record(_new("calc", b"v1", a="integer", b="integer"))
        assert first is not None and first.change is None and first.live
        assert store.record(_new("calc", b"v1", a="integer", b="integer")) is None  # already live
        second = store.record(_new("calc", b"v2", b="integer"))
        assert second is not None and second.change is not None
        assert second.change.kind is SpecChangeKind.BREAKING
        assert "parameter 'a' removed" in second.change.reasons
        versions = store.versions("calc")
        assert [v.content for v in versions] == [b"v2", b"v1"]
        assert versions[1].replaced_at == second.went_live_at
        assert versions[0].live
        assert store.tools() == ["calc"]


def test_removed_then_back_is_a_new_version(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "f", tmp_path / "s") as store:
        store.record(_new("calc", b"v1"))
        assert store.mark_removed("calc")
        assert not store.mark_removed("calc")
        assert store.versions("calc")[0].replaced_at is not None
        back = store.record(_new("calc", b"v1"))
        assert back is not None and back.change is not None and back.change.kind is SpecChangeKind.NONE


def test_stale_version_is_not_recorded_again(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "f", tmp_path / "s") as store:
        store.record(_new("calc", b"v1"))
        store.record(_new("calc", b"v2"))
        assert store.record(_new("calc", b"v1"), stale=True) is None
        assert store.record(_new("calc", b"v1")) is not None


def test_bounded_per_tool(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "f", tmp_path / "s", keep=5) as store:
        for i in range(12):
            store.record(_new("calc", f"v{i}".encode()))
        store.record(_new("other", b"x"))
        versions = store.versions("calc")
        assert [v.content for v in versions] == [f"v{i}".encode() for i in range(11, 6, -1)]
        assert len(store.versions("other")) == 1
    with pytest.raises(ValueError, match="keep must be at least 1"):
        HistoryStore(tmp_path / "f", tmp_path / "s", keep=0)


def test_find_by_hash_prefix(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "f", tmp_path / "s") as store:
        store.record(_new("calc", b"v1"))
        store.record(_new("calc", b"v2"))
        assert store.find("calc", _sha(b"v1")[:7]).content == b"v1"
        with pytest.raises(HistoryError, match=r"no recorded version with hash 'ffffffff'"):
            store.find("calc", "ffffffff")
        with pytest.raises(HistoryError, match="tool 'nope'"):
            store.find("nope", _sha(b"v1")[:7])


_HAMMER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from loader.history.store import HistoryStore, NewVersion
    folder, state, tool, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = HistoryStore(folder, state, keep=1000)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        data = f"{tool} {i}".encode()
        import hashlib
        spec = {"name": tool, "description": str(i), "inputSchema": {"json": {"type": "object"}}}
        store.record(NewVersion(tool, spec, Path(folder) / "t.py", data, hashlib.sha256(data).hexdigest(), time.time()))
    print("done", flush=True)
    """
)


def test_two_processes_write_one_database(tmp_path: Path) -> None:
    folder, state = tmp_path / "f", tmp_path / "s"
    folder.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _HAMMER, str(folder), str(state), name, "150"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        for name in ("left", "right")
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:  # both start writing at the same moment
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == "done"
    with HistoryStore(folder, state) as store:
        for name in ("left", "right"):
            versions = store.versions(name)
            assert [v.content for v in versions] == [f"{name} {i}".encode() for i in range(149, -1, -1)]
            assert sum(v.live for v in versions) == 1


# ------------------------------------------------------------------ the recorder
def _loader(
    folder: Path, state: Path, make_loader: Callable[..., ToolLoader]
) -> tuple[ToolLoader, HistoryRecorder]:
    recorder = HistoryRecorder(state)
    loader = make_loader(folder, plugins=[recorder])
    assert recorder.flush(30), "the first scan's versions were never written"
    return loader, recorder


def test_recorder_keeps_the_loaded_bytes(
    tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    state = tmp_path / "state"
    path = write(
        tools_dir / "calc.py", function_tool_source("calc", params="a: int, b: int", body="return str(a + b)")
    )
    loader, recorder = _loader(tools_dir, state, make_loader)
    store = recorder.store_for(path)
    assert store is not None
    first = store.versions("calc")
    assert len(first) == 1
    assert first[0].content == path.read_bytes()
    assert first[0].content_hash == _sha(path.read_bytes())
    assert first[0].file_path == path.resolve()

    write(tools_dir / "calc.py", function_tool_source("calc", params="b: int", body="return str(b)"))
    eventually(lambda: len(store.versions("calc")) == 2, message="second version recorded")
    newest = store.versions("calc")[0]
    assert newest.content == path.read_bytes()
    assert newest.change is not None and newest.change.kind is SpecChangeKind.BREAKING
    assert "parameter 'a' removed" in newest.change.reasons
    status = loader.file_status(path)
    assert status is not None and status.content_hash is not None
    assert newest.content_hash.startswith(status.content_hash)

    path.unlink()
    eventually(lambda: store.versions("calc")[0].replaced_at is not None, message="removal recorded")
    recorder.close()


def test_history_survives_a_restart(
    tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    state = tmp_path / "state"
    path = write(tools_dir / "calc.py", function_tool_source("calc", params="a: int"))
    first, recorder = _loader(tools_dir, state, make_loader)
    write(path, function_tool_source("calc", params="a: int, b: int = 0"))
    store = recorder.store_for(path)
    assert store is not None
    eventually(lambda: len(store.versions("calc")) == 2)
    first.close()
    recorder.close()

    # Same content on the next start: the live version carries on.
    second, recorder2 = _loader(tools_dir, state, make_loader)
    store2 = recorder2.store_for(path)
    assert store2 is not None
    assert len(store2.versions("calc")) == 2
    assert store2.versions("calc")[0].live
    second.close()
    recorder2.close()

    # Edited while nothing watched: the next start records it, against the last version.
    write(path, function_tool_source("calc", params="a: int"))
    third, recorder3 = _loader(tools_dir, state, make_loader)
    store3 = recorder3.store_for(path)
    assert store3 is not None
    versions = store3.versions("calc")
    assert len(versions) == 3
    assert versions[0].content == path.read_bytes()
    assert versions[0].change is not None and versions[0].change.reasons_of(SpecChangeKind.BREAKING) == (
        "parameter 'b' removed",
    )
    assert versions[1].replaced_at is not None
    third.close()
    recorder3.close()


_WATCHER = textwrap.dedent(
    """
    import sys, threading
    from loader import ToolLoader
    from loader.history.recorder import HistoryRecorder
    from loader.history.store import HistoryStore
    from support import FAST
    released = threading.Event()
    if sys.argv[3] == "held":  # this process's history writer lags: it writes nothing until stop
        record = HistoryStore.record
        def held_record(self, *args, **kwargs):
            released.wait()
            return record(self, *args, **kwargs)
        HistoryStore.record = held_record
    recorder = HistoryRecorder(sys.argv[2])
    loader = ToolLoader([sys.argv[1]], plugins=[recorder], config=FAST)
    loader.subscribe(lambda event: print("loaded", event.status.content_hash, flush=True))
    loader.scan()
    loader.start()
    print("ready", flush=True)
    sys.stdin.readline()
    released.set()
    loader.close()
    recorder.close()
    """
)


def _wait_line(stream: IO[str], wanted: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            raise AssertionError(f"watcher exited before printing {wanted!r}")
        if line.strip() == wanted:
            return
    raise AssertionError(f"no {wanted!r} within 30 s")


def test_two_watching_processes_record_each_version_once(tools_dir: Path, tmp_path: Path) -> None:
    """One process's history writer lags behind the other's: it writes every version it loaded
    only after the other has written them all, and must not add them a second time."""
    state = tmp_path / "state"
    path = write(tools_dir / "calc.py", function_tool_source("calc", body="return 'v0'"))
    env = cli_env()
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WATCHER, str(tools_dir), str(state), role],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role in ("prompt", "held")
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            _wait_line(proc.stdout, "ready")
        hashes = [_sha(path.read_bytes())]
        for i in range(1, 8):
            write(
                path,
                function_tool_source("calc", body=f"return 'v{i}'", params="a: int = 0" if i % 2 else ""),
            )
            hashes.append(_sha(path.read_bytes()))
            for proc in procs:  # both have loaded it before the next save
                assert proc.stdout is not None
                _wait_line(proc.stdout, f"loaded {hashes[-1][:12]}")
    finally:
        errors = []
        for proc in procs:  # the prompt one has written everything before the held one writes anything
            assert proc.stdin is not None
            proc.stdin.write("stop\n")
            proc.stdin.flush()
            errors.append(proc.communicate(timeout=60)[1])
    assert all(proc.returncode == 0 for proc in procs), errors
    assert not any("Traceback" in err for err in errors), errors
    with HistoryStore(tools_dir, state) as store:
        versions = store.versions("calc")
    assert [v.content_hash for v in versions] == hashes[::-1]
    assert [v.live for v in versions] == [True] + [False] * 7
    kinds = [v.change.kind if v.change else None for v in versions]
    assert kinds[-1] is None
    assert set(kinds[:-1]) == {SpecChangeKind.ADDITIVE, SpecChangeKind.BREAKING}
    with sqlite3.connect(database_path(tools_dir, state)) as db:
        rows = db.execute("SELECT change_json FROM versions ORDER BY id").fetchall()
    assert json.loads(rows[1][0])["reasons"][0]["reason"] == "optional parameter 'a' added"


class _Saboteur:
    """Changes the file on disk just before the recorder reads it (a save racing the hook)."""

    def __init__(self, path: Path, forget_source: bool) -> None:
        self.path = path
        self.forget_source = forget_source
        self.armed = False

    @hookimpl(tryfirst=True)
    def tool_loader_tool_replaced(self, tool: object, previous: object, path: Path) -> None:
        if self.armed:
            self.armed = False
            self.path.write_text("# already the next save\n")
            if self.forget_source:
                linecache.cache.pop(str(self.path), None)


@pytest.mark.parametrize("forget_source", [False, True], ids=["compiled-source", "lost"])
def test_recorder_when_the_file_moved_on_before_it_was_read(
    forget_source: bool, tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    path = write(tools_dir / "calc.py", function_tool_source("calc", body="return 'v1'"))
    saboteur = _Saboteur(path, forget_source=forget_source)
    recorder = HistoryRecorder(tmp_path / "state")
    loader = make_loader(tools_dir, plugins=[recorder, saboteur])
    store = recorder.store_for(path)
    assert store is not None
    saboteur.armed = True
    v2 = write(path, function_tool_source("calc", body="return 'v2'")).read_bytes()
    eventually(lambda: len(store.versions("calc")) == 2, message="v2 recorded")
    newest = store.versions("calc")[0]  # the sabotaged file defines no tools: no third version
    status_hash = _sha(v2)[:12]
    if forget_source:
        assert newest.content is None
        assert newest.content_hash == status_hash  # what the loader's status says
        assert newest.note == NOTE_CONTENT_MISMATCH
    else:
        assert newest.content == v2  # the bytes that were loaded, not what is on disk now
        assert newest.content_hash == _sha(v2)
        assert newest.note is None
    assert loader.file_status(path) is not None
    recorder.close()


_OPEN_AT = textwrap.dedent(
    """
    import sys, time
    from loader.history.store import HistoryStore
    start = float(sys.argv[3])
    while time.time() < start:
        pass
    HistoryStore(sys.argv[1], sys.argv[2]).close()
    print("opened", flush=True)
    """
)


def test_processes_opening_a_new_database_at_once_all_succeed(tmp_path: Path) -> None:
    # Switching a new database to WAL needs a lock SQLite's busy handler does not wait for.
    for attempt in range(3):
        folder, state = tmp_path / f"f{attempt}", tmp_path / f"s{attempt}"
        folder.mkdir()
        start = str(time.time() + 1.0)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _OPEN_AT, str(folder), str(state), start],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=cli_env(),
            )
            for _ in range(6)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 and out.strip() == "opened", err


# ------------------------------------------------------------------ off the reload path
THREE_TOOLS = """
from loader import tool

@tool
def first() -> str:
    \"\"\"One.\"\"\"
    return "{version}"

@tool
def second() -> str:
    \"\"\"Two.\"\"\"
    return "{version}"

@tool
def third() -> str:
    \"\"\"Three.\"\"\"
    return "{version}"
"""


def _write_locked(path: Path) -> sqlite3.Connection:
    """Another process's view: a connection holding the database's write lock until it is closed."""
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_locked_database_delays_the_record_never_the_reload(
    tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """Saves go live while another process holds the write lock; the versions are recorded once it lets go."""
    state = tmp_path / "state"
    path = write(tools_dir / "three.py", THREE_TOOLS.format(version="v1"))
    recorder = HistoryRecorder(state)
    loader = make_loader(tools_dir, plugins=[recorder])
    assert recorder.flush(30)
    holder = _write_locked(database_path(tools_dir, state))
    try:
        for version in ("v2", "v3"):
            write(path, THREE_TOOLS.format(version=version))
            # Well within the 30 s SQLite busy timeout a blocked recorder would wait for each tool.
            eventually(
                lambda v=version: call_text(loader, "third") == v,  # type: ignore[misc]
                timeout=15,
                message=f"{version} never went live while the history was locked",
            )
    finally:
        holder.rollback()
        holder.close()
    assert recorder.flush(30)
    store = recorder.store_for(path)
    assert store is not None
    for name in ("first", "second", "third"):
        assert len(store.versions(name)) == 3, name
    recorder.close()


def test_leaving_the_loader_writes_the_history_it_owes_first(tools_dir: Path, tmp_path: Path) -> None:
    """docs/python-api.md reads the history right after ``with ToolLoader(...)``: every version is there.

    The database is write-locked while the loader runs, so the versions are still queued when it
    closes; a close that left them to the background thread let the page print no version (CI).
    """
    state = tmp_path / "state"
    path = write(tools_dir / "three.py", THREE_TOOLS.format(version="v1"))
    HistoryStore(tools_dir, state).close()
    holder = sqlite3.connect(database_path(tools_dir, state), isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # released from a timer thread below
    recorder = HistoryRecorder(state)
    with ToolLoader([tools_dir], plugins=[recorder]) as loader:
        write(path, THREE_TOOLS.format(version="v2"))
        eventually(lambda: call_text(loader, "third") == "v2", timeout=15, message="v2 never went live")
        assert not recorder.flush(0), "the versions were written through the lock"
        threading.Timer(0.5, holder.rollback).start()
    assert recorder.flush(0), "the loader closed with versions still queued"
    holder.close()
    with HistoryStore(tools_dir, state) as store:
        for name in ("first", "second", "third"):
            assert [v.live for v in store.versions(name)] == [True, False], name


def test_records_beyond_the_queue_are_dropped_counted_and_noted(
    tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    state = tmp_path / "state"
    path = write(tools_dir / "calc.py", function_tool_source("calc", body="return 'v0'"))
    recorder = HistoryRecorder(state, queue_limit=2)
    loader = make_loader(tools_dir, plugins=[recorder])
    assert recorder.flush(30)
    holder = _write_locked(database_path(tools_dir, state))
    try:
        for version in range(1, 7):
            write(path, function_tool_source("calc", body=f"return 'v{version}'"))
            eventually(lambda v=version: call_text(loader, "calc") == f"v{v}")  # type: ignore[misc]
        eventually(lambda: recorder.dropped > 0, message="a full queue dropped nothing")
    finally:
        holder.rollback()
        holder.close()
    assert recorder.flush(30)
    store = recorder.store_for(path)
    assert store is not None
    events = store.events()
    dropped = [event for event in events if event.kind is HistoryEventKind.DROPPED]
    assert dropped and sum(event.count for event in dropped) == recorder.dropped, events
    assert len(store.versions("calc")) == 7 - recorder.dropped
    recorder.close()


def test_a_corrupt_database_is_set_aside_and_a_fresh_one_started(
    tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader], caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    database = database_path(tools_dir, state)
    database.parent.mkdir(parents=True)
    garbage = b"this is not a SQLite database\n" * 100
    database.write_bytes(garbage)
    path = write(tools_dir / "calc.py", function_tool_source("calc"))
    recorder = HistoryRecorder(state)
    with caplog.at_level(logging.WARNING, logger="loader.history"):
        loader = make_loader(tools_dir, plugins=[recorder])
        assert recorder.flush(30)
    assert call_text(loader, "calc") == "v1"
    set_aside = sorted(database.parent.glob(database.name + ".corrupt-*"))
    assert len(set_aside) == 1 and set_aside[0].read_bytes() == garbage
    assert str(set_aside[0]) in caplog.text
    store = recorder.store_for(path)
    assert store is not None
    assert len(store.versions("calc")) == 1
    resets = [event for event in store.events() if event.kind is HistoryEventKind.RESET]
    assert [event.set_aside for event in resets] == [set_aside[0]]
    recorder.close()


# A full disk, as the history's writer meets it: files may not grow past one page (RLIMIT_FSIZE,
# with SIGXFSZ ignored, turns each such write into EFBIG, which SQLite reports as a full disk).
_FULL_DISK = """
import json, logging, resource, signal, sys, time
from pathlib import Path
from loader import ToolLoader
from loader.history.recorder import HistoryRecorder
from loader.history.store import HistoryEventKind

folder, state = Path(sys.argv[1]), Path(sys.argv[2])
SOURCE = 'from loader import tool\\n@tool\\ndef calc() -> str:\\n    "Calc."\\n    return "{}"\\n'
logged = []
handler = logging.Handler()
handler.emit = lambda record: logged.append((record.levelno, record.getMessage()))
logging.getLogger("loader.history").addHandler(handler)
path = folder / "calc.py"

def save(version):
    path.write_text(SOURCE.format(version))
    deadline = time.monotonic() + 30
    while loader.registry.invoke("calc", {})["content"][0].get("text") != version:
        assert time.monotonic() < deadline, f"{version} never went live"
        time.sleep(0.01)

def settled(check, what):
    # A version is handed to the recorder after it goes live, so a flush right after a
    # version answers may come before its record is queued: wait for the outcome itself.
    deadline = time.monotonic() + 30
    while not (recorder.flush(30) and check()):
        assert time.monotonic() < deadline, f"history never showed {what}"
        time.sleep(0.01)

def kept():
    store = recorder.store_for(path)
    return [v.content.decode().rsplit('return "', 1)[1][:2] for v in store.versions("calc")]

def noted():
    store = recorder.store_for(path)
    return sum(e.count for e in store.events() if e.kind is HistoryEventKind.DROPPED)

path.write_text(SOURCE.format("v0"))
recorder = HistoryRecorder(state)
with ToolLoader([folder], plugins=[recorder]) as loader:
    settled(lambda: kept() == ["v0"], "v0")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
    for count, version in enumerate(("v1", "v2", "v3"), start=1):
        save(version)
        settled(lambda: recorder.dropped >= count, f"{version} dropped")
    full_drops = recorder.dropped
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    save("v4")
    settled(lambda: "v4" in kept() and noted() > 0, "v4 and the note of the drops")
    noted, kept = noted(), kept()
    recorder.close()
print(json.dumps({
    "full_drops": full_drops,
    "noted": noted,
    "kept": kept,
    "said": [m for level, m in logged if "cannot be written" in m],
    "errors": [m for level, m in logged if level >= logging.ERROR],
}))
"""


def test_a_full_disk_drops_history_counts_and_notes_it_and_never_the_reload(
    tools_dir: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(tools_dir), str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env(),
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    # Every save went live (the script waits for each); the versions saved while the disk was
    # full were dropped, said once without a traceback, and noted once it took writes again.
    assert seen["full_drops"] == 3 and seen["noted"] == 3, seen
    assert seen["kept"] == ["v4", "v0"], seen
    assert len(seen["said"]) == 1, seen  # "database or disk is full", or "disk I/O error" for EFBIG
    assert seen["errors"] == [], seen
