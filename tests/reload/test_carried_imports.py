"""A save's import commits on the import thread that ran it, and still never holds up another file.

Real files, real watcher, in-process imports. A single-file batch leaves its import
running and gives the writer role back (``ChangeScheduler.defer``): the import
thread takes the role again to commit, so the outcome does not travel back to the
thread that planned the batch. An import slower than its patience is shown in
progress and goes on as an ordinary import in flight, and a second file saved
meanwhile goes live without waiting for it.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from support import EVENTS_ONLY, MakeLoader, call_text, eventually, function_tool_source, write

from loader import hookimpl
from loader.status import FileStatus


class _CommitThreads:
    """Which thread announced each new version of a file (the thread that committed it)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    @hookimpl
    def tool_loader_file_status_changed(self, status: FileStatus, previous: FileStatus | None) -> None:
        if previous is not None and status.tools and previous.content_hash != status.content_hash:
            self.names.append(threading.current_thread().name)


def test_a_save_commits_on_the_import_thread_that_ran_it(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "first.py", function_tool_source("first"))
    seen = _CommitThreads()
    loader = make_loader(tools_dir, config=EVENTS_ONLY, plugins=[seen])
    write(path, function_tool_source("first", body="return 'v2'"))
    eventually(lambda: call_text(loader, "first") == "v2", message="the save never went live")
    eventually(lambda: seen.names, message="the new version was never announced")
    assert seen.names[0].startswith("tool-loader-import"), seen.names
    assert loader.wait_idle(10)


def _slow_source(seconds: float) -> str:
    return (
        f"import time\ntime.sleep({seconds})\nfrom loader import tool\n\n"
        '@tool\ndef slow() -> str:\n    """Slow to import."""\n    return "slow v2"\n'
    )


def test_an_import_past_its_patience_shows_in_progress_and_holds_up_no_other_file(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    slow = write(tools_dir / "slow.py", function_tool_source("slow"))
    other = write(tools_dir / "other.py", function_tool_source("other"))
    loader = make_loader(tools_dir, config=replace(EVENTS_ONLY, import_patience=0.05, import_timeout=20.0))
    write(slow, _slow_source(3.0))
    eventually(
        lambda: [p.path for p in loader.imports_in_progress()] == [slow],
        message="an import past its patience was not shown in progress",
    )
    write(other, function_tool_source("other", body="return 'other v2'"))
    eventually(
        lambda: call_text(loader, "other") == "other v2",
        message="a save waited for another file's slow import",
    )
    assert [p.path for p in loader.imports_in_progress()] == [slow], "the slow import ended too soon to tell"
    eventually(lambda: call_text(loader, "slow") == "slow v2", message="the slow import never went live")
    eventually(lambda: loader.imports_in_progress() == (), message="the slow import stayed in progress")
    assert loader.wait_idle(10)
