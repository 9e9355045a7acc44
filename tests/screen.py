"""A real pseudo-terminal running ``tool-loader``, rendered by pyte, for screen tests.

A reader thread feeds everything the command writes into a pyte screen of the
same size; tests wait (with a deadline) for the screen to show something, then
assert on its lines as a person would read them.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # pexpect ships no type hints
import pyte

__all__ = ["Terminal"]

DEADLINE = 20.0
END_FRAME = b"\x1b[?2026l"  # the end of a synchronized update: one whole frame drawn


class Terminal:
    """``python -m loader ARGS`` in a pseudo-terminal of ``columns`` x ``lines``."""

    def __init__(self, args: list[str], cwd: Path, columns: int, lines: int) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES")
        }
        env["TERM"] = "xterm-256color"
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.ByteStream(self.screen)
        self.lock = threading.Lock()
        self.raw = bytearray()
        self.frame: list[str] = []
        self.child = pexpect.spawn(
            sys.executable, ["-m", "loader", *args], cwd=str(cwd), env=env, dimensions=(lines, columns)
        )
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        pending = b""
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.2)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return
            with self.lock:
                self.raw.extend(data)
                pending += data
                # Like a terminal honouring synchronized updates, show only whole frames.
                while (end := pending.find(END_FRAME)) >= 0:
                    self.stream.feed(pending[: end + len(END_FRAME)])
                    pending = pending[end + len(END_FRAME) :]
                    self.frame = [line.rstrip() for line in self.screen.display]

    def lines(self) -> list[str]:
        """The last whole frame, one string per row (trailing spaces removed)."""
        with self.lock:
            return list(self.frame)

    def text(self) -> str:
        return "\n".join(self.lines())

    def wait_for(
        self, predicate: Callable[[list[str]], object], what: str, timeout: float = DEADLINE
    ) -> None:
        """Wait until ``predicate(lines)`` holds; fail showing the screen otherwise."""
        deadline = time.monotonic() + timeout
        while not predicate(self.lines()):
            if time.monotonic() > deadline:
                raise AssertionError(f"screen never showed {what} within {timeout} s:\n{self.text()}")
            time.sleep(0.01)

    def wait_text(self, needle: str, timeout: float = DEADLINE) -> None:
        self.wait_for(lambda lines: any(needle in line for line in lines), repr(needle), timeout)

    def resize(self, columns: int, lines: int) -> None:
        """Resize the terminal (the child gets SIGWINCH) and the emulated screen with it."""
        with self.lock:
            self.screen.resize(lines, columns)
        self.child.setwinsize(lines, columns)

    def interrupt_and_wait(self) -> int:
        """Ctrl-C, then the exit status (failing if the process does not end in time)."""
        self.child.sendintr()
        deadline = time.monotonic() + DEADLINE
        while self.child.isalive():
            if time.monotonic() > deadline:
                raise AssertionError(f"still running {DEADLINE} s after Ctrl-C:\n{self.text()}")
            time.sleep(0.02)
        self._reader.join(DEADLINE)
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
