"""The process's standard streams while serving: stdout kept for the protocol, stderr that never blocks.

Over stdio, fd 1 is the protocol channel from the first byte: ``StdioWire``
takes private duplicates of fds 0 and 1 for the protocol before anything is
imported, points fd 1 at stderr (a tool's ``print``, at import or at call
time, lands there) and fd 0 at the null device (a tool reading stdin cannot
eat requests). Worker processes started later inherit that arrangement.

A client that launches the server and never reads its stderr leaves a pipe
that fills after a few tens of kilobytes; every later write to it blocks, and
with it the thread that wrote: a tool's call, the logging lock, then the event
loop. ``StderrPump`` points fd 2 at a pipe of its own, drained by a thread into
a bounded buffer; another thread writes that buffer to the real stderr. What
does not fit while the real stderr is stuck is dropped and counted, and a
notice says so once. Nothing that writes to fd 2 (Python, C code, worker
processes) waits for the reader of the real stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections import deque
from typing import BinaryIO

__all__ = ["DEFAULT_STDERR_BUFFER", "SUPPORTED", "StderrPump", "StdioWire"]

logger = logging.getLogger(__name__)

SUPPORTED = os.name == "posix"
"""Both need POSIX descriptors; elsewhere the SDK's own diversion (while it serves) is all there is."""

DEFAULT_STDERR_BUFFER = 1 << 20
"""Bytes of stderr output held while its reader is slow; beyond that, output is dropped."""

_CHUNK = 65536
_NOTICE_ROOM = 256
_EXIT_FLUSH_SECONDS = 1.0


def _dup_above_std(fd: int) -> int:
    """A close-on-exec duplicate of ``fd`` that cannot land on 0, 1 or 2 (POSIX)."""
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _flush_python_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


class StdioWire:
    """The protocol's private stdin and stdout; fds 0 and 1 pointed away from them until ``release``."""

    def __init__(self) -> None:
        _flush_python_streams()
        self._saved_in = _dup_above_std(0)
        self._saved_out = _dup_above_std(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(devnull, 0)
        finally:
            os.close(devnull)
        os.dup2(2, 1)
        self.reader: BinaryIO = os.fdopen(_dup_above_std(self._saved_in), "rb")
        self.writer: BinaryIO = os.fdopen(_dup_above_std(self._saved_out), "wb")
        logger.debug("stdout=<%d> | fd 1 points at stderr; the protocol has its own stdout", self._saved_out)

    def release(self) -> None:
        """Point fds 0 and 1 back where they were."""
        _flush_python_streams()
        for saved, fd in ((self._saved_in, 0), (self._saved_out, 1)):
            with contextlib.suppress(OSError):
                os.dup2(saved, fd)
                os.close(saved)
        for stream in (self.reader, self.writer):
            with contextlib.suppress(OSError):
                stream.close()


class StderrPump:
    """fd 2 through a bounded, never-blocking path to the real stderr (see the module docstring)."""

    def __init__(self, limit: int = DEFAULT_STDERR_BUFFER) -> None:
        _flush_python_streams()
        self.limit = limit
        self.dropped = 0
        """Bytes dropped so far because the real stderr was not being read."""
        self._real = _dup_above_std(2)
        read_fd, write_fd = os.pipe()  # not inherited (PEP 446); fd 2, made from it below, is
        self._read_fd = read_fd
        os.dup2(write_fd, 2)  # fd 2 itself stays inheritable: worker processes write here too
        os.close(write_fd)
        self._chunks: deque[bytes] = deque()
        self._held = 0
        self._said = False
        self._closed = False
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="tool-loader-stderr-in", daemon=True)
        self._writer = threading.Thread(target=self._write, name="tool-loader-stderr-out", daemon=True)
        self._reader.start()
        self._writer.start()

    def close(self) -> None:
        """Point fd 2 back at the real stderr and give what is held a moment to go out."""
        _flush_python_streams()
        with contextlib.suppress(OSError):
            os.dup2(self._real, 2)
        self._reader.join(_EXIT_FLUSH_SECONDS)
        with self._cond:
            self._closed = True
            if self.dropped:
                self._chunks.append(
                    f"tool-loader: {self.dropped} bytes of stderr output dropped in all\n".encode()
                )
            self._cond.notify()
        self._writer.join(_EXIT_FLUSH_SECONDS)

    def _read(self) -> None:
        """Move what arrives on fd 2 into the buffer; never waits for the real stderr."""
        while True:
            try:
                data = os.read(self._read_fd, _CHUNK)
            except OSError:
                return
            if not data:  # every writer's end is closed: the server is exiting
                return
            self._hold(data)

    def _hold(self, data: bytes) -> None:
        with self._cond:
            if self._held + len(data) <= self.limit:
                self._chunks.append(data)
                self._held += len(data)
            else:
                self.dropped += len(data)
                if not self._said:
                    self._said = True
                    notice = (
                        "tool-loader: stderr is not being read; output beyond "
                        f"{self.limit} bytes is dropped (and counted) until it is\n"
                    ).encode()
                    self._chunks.append(notice[:_NOTICE_ROOM])
                    self._held += len(notice[:_NOTICE_ROOM])
            self._cond.notify()

    def _write(self) -> None:
        """Write the buffer to the real stderr; only this thread waits when nobody reads it."""
        while True:
            with self._cond:
                while not self._chunks and not self._closed:
                    self._cond.wait()
                if not self._chunks:
                    return
                data = self._chunks.popleft()
                self._held = max(0, self._held - len(data))
            view = memoryview(data)
            while view:
                try:
                    written = os.write(self._real, view)
                except InterruptedError:
                    continue
                except OSError:
                    return  # stderr is gone (the client closed it): nothing more can be said there
                view = view[written:]
