"""The first scan of a one-shot command, shown while it runs: how far it is, and which file it waits for.

A file whose import hangs holds the scan up to the import timeout; the person
waiting sees the file's name and how long it may still take, on a terminal in
the progress bar, elsewhere as one line on stderr once the wait is noticeable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ..reload.loader import ToolLoader
from ..status import ImportInProgress, ScanReport
from .render import display_path
from .tool_output import ToolOutputAbove

__all__ = ["scan_showing_progress", "waiting_phrase"]

_NOTICE_AFTER = 5.0
"""Seconds an import runs before a console without a progress bar names the file it waits for (at most
half the import timeout): a slow start (a sandboxed worker's) is no news in a log, a hang is."""
_POLL = 0.1


def waiting_phrase(wait: ImportInProgress, timeout: float) -> str:
    """``waiting for tools/hang.py to import (3 s of at most 10 s; --import-timeout)``."""
    took = max(0.0, time.time() - wait.since)
    where = display_path(wait.path)
    return f"waiting for {where} to import ({took:.0f} s of at most {timeout:g} s; --import-timeout)"


class _WaitingColumn(ProgressColumn):
    """The file the scan waits for, if its import is slow."""

    def __init__(self, loader: ToolLoader) -> None:
        super().__init__()
        self._loader = loader

    def render(self, task: Task) -> Text:
        waits = self._loader.imports_in_progress()
        if not waits:
            return Text("")
        return Text(waiting_phrase(waits[0], self._loader.config.import_timeout), style="yellow")


def _notices(loader: ToolLoader, say: Callable[[str], None], done: threading.Event) -> None:
    """Say once per file which slow import the scan waits for (a console without a progress bar)."""
    named: set[object] = set()
    after = min(_NOTICE_AFTER, loader.config.import_timeout / 2)
    while not done.wait(_POLL):
        for wait in loader.imports_in_progress():
            if wait.path not in named and time.time() - wait.since >= after:
                named.add(wait.path)
                say(waiting_phrase(wait, loader.config.import_timeout))


def scan_showing_progress(loader: ToolLoader, console: Console | None) -> ScanReport:
    """``loader.scan()``, with a progress bar (and the file waited for) on ``console`` if it is a terminal.

    On a console that is no terminal (a pipe, a CI log), a slow import is named in one line.
    """
    if console is None or console.quiet:
        return loader.scan()
    if not console.is_terminal or console.is_dumb_terminal:
        done = threading.Event()

        def say(text: str) -> None:
            console.print(text, markup=False, highlight=False, soft_wrap=True)

        notices = threading.Thread(
            target=_notices, args=(loader, say, done), name="scan-notices", daemon=True
        )
        notices.start()
        try:
            return loader.scan()
        finally:
            done.set()
            notices.join()
    with ToolOutputAbove(console) as output:  # what tool files print goes above the bar
        with Progress(
            TextColumn("loading tools"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            _WaitingColumn(loader),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        ) as bar:
            task = bar.add_task("scan", total=None)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            report = loader.scan(progress=advance)
            output.hold()
    return report
