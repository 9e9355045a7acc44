"""Events to settled batches: the scheduler's timing rules, driven by a fake event source.

The real observer is exercised by tests/e2e/test_contract.py and tests/reload/test_roots.py;
here watchdog event objects are built by hand so the rules can be checked without
the filesystem (and links on a folder's path are read from a temporary tree).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from support import eventually
from watchdog.events import (
    DirCreatedEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
)

from loader.reload.roots import links_on_path, root_as_given
from loader.reload.watcher import ChangeScheduler, FolderWatcher, WatchTimings


class Recorder:
    def __init__(self) -> None:
        self.batches: list[set[Path]] = []
        self.lock = threading.Lock()

    def __call__(self, paths: set[Path]) -> None:
        with self.lock:
            self.batches.append(set(paths))


def test_latest_event_decides_and_paths_coalesce() -> None:
    record = Recorder()
    scheduler = ChangeScheduler(record)
    scheduler.note(Path("/a.py"), 5.0)
    scheduler.note(Path("/a.py"), 0.0)  # a later, shorter window replaces the long one
    scheduler.note_many([Path("/b.py"), Path("/c.py")], 0.0)
    # All three are due before the thread starts, however slowly this machine gets there: one batch.
    assert scheduler.pending() == 3
    scheduler.start()
    try:
        assert scheduler.wait_idle(5)
        assert record.batches == [{Path("/a.py"), Path("/b.py"), Path("/c.py")}]
    finally:
        scheduler.stop()


def test_a_new_event_postpones_a_due_path() -> None:
    record = Recorder()
    scheduler = ChangeScheduler(record)
    scheduler.note(Path("/a.py"), 0.01)
    scheduler.note(Path("/a.py"), 0.3)
    scheduler.start()
    try:
        assert not scheduler.wait_idle(0.1)
        assert record.batches == []
        assert scheduler.wait_idle(5)
        assert record.batches == [{Path("/a.py")}]
    finally:
        scheduler.stop()


def test_a_look_again_never_postpones_a_path_already_due_sooner() -> None:
    record = Recorder()
    scheduler = ChangeScheduler(record)
    scheduler.note(Path("/a.py"), 0.0)  # an import ended: look at once
    scheduler.look_again(Path("/a.py"), 60.0)  # its deadline check, arranged a moment later
    scheduler.look_again(Path("/b.py"), 60.0)
    scheduler.look_again(Path("/b.py"), 0.0)  # a sooner look wins
    scheduler.start()
    try:
        eventually(lambda: record.batches == [{Path("/a.py"), Path("/b.py")}], 10)
    finally:
        scheduler.stop()


def test_a_path_due_sooner_than_the_thread_sleeps_wakes_it_and_a_later_one_waits() -> None:
    """The thread is only woken for a deadline earlier than the one it sleeps until."""
    record = Recorder()
    scheduler = ChangeScheduler(record, tick=lambda: None, tick_interval=120.0)
    scheduler.note(Path("/far.py"), 60.0)
    scheduler.start()
    try:
        assert scheduler.quiet_for(30.0)  # asleep until the far deadline (or the tick)
        scheduler.note(Path("/later.py"), 90.0)  # after what it sleeps until: no need to wake it
        scheduler.note(Path("/soon.py"), 0.0)  # before it: the thread must wake and apply it now
        deadline = time.monotonic() + 10.0
        while not record.batches and time.monotonic() < deadline:
            time.sleep(0.005)
        assert record.batches == [{Path("/soon.py")}]
        assert scheduler.pending() == 2
    finally:
        scheduler.stop()


def test_tasks_run_on_the_scheduler_thread_and_count_for_idle() -> None:
    threads: list[str] = []
    scheduler = ChangeScheduler(Recorder(), name="sched-test")
    scheduler.start()
    try:
        scheduler.submit(lambda: threads.append(threading.current_thread().name))
        assert scheduler.wait_idle(5)
        assert threads == ["sched-test"]
    finally:
        scheduler.stop()


def test_a_failing_batch_is_logged_and_the_thread_carries_on() -> None:
    calls: list[set[Path]] = []

    def apply(paths: set[Path]) -> None:
        calls.append(paths)
        if len(calls) == 1:
            raise RuntimeError("bad batch")

    scheduler = ChangeScheduler(apply)
    scheduler.start()
    try:
        scheduler.note(Path("/x.py"), 0)
        assert scheduler.wait_idle(5)
        scheduler.note(Path("/y.py"), 0)
        assert scheduler.wait_idle(5)
        assert calls == [{Path("/x.py")}, {Path("/y.py")}]
    finally:
        scheduler.stop()


def test_tick_runs_periodically_when_idle() -> None:
    ticks = threading.Event()
    scheduler = ChangeScheduler(Recorder(), tick=ticks.set, tick_interval=0.02)
    scheduler.start()
    try:
        assert ticks.wait(5)
    finally:
        scheduler.stop()


class FakeScheduler:
    def __init__(self) -> None:
        self.noted: list[tuple[Path, float]] = []

    def note(self, path: Path, delay: float) -> None:
        self.noted.append((path, delay))

    def apply_now(self, path: Path) -> None:
        self.noted.append((path, 0.0))


def _watcher() -> tuple[FolderWatcher, FakeScheduler, list[Path]]:
    fake = FakeScheduler()
    dirs: list[Path] = []
    timings = WatchTimings(settle=0.001, debounce=0.2, disappear_grace=0.3)
    watcher = FolderWatcher(fake, timings, recursive=True, on_dir=dirs.append)  # type: ignore[arg-type]
    return watcher, fake, dirs


def test_event_kinds_map_to_their_windows() -> None:
    watcher, fake, dirs = _watcher()
    watcher._on_event(FileCreatedEvent("/t/a.py"))
    watcher._on_event(FileModifiedEvent("/t/a.py"))
    watcher._on_event(FileClosedEvent("/t/a.py"))
    watcher._on_event(FileDeletedEvent("/t/b.py"))
    watcher._on_event(FileMovedEvent("/t/c.py.tmp", "/t/c.py"))
    watcher._on_event(FileOpenedEvent("/t/a.py"))
    watcher._on_event(FileClosedNoWriteEvent("/t/a.py"))
    watcher._on_event(DirCreatedEvent("/t/sub"))
    assert fake.noted == [
        (Path("/t/a.py"), 0.2),
        (Path("/t/a.py"), 0.2),
        (Path("/t/a.py"), 0.001),
        (Path("/t/b.py"), 0.001),  # gone: the batch holds the disappear grace, not the event's delay
        (Path("/t/c.py.tmp"), 0.001),
        (Path("/t/c.py"), 0.0),
    ]
    assert dirs == [Path("/t/sub")]


def test_files_that_cannot_matter_are_not_scheduled() -> None:
    """An editor's temporary costs no batch: only the rename that lands the real file is applied."""
    fake = FakeScheduler()
    watcher = FolderWatcher(
        fake,  # type: ignore[arg-type]
        WatchTimings(settle=0.001, debounce=0.2),
        recursive=True,
        on_dir=lambda path: None,
        matters=lambda path: path.suffix == ".py",
    )
    watcher._on_event(FileCreatedEvent("/t/.c.py.tmp"))
    watcher._on_event(FileClosedEvent("/t/.c.py.tmp"))
    watcher._on_event(FileMovedEvent("/t/.c.py.tmp", "/t/c.py"))  # the temporary lands: load c.py
    watcher._on_event(FileMovedEvent("/t/d.py", "/t/d.py~"))  # a backup rename: d.py is gone (for now)
    watcher._on_event(FileDeletedEvent("/t/d.py~"))
    assert fake.noted == [(Path("/t/c.py"), 0.0), (Path("/t/d.py"), 0.001)]


