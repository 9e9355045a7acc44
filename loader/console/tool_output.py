"""Where tools' own output goes (``print``, logging, ``warnings``) while the console draws a live view.

A tool's output reaches ``sys.stdout`` or ``sys.stderr``: from its thread in
thread mode, relayed line by line from its worker in process mode, and the
root log handler writes to ``sys.stderr`` as it is at each record. So
swapping those two streams decides where it goes: above a progress bar
(``ToolOutputAbove``) or into ``watch``'s Output pane (``CapturedOutput``),
never through a half-drawn frame.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Callable
from typing import Any

from rich.console import Console

__all__ = ["CapturedOutput", "ToolOutputAbove"]


class _Lines(io.TextIOBase):
    """A text stream that hands each whole line to ``say`` (a partial one when closed)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._pending = ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._pending = (self._pending + text).split("\n")
        for line in lines:
            self._say(line)
        return len(text)

    def close(self) -> None:
        with self._lock:
            rest, self._pending = self._pending, ""
        if rest:
            self._say(rest)
        super().close()


class CapturedOutput:
    """``sys.stdout`` and ``sys.stderr`` as lines handed to ``say``, until the block ends.

    Inside another capture it changes nothing: the outer one keeps the lines.
    """

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._saved: tuple[Any, Any] | None = None

    def __enter__(self) -> CapturedOutput:
        if isinstance(sys.stderr, _Lines):
            return self
        sys.stdout.flush()
        sys.stderr.flush()
        self._saved = (sys.stdout, sys.stderr)
        sys.stdout = _Lines(self._say)
        sys.stderr = _Lines(self._say)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is None:
            return
        swapped = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = self._saved
        self._saved = None
        for stream in swapped:
            stream.close()


class ToolOutputAbove:
    """While a progress bar runs on ``console``: tools' output as lines printed above it.

    The swap is made before the bar starts and undone after it is gone; lines
    that come while the bar closes are held (``hold``) and printed after it,
    so no line ever meets a half-drawn bar.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._lock = threading.Lock()
        self._held: list[str] | None = None
        self._capture = CapturedOutput(self._say)

    def hold(self) -> None:
        """Keep lines back from now on (the bar is about to close), until the block ends."""
        with self._lock:
            self._held = []

    def _say(self, line: str) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(line)
                return
            self._console.print(line, markup=False, highlight=False, soft_wrap=True)

    def __enter__(self) -> ToolOutputAbove:
        self._console.file = self._console.file  # pinned to the real stream before the swap
        self._capture.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._capture.__exit__()
        with self._lock:
            held, self._held = self._held or [], None
        for line in held:
            self._console.print(line, markup=False, highlight=False, soft_wrap=True)
