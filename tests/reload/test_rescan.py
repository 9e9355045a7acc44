"""Rescanner: the safety net that finds changes whose events were lost, on the real filesystem."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from support import FAST, call_text, eventually, function_tool_source, write

from loader.reload.loader import ToolLoader
from loader.reload.rescan import Rescanner

WAIT = 10.0
OLD_NS = time.time_ns() - 3600 * 10**9  # an hour ago: far from racy


def age(*paths: Path, ns: int = OLD_NS) -> None:
    """Backdate mtimes, so the racy-timestamp rule does not re-check them on its own."""
    for path in paths:
        os.utime(path, ns=(ns, ns))


def folder_of(tmp_path: Path, count: int) -> list[Path]:
    files = [tmp_path / f"t{i:03d}.py" for i in range(count)]
    for path in files:
        path.write_text("x = 1\n")
    age(*files, tmp_path)
    return files


def test_first_pass_is_a_baseline(tmp_path: Path) -> None:
    folder_of(tmp_path, 3)
    scanner = Rescanner([tmp_path], report=lambda paths: ())
    assert scanner.scan_once() == []
    assert scanner.last.tracked_files == 3 and scanner.last.full


def test_new_and_removed_files_are_found_through_the_folder_mtime(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 20)
    # A slice larger than the folder: only the folder's changed mtime can reveal these.
    scanner = Rescanner([tmp_path], report=lambda paths: (), slices=1000)
    scanner.scan_once()
    added = tmp_path / "new.py"
    added.write_text("y = 2\n")
    files[5].unlink()
    assert set(scanner.scan_once()) == {added, files[5]}
    assert scanner.last.listed == 1


def test_in_place_writes_are_found_by_the_rotating_slice(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 40)
    scanner = Rescanner([tmp_path], report=lambda paths: (), slices=4)
    scanner.scan_once()
    target = files[17]
    target.write_text("x = 2\n")  # same size, new mtime; the folder's mtime does not move
    age(tmp_path)
    found: list[Path] = []
    for _ in range(4):
        found += scanner.scan_once()
        assert scanner.last.listed == 0
        assert scanner.last.stats <= 40 // 4 + 1  # a slice (plus the racy re-check), not a full walk
    assert found == [target]


def test_racy_mtimes_are_checked_again(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 10)
    fresh = time.time_ns()
    os.utime(files[3], ns=(fresh, fresh))  # seen while its mtime is fresh: racily clean
    scanner = Rescanner([tmp_path], report=lambda paths: (), slices=1000)
    scanner.scan_once()
    files[3].write_text("x = 2\n")  # same size; a later tick of a coarse clock
    os.utime(files[3], ns=(fresh + 1, fresh + 1))
    age(tmp_path)
    # Not in this pass's slice and the folder did not change: only the racy re-check catches it.
    assert scanner.scan_once() == [files[3]]
    assert scanner.last.listed == 0 and scanner.last.stats == 2


def test_full_pass_checks_every_file(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 30)
    scanner = Rescanner([tmp_path], report=lambda paths: (), slices=1000)
    scanner.scan_once()
    files[29].write_text("x = 3\n")
    age(tmp_path)
    assert scanner.scan_once(full=True) == [files[29]]
    assert scanner.last.stats == 30


def test_sub_folders_appear_and_vanish(tmp_path: Path) -> None:
    folder_of(tmp_path, 2)
    scanner = Rescanner([tmp_path], report=lambda paths: ())
    scanner.scan_once()
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "a.py").write_text("a = 1\n")
    (sub / "b.py").write_text("b = 1\n")
    assert set(scanner.scan_once()) == {sub / "a.py", sub / "b.py"}
    for path in sub.iterdir():
        path.unlink()
    sub.rmdir()
    assert set(scanner.scan_once()) == {sub / "a.py", sub / "b.py"}


def test_ignored_and_nested_folders(tmp_path: Path) -> None:
    folder_of(tmp_path, 1)
    for name in ("__pycache__", ".git", "deep"):
        (tmp_path / name).mkdir()
    scanner = Rescanner([tmp_path], report=lambda paths: ())
    flat = Rescanner([tmp_path], report=lambda paths: (), recursive=False)
    scanner.scan_once()
    flat.scan_once()
    for name in ("__pycache__", ".git", "deep"):
        (tmp_path / name / "x.py").write_text("x = 1\n")
    assert scanner.scan_once() == [tmp_path / "deep" / "x.py"]
    assert flat.scan_once() == []


def test_news_from_a_partial_pass_makes_the_next_pass_full(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 10)
    reports: list[list[Path]] = []

    def report(paths: list[Path]) -> list[Path]:
        reports.append(paths)
        return paths if scanner.passes > 1 else []  # after the first look, events were lost

    scanner = Rescanner([tmp_path], report=report, slices=1000)
    scanner.step()  # the first look: every file, for the owner to compare with what it read
    assert sorted(reports.pop()) == sorted(files) and scanner.recoveries == 0
    files[1].write_text("x = 7\n")
    files[5].write_text("x = 8\n")
    age(files[1], files[5], ns=OLD_NS + 10**9)  # written long enough ago for their events to have come
    age(tmp_path)
    scanner.step()  # a partial pass: its slice holds files[1] only
    assert reports == [[files[1]]] and scanner.recoveries == 1 and not scanner.last.full
    scanner.step()  # at once, every file
    assert scanner.last.full and files[5] in reports[-1] and scanner.recoveries == 1


def test_the_first_pass_reports_every_file_and_old_news_from_it_makes_the_next_pass_full(
    tmp_path: Path,
) -> None:
    """A change between the owner's scan and the first look, its event lost, is the owner's to find."""
    files = folder_of(tmp_path, 4)
    age(*files, ns=OLD_NS + 10**9)
    reports: list[list[Path]] = []

    def report(paths: list[Path]) -> list[Path]:
        reports.append(paths)
        return [files[2]]  # the owner read files[2] before it changed

    scanner = Rescanner([tmp_path], report=report, slices=1000)
    scanner.step()
    assert [sorted(paths) for paths in reports] == [sorted(files)]
    assert scanner.recoveries == 1


def test_fresh_news_is_left_to_its_event(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 10)
    scanner = Rescanner([tmp_path], report=lambda paths: paths if scanner.passes > 1 else [], slices=1000)
    scanner.step()
    files[1].write_text("x = 7\n")  # written just now: its event is most likely on its way
    age(tmp_path)
    scanner.step()
    assert scanner.last.changed == 1 and scanner.recoveries == 0


@pytest.mark.timeout(30)
def test_the_thread_reports_changes_and_a_requested_full_pass(tmp_path: Path) -> None:
    files = folder_of(tmp_path, 5)
    reported: list[Path] = []
    arrived = threading.Condition()

    def report(paths: list[Path]) -> list[Path]:
        with arrived:
            reported.extend(paths)
            arrived.notify_all()
        return []

    scanner = Rescanner([tmp_path], report=report, interval=3600, slices=1000)
    scanner.start()
    try:
        eventually(lambda: scanner.passes >= 1, WAIT, "the baseline pass")
        files[2].write_text("x = 9\n")
        age(tmp_path)
        scanner.request_full()  # the interval is an hour: only the request runs a pass now
        with arrived:
            assert arrived.wait_for(lambda: files[2] in reported, WAIT)
    finally:
        scanner.stop()


@pytest.mark.timeout(60)
def test_the_loader_picks_up_a_save_whose_event_was_lost(tmp_path: Path) -> None:
    write(tmp_path / "greet.py", function_tool_source("greet", "return 'v1'"))
    config = replace(FAST, rescan_interval=0.05)
    with ToolLoader([tmp_path], config=config) as loader:
        assert call_text(loader, "greet") == "v1"
        loader._watcher.stop()  # from here on no event arrives: only the rescan can see the edits
        write(tmp_path / "greet.py", function_tool_source("greet", "return 'v2!'"))
        write(tmp_path / "extra.py", function_tool_source("extra", "return 'new'"))
        eventually(lambda: call_text(loader, "greet") == "v2!", WAIT, "the rescan reloads greet")
        eventually(lambda: "extra" in loader.registry, WAIT, "the rescan finds the new file")