def test_real_observer_watch_survives_folder_recreation(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = ChangeScheduler(record)
    watcher = FolderWatcher(scheduler, WatchTimings(), recursive=True, on_dir=lambda p: None)
    folder = tmp_path / "w"
    watcher.start()
    scheduler.start()
    try:
        assert not watcher.ensure_watch(folder)  # missing folder: nothing to watch yet
        folder.mkdir()
        assert watcher.ensure_watch(folder)
        assert not watcher.ensure_watch(folder)  # already watched
        (folder / "a.py").write_text("x = 1\n")
        eventually(lambda: any(folder / "a.py" in b for b in record.batches))
        folder.rename(tmp_path / "old")
        folder.mkdir()
        assert watcher.ensure_watch(folder)  # a new inode gets a new watch
        (folder / "b.py").write_text("x = 2\n")
        eventually(lambda: any(folder / "b.py" in b for b in record.batches))
    finally:
        scheduler.stop()
        watcher.stop()


def test_links_on_path_follow_relative_absolute_and_nested_links(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "rev1" / "tools").mkdir(parents=True)
    os.symlink("real/rev1", tmp_path / "current")  # relative, like git-sync's link
    os.symlink(tmp_path / "current", tmp_path / "alias")  # absolute, to another link
    assert links_on_path(tmp_path / "plain") == ()
    assert links_on_path(tmp_path / "current" / "tools") == (tmp_path / "current",)
    assert links_on_path(tmp_path / "alias" / "tools") == (tmp_path / "alias", tmp_path / "current")
    os.symlink("loop", tmp_path / "loop")
    assert links_on_path(tmp_path / "loop") == (tmp_path / "loop",)  # gives up, never hangs


def test_root_as_given_keeps_links_and_makes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "target").mkdir()
    os.symlink("target", tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    assert root_as_given("link/./x/..") == tmp_path / "link"


def test_events_of_a_folder_watched_at_its_real_path_are_spelled_as_given() -> None:
    watcher, fake, dirs = _watcher()
    alias = (Path("/git/.worktrees/abc"), Path("/git/current"))
    watcher._on_event(FileClosedEvent("/git/.worktrees/abc/a.py"), alias)
    watcher._on_event(FileMovedEvent("/git/.worktrees/abc/b.tmp", "/git/.worktrees/abc/sub/b.py"), alias)
    watcher._on_event(DirCreatedEvent("/git/.worktrees/abc/pkg"), alias)
    assert fake.noted == [
        (Path("/git/current/a.py"), 0.001),
        (Path("/git/current/b.tmp"), 0.001),
        (Path("/git/current/sub/b.py"), 0.0),
    ]
    assert dirs == [Path("/git/current/pkg")]


def test_a_link_placed_inside_a_watched_folder_reconciles_that_folder(tmp_path: Path) -> None:
    watcher, fake, dirs = _watcher()
    watcher._roots = (tmp_path,)
    (tmp_path / "..2026_01_01").mkdir()
    os.symlink("..2026_01_01", tmp_path / "..data")
    os.symlink("..data/a.py", tmp_path / "a.py")
    watcher._on_event(FileMovedEvent(str(tmp_path / "..data_tmp"), str(tmp_path / "..data")))
    assert dirs == [tmp_path]
    watcher._on_event(FileCreatedEvent(str(tmp_path / "a.py")))  # a new key's link: complete at once
    assert fake.noted[-1] == (tmp_path / "a.py", 0.001)
