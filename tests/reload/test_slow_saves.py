"""Saves that land while a file's import is still running: the newest bytes always load in the end.

Real files, real watcher, both isolation modes. An import's deadline counts from
the moment it starts (not from the save that queued it behind slower imports),
an import that ends while the file changed is followed by one of the new bytes,
and the periodic safety net looks again at stuck and failed files.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from support import EVENTS_ONLY, FAST, MakeLoader, call_text, eventually, function_tool_source, write

from loader.status import FileNote, FileState, LoaderEvent, LoaderEventKind


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Both isolation modes."""
    return str(request.param)


def _slow_source(seconds: float, version: int) -> str:
    return (
        f"import time\ntime.sleep({seconds})\nfrom loader import tool\n\n"
        f'@tool\ndef slow() -> str:\n    """Slow to import."""\n    return "v{version}"\n'
    )


def test_the_last_save_of_a_slow_file_loads_although_saves_queued_behind_each_other(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    # Four saves that each import for 4 s take every import thread (an asynchronous stop cannot
    # end a sleep; process mode has one import worker). The last save imports in 1.5 s, well
    # within its 3 s deadline once it runs, but it has to wait for a thread first.
    ld = make_loader(tools_dir, config=replace(FAST, import_timeout=3.0, rescan_interval=0))
    events: list[LoaderEvent] = []
    ld.subscribe(events.append)
    path = tools_dir / "slow.py"
    for version in range(4):
        path.write_text(_slow_source(4, version))
        time.sleep(0.3)  # the pace of the saves is the scenario, not a wait for a condition
    path.write_text(_slow_source(1.5, 99))
    eventually(lambda: "slow" in ld.registry and call_text(ld, "slow") == "v99", 30, "the last save serves")
    status = ld.file_status(path)
    assert status is not None and status.state is FileState.LOADED
    assert [e for e in events if e.kind is LoaderEventKind.STUCK] == [], "no import ran past its deadline"


def test_a_slow_import_overtaken_by_the_serving_bytes_is_given_up(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    # The file goes back to the bytes that serve while its newer version still imports: nothing
    # needs loading, but the newer import must not stay in flight, nor become the current module.
    write(tools_dir / "helper.py", "VALUE = 1\n")
    write(
        tools_dir / "t.py",
        'from loader import tool\n\n@tool\ndef value() -> int:\n    """The helper\'s value."""\n'
        "    import helper\n    return helper.VALUE\n",
    )
    ld = make_loader(tools_dir, config=replace(FAST, import_timeout=10.0, rescan_interval=0))
    helper = tools_dir / "helper.py"
    assert call_text(ld, "value") == "1"
    helper.write_text("import time\ntime.sleep(1.5)\nVALUE = 2\n")
    saved = time.monotonic()
    eventually(lambda: [p.path for p in ld.imports_in_progress()] == [helper], 10, "the new version imports")
    helper.write_text("VALUE = 1\n")
    eventually(lambda: ld.imports_in_progress() == (), 10, "the overtaken import is given up")
    while time.monotonic() - saved < 2.5:  # past the moment the overtaken import would have ended
        assert call_text(ld, "value") == "1"
        time.sleep(0.05)
    assert ld.wait_idle(10)
    assert call_text(ld, "value") == "1"
    status = ld.file_status(helper)
    assert status is not None and status.state is FileState.LOADED


def test_the_safety_net_looks_again_at_a_failed_file_whose_bytes_changed_unseen(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    # A fix written while the loader was not watching, in place, at the same size and with the
    # same mtime: no event, and the file's stat is what the loader last read. Only the content
    # tells, and the periodic safety net compares it for files that failed or got stuck.
    fixed = function_tool_source("fixed", "return 'ok'")
    path = tools_dir / "fixed.py"
    path.write_text(fixed.replace("-> str:", "-> str;"))
    ld = make_loader(tools_dir, config=replace(FAST, rescan_interval=0.2))
    status = ld.file_status(path)
    assert status is not None and status.state is FileState.FAILED
    stat = os.stat(path)
    ld.stop()
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(fixed.encode())
    assert os.stat(path).st_size == stat.st_size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    ld.start()
    eventually(lambda: "fixed" in ld.registry and call_text(ld, "fixed") == "ok", 15, "the fix is loaded")
    status = ld.file_status(path)
    assert status is not None and status.state is FileState.LOADED


SELF_REWRITING = '''
import pathlib
import re

from loader import tool

COUNT = 0
_path = pathlib.Path(__file__)
_path.write_text(re.sub(r"^COUNT = \\d+", f"COUNT = {COUNT + 1}", _path.read_text(), count=1, flags=re.M))


@tool
def counter() -> int:
    """How many times this file was imported before this version."""
    return COUNT
'''


def test_a_file_that_rewrites_itself_when_imported_is_reloaded_ever_more_slowly(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    path = write(tools_dir / "counter.py", SELF_REWRITING)
    eventually(lambda: (s := ld.file_status(path)) is not None and FileNote.REWRITES_ITSELF in s.notes, 30)
    assert "counter" in ld.registry
    before = ld.module_executions
    started = time.monotonic()
    while time.monotonic() - started < 3.0:  # a window to count re-imports in, not a wait for a condition
        time.sleep(0.1)
    # Without a back-off it re-imports as fast as the machine allows (thousands of times); a slower
    # machine only lowers the count.
    assert ld.module_executions - before <= 6
    status = ld.file_status(path)
    assert (
        status is not None and status.state is FileState.LOADED and FileNote.REWRITES_ITSELF in status.notes
    )
