"""Deep or odd trees never kill a loader thread; a loader thread that dies anyway is known, with its traceback.

Real folders, the real watchdog observer, events only (no periodic rescan to
paper over a dead watch): a save after the deep chain must go live through
its own event.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fs_layouts import deep_chain, make_deep_chain, remove_deep_chain
from support import EVENTS_ONLY, call_text, eventually, function_tool_source, write

from loader import ToolLoader, hookimpl
from loader.reload.batch import load_order
from loader.reload.walk import MAX_FOLDER_DEPTH
from loader.reload.watcher import WatchMode
from loader.status import FileStatus

DEPTH = 1500


def test_a_deep_chain_present_at_start_is_skipped_and_saves_still_go_live(
    tools_dir: Path, make_loader: Callable[..., ToolLoader], caplog: pytest.LogCaptureFixture
) -> None:
    write(tools_dir / "first.py", function_tool_source("first"))
    with deep_chain(tools_dir / "deep", DEPTH), caplog.at_level(logging.WARNING):
        loader = make_loader(tools_dir, config=EVENTS_ONLY)
        assert loader.registry.names() == ("first",)
        write(tools_dir / "second.py", function_tool_source("second"))
        eventually(lambda: "second" in loader.registry, message="a save after the deep chain never went live")
        assert loader.watch_modes() == {tools_dir: WatchMode.EVENTS}
        assert loader.threads.deaths() == ()
    assert f"deeper than {MAX_FOLDER_DEPTH} levels" in caplog.text


def test_a_deep_chain_moved_in_while_watching_kills_no_thread(
    tools_dir: Path, tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "first.py", function_tool_source("first"))
    loader = make_loader(tools_dir, config=EVENTS_ONLY)
    outside = tmp_path / "chain"
    make_deep_chain(outside, DEPTH)
    inside = tools_dir / "chain"
    os.rename(outside, inside)  # the whole chain appears at once, as a checkout's rename does
    try:
        write(tools_dir / "first.py", function_tool_source("first", body="return 'v2'"))
        eventually(
            lambda: call_text(loader, "first") == "v2", message="a save after the chain never went live"
        )
        assert loader.threads.deaths() == ()
    finally:
        remove_deep_chain(inside)


class _Fatal(BaseException):
    """What a plugin calling ``sys.exit()`` on the applying thread looks like to that thread."""


class _ExitsOnSecondVersion:
    @hookimpl
    def tool_loader_file_status_changed(self, status: FileStatus, previous: FileStatus | None) -> None:
        if previous is not None and status.tools and previous.content_hash != status.content_hash:
            raise _Fatal("a plugin gave up")


def test_a_loader_thread_that_dies_is_recorded_and_logged_with_its_traceback(
    tools_dir: Path, make_loader: Callable[..., ToolLoader], caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tools_dir / "first.py", function_tool_source("first"))
    loader = make_loader(tools_dir, config=EVENTS_ONLY, plugins=[_ExitsOnSecondVersion()])
    assert loader.threads.deaths() == ()
    with caplog.at_level(logging.ERROR):
        write(path, function_tool_source("first", body="return 'v2'"))
        deaths = eventually(loader.threads.deaths, message="the dying thread was not noticed")
    (death,) = deaths
    assert death.exc_type == "_Fatal" and death.message == "a plugin gave up"
    assert "tool_loader_file_status_changed" in death.traceback
    assert death.thread in caplog.text and "_Fatal: a plugin gave up" in caplog.text


def _inotify_watches() -> int:
    """How many inotify watches this process holds (Linux: ``/proc/self/fdinfo``)."""
    count = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            with open(f"/proc/self/fdinfo/{fd}") as info:
                count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue
    return count


def _watched_at_least(count: int) -> bool:
    return _inotify_watches() >= count


def _grow_chain_under_watch(top: Path, depth: int, chunk: int = 50) -> Path:
    """``top/d/.../d`` made ``chunk`` levels at a time, each chunk watched before the next is made.

    A chain made at once outruns the watcher, which then stops watching at
    ``MAX_FOLDER_DEPTH`` below the first folder it saw; grown this way, every
    level is watched and events come from the bottom.
    """
    before = _inotify_watches()
    current = top
    current.mkdir()
    made = 1
    while made < depth:
        for _ in range(min(chunk, depth - made)):
            current = current / "d"
            current.mkdir()
            made += 1
        eventually(functools.partial(_watched_at_least, before + made), message=f"level {made} never watched")
    return current


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="counts inotify watches in /proc")
def test_a_deep_chain_grown_while_watching_with_a_tool_at_the_bottom_fails_no_batch(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """Each new folder is watched as it appears, so events arrive from every level of the chain.

    Every reload batch failed with ``RecursionError`` while such a chain existed
    (the check that a path stays inside its folder recursed once per level), and
    each folder that appeared was reconciled 100 levels below itself, so saves
    waited behind the whole chain. A file below the scanned depth is not loaded,
    however it is found.
    """
    write(tools_dir / "first.py", function_tool_source("first"))
    loader = make_loader(tools_dir, config=EVENTS_ONLY)
    try:
        deepest = _grow_chain_under_watch(tools_dir / "chain", DEPTH)
        write(deepest / "bottom.py", function_tool_source("bottom"))
        write(tools_dir / "first.py", function_tool_source("first", body="return 'v2'"))
        eventually(
            lambda: call_text(loader, "first") == "v2", message="a save beside the chain never went live"
        )
        write(tools_dir / "first.py", function_tool_source("first", body="return 'v3'"))
        eventually(lambda: call_text(loader, "first") == "v3", message="a second save never went live")
        assert loader.threads.deaths() == ()
        assert "bottom" not in loader.registry  # below the depth that is scanned and watched
    finally:
        remove_deep_chain(tools_dir / "chain")


def test_a_long_chain_of_helpers_loads_dependencies_first(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """Each helper imports the next, 120 deep: a batch orders them by what each imported last time.

    The ordering walked the import graph recursively and gave up 50 levels
    down, so the second half of the chain came after the modules importing it.
    """
    chain = 120
    for index in range(chain):
        follow = f"import h{index + 1:03d}\n" if index + 1 < chain else ""
        write(tools_dir / f"h{index:03d}.py", f"{follow}VALUE = {index}\n")
    write(tools_dir / "top.py", "import h000\n" + function_tool_source("top"))
    loader = make_loader(tools_dir, config=EVENTS_ONLY, watch=False)
    assert call_text(loader, "top") == "v1"
    order = [path.name for path in load_order(sorted(tools_dir.glob("*.py")), loader._backend)]
    assert order == [f"h{index:03d}.py" for index in reversed(range(chain))] + ["top.py"]
