"""What a worker can learn about the loader's own process, and how little that is made.

A worker runs with the user's rights, and Linux lets a process read another
process of the same user through ``/proc/<pid>/``: its environment (API keys,
token file paths), its memory, its open files. When process isolation starts
(``harden_host``), the loader's process is made non-dumpable
(``PR_SET_DUMPABLE`` 0): from then on ``/proc/<pid>/environ``, ``mem``,
``maps``, ``fd`` and ``ptrace`` are refused to other processes of a non-root
user. Root reads them all the same (even without ``CAP_SYS_PTRACE``, which a
worker running as root drops anyway: ``drop_ptrace``), so the environment block
``/proc/<pid>/environ`` shows is also wiped, after the variables are copied
out of it. A worker running as root can still read the loader's memory: run
the loader as an ordinary user. Side effect: the loader writes no core dump,
and a debugger or profiler (``py-spy``, ``gdb -p``) needs root to attach to it.

``/proc/<pid>/cmdline`` stays readable by everyone (the kernel does not check
it), so a secret's *location* given on the command line (``--auth-token-file
PATH``) is overwritten there with ``*`` (``hide_in_command_line``).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
from collections.abc import Iterable
from typing import Final

__all__ = ["drop_capabilities", "drop_ptrace", "harden_host", "hide_in_command_line", "hide_option_values"]

logger = logging.getLogger(__name__)

_PR_SET_DUMPABLE: Final = 4
_PR_CAPBSET_DROP: Final = 24
_PR_CAP_AMBIENT: Final = 47
_PR_CAP_AMBIENT_CLEAR_ALL: Final = 4
_CAP_SYS_PTRACE: Final = 19
_CAPABILITY_V3: Final = 0x20080522
_ARG_START: Final = 45
"""Where ``arg_start`` (field 48 of proc(5)) is among the ``/proc/self/stat`` fields after the
command name (which start at field 3, the state); ``arg_end`` follows it."""
_ENV_START: Final = 47
"""``env_start`` (field 50 of proc(5)), counted the same way; ``env_end`` follows it."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def harden_host() -> bool:
    """Close this process's environment and memory to workers (see the module docstring); True if done.

    Non-dumpable first; then the environment block the kernel shows as
    ``/proc/<pid>/environ`` is wiped, since root reads a non-dumpable process's
    ``environ`` all the same (the variables stay in ``os.environ`` and the C
    library's environment, copied out of that block first).
    """
    libc = _libc()
    if libc is None:
        return False
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        logger.warning("errno=<%s> | could not make the loader's process non-dumpable", ctypes.get_errno())
        return False
    return _wipe_environment_block()


def _proc_self(name: str) -> bytes | None:
    """The content of ``/proc/self/<name>``, or None when it cannot be read."""
    try:
        with open(f"/proc/self/{name}", "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _stat_range(index: int) -> tuple[int, int] | None:
    """Two adjacent addresses from ``/proc/self/stat`` (``arg_start``/``arg_end``, or the ``env_`` pair)."""
    stat = _proc_self("stat")
    if stat is None:
        return None
    try:
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[index]), int(fields[index + 1])
    except (ValueError, IndexError):
        return None
    return (start, end) if start and end > start else None


def _wipe_environment_block() -> bool:
    """Copy every variable out of the block the process started with, then zero the block."""
    where = _stat_range(_ENV_START)
    shown = _proc_self("environ")
    if shown is None:
        return False
    if where is None or not any(shown):
        return where is not None  # nothing left to wipe (done before)
    start, end = where
    if ctypes.string_at(start, end - start) != shown:
        return False
    for name, value in os.environb.items():
        os.putenv(name, value)  # setenv copies it: the C library no longer points into the block
    ctypes.memset(start, 0, end - start)
    return True


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_ptrace() -> None:
    """Give up ``CAP_SYS_PTRACE`` for this process and whatever it starts (a worker running as root).

    Root keeps every other right: this closes the reading of a non-dumpable
    loader's environment and memory, not the rest of what root can do.
    """
    libc = _libc()
    if libc is None or os.geteuid() != 0:
        return
    with contextlib.suppress(OSError, AttributeError):
        libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_PTRACE, 0, 0, 0)
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        header = _CapHeader(_CAPABILITY_V3, 0)
        data = (_CapData * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            return
        keep = ~(1 << _CAP_SYS_PTRACE) & 0xFFFFFFFF
        data[0].effective &= keep
        data[0].permitted &= keep
        data[0].inheritable &= keep
        libc.capset(ctypes.byref(header), data)


def drop_capabilities() -> None:
    """Give up every capability, for good: a worker in a user namespace of its own holds them all there
    (``pid_namespace``). ``OSError`` if the kernel refuses: the worker must not go on with them."""
    libc = _libc()
    if libc is None:
        return
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for capability in range(64):  # the bounding set: nothing is gained back by running a program
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    header = _CapHeader(_CAPABILITY_V3, 0)
    if libc.capset(ctypes.byref(header), (_CapData * 2)()) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"dropping capabilities: {os.strerror(number)}")


def hide_in_command_line(secrets: Iterable[str]) -> bool:
    """Overwrite each of ``secrets`` with ``*`` where it appears in this process's ``/proc`` command line.

    The kernel reads ``/proc/<pid>/cmdline`` from the memory the arguments
    were passed in (``arg_start``..``arg_end``); Python has its own copy
    (``sys.argv`` is unchanged). True when every secret was found and covered.
    """
    wanted = [s.encode() for s in secrets if s]
    if not wanted or not sys.platform.startswith("linux"):
        return False
    where = _stat_range(_ARG_START)
    shown = _proc_self("cmdline")
    if shown is None:
        return False
    if where is None or ctypes.string_at(where[0], where[1] - where[0]) != shown:
        return False  # not where the kernel reads it (rewritten already, or not readable)
    start = where[0]
    covered = True
    for secret in wanted:
        at = shown.find(secret)
        covered = covered and at >= 0
        while at >= 0:
            ctypes.memset(start + at, ord("*"), len(secret))
            at = shown.find(secret, at + len(secret))
    return covered


def hide_option_values(options: Iterable[str], argv: list[str] | None = None) -> bool:
    """``hide_in_command_line`` for the values given to ``options`` (``--opt VALUE`` or ``--opt=VALUE``)."""
    args = sys.argv if argv is None else argv
    names = tuple(options)
    values = [
        arg.split("=", 1)[1] if "=" in arg else (args[i + 1] if i + 1 < len(args) else "")
        for i, arg in enumerate(args)
        if arg in names or arg.startswith(tuple(f"{n}=" for n in names))
    ]
    return hide_in_command_line(values)
