"""Reading a tool file without mistaking "cannot read it" for "it is gone".

A file made unreadable (``chmod 000``), a link whose target is missing or that
loops, or a FIFO saved under a ``.py`` name is still there: the folder lists it,
so the loader reports it as failed, with the OS error, and keeps serving its last
good tools. Only a name that no longer exists is a removal. A FIFO is never read
(that would block the loader until someone writes to it).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = [
    "IS_A_LINK",
    "NotARegularFile",
    "names_a_file",
    "read_file",
    "read_file_stat",
    "read_unlinked_file",
]

IS_A_LINK = "is a link"
"""What ``read_unlinked_file`` answers for a link: the caller checks where it leads first."""

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NotARegularFile(OSError):
    """The name holds a FIFO, socket or device, which is never read as source."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", str(path))
        self.kind = kind


def names_a_file(path: Path) -> bool:
    """Whether something other than a folder is at ``path`` now (it may still be unreadable)."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:  # a dangling or looping link is there; a missing name is not
        return os.path.lexists(path)


def read_file(path: Path) -> bytes | OSError | None:
    """The bytes of ``path``.

    None if the name is gone; the OS error if it is there but cannot be read as a file
    (a folder gives ``IsADirectoryError``; callers ask ``names_a_file`` first to skip folders).
    """
    read = read_file_stat(path)
    return read[0] if isinstance(read, tuple) else read


def read_file_stat(path: Path) -> tuple[bytes, os.stat_result] | OSError | None:
    """``read_file``, with the ``fstat`` of the file that was read (taken before reading it).

    The stat comes from the open file, so it describes the bytes returned: a write
    landing after the read leaves a newer mtime on disk than the one returned, and is
    seen as a change (a stat of the path after reading could hide it).
    """
    fd = _open(path, _OPEN_FLAGS)
    return fd if not isinstance(fd, int) else _read_open(fd, path)


def read_unlinked_file(path: Path) -> tuple[bytes, os.stat_result] | OSError | str | None:
    """``read_file_stat`` for a name that is no link, in four system calls; ``IS_A_LINK`` for a link.

    Every system call releases the GIL, and on a save's path each release lets any
    busy thread of the host run first: so the usual case (a plain file) is opened
    without following links, which proves the name is no link without an ``lstat``
    of its own, and read at its size in one call. A folder reads as None (no file here).
    """
    if not _NOFOLLOW:
        return IS_A_LINK
    fd = _open(path, _OPEN_FLAGS | _NOFOLLOW)
    if isinstance(fd, OSError) and fd.errno == errno.ELOOP:
        return IS_A_LINK
    if not isinstance(fd, int):
        return fd
    read = _read_open(fd, path)
    return None if isinstance(read, IsADirectoryError) else read


def _open(path: Path, flags: int) -> int | OSError | None:
    """A descriptor of ``path`` opened with ``flags``; None if the name is gone, else the OS error."""
    try:
        return os.open(path, flags)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and not os.path.lexists(path):
            return None
        return exc


def _read_open(fd: int, path: Path) -> tuple[bytes, os.stat_result] | OSError:
    """Read the open ``fd`` whole, with its ``fstat`` taken first; close it."""
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            return IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
        if not stat.S_ISREG(mode):
            return NotARegularFile(path, _kind(mode))
        # One read for the size fstat gave, plus a byte: a short read is the end of the file.
        wanted = min(st.st_size, 1 << 20) + 1
        chunks = [os.read(fd, wanted)]
        if len(chunks[0]) == wanted:
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), st
    except OSError as exc:
        return exc
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"
