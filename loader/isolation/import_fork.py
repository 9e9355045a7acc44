"""One import in a fork of its worker, so that no tool file's code ever runs in the import worker itself.

A file's top-level code can change the process it runs in: replace the
worker's functions, patch ``loader``, leave a thread. Were that process to
import the next file, the next file would be described (its spec, the bytes
its calls are rebuilt from) by whatever the first one left there. So the
import worker forks for each import: the child runs the import, sends its
answer to the parent over a socket pair of its own, and is killed once it has
answered; the parent, which never runs tool code, reads that answer (untrusted,
bounded by the wire limit) and passes it on to the loader, or says how the
child ended if it never answered. Nothing an import leaves behind outlives
it: once the answer is sent, and before the worker reads its next request, the
child is stopped and, in sandbox mode, the processes the import started too,
and the worker's scratch folder (its ``TMPDIR`` and ``HOME``) is emptied. A
fork costs a few milliseconds, against the few hundred of a new interpreter,
but the child then copies on write what it touches of the worker's memory, and
what it imports (helpers, libraries) or caches is imported again by the next
import: a save goes live about 11 ms later in process mode
(docs/isolation-matrix.md, "What a fork per import costs").
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import shutil
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, cast

from .messages import LoadReply
from .protocol import MALFORMED, Channel, ChannelClosed, MessageTooLarge
from .tree import kill_descendants

__all__ = ["die_with_parent", "forward_stack_requests", "import_in_fork"]

_running: int | None = None
"""The pid of the import's child now running in this worker (None: none)."""


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (no orphans in an endless loop)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def forward_stack_requests() -> None:
    """Pass the loader's stack requests (SIGUSR1, ``WorkerProcess.stack_in``) to the import running now:
    the worker's own stacks never hold the tool file's lines."""
    signal.signal(signal.SIGUSR1, _forward)


def _forward(signum: int, frame: FrameType | None) -> None:
    child = _running
    if child is not None:
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGUSR1)


def import_in_fork(
    load: Callable[[], LoadReply],
    loader: Channel,
    fault_fd: int | None,
    limit: int,
    scratch: Path | None = None,
) -> tuple[LoadReply, Callable[[], None]]:
    """Run ``load`` in a child process; its answer, or if it has none (it crashed, or its answer is
    longer than ``limit`` bytes) an answer that says so (``crashed``: its exit code; ``too_large``),
    and what ends the import: stopping the child and, with a ``scratch`` folder, what the import left
    running, then emptying the folder. The worker sends the answer first and ends the import before
    it reads its next request, so the loader does not wait for the stopping."""
    pid: int | None = None
    try:
        reply, pid = _relay(load, loader, fault_fd, limit)
    except BaseException:
        _end(pid, scratch)
        raise
    return reply, lambda: _end(pid, scratch)


def _end(pid: int | None, scratch: Path | None) -> None:
    if pid is not None:
        _stop(pid)  # it has answered: whatever it still runs (a thread, a patched exit) ends here
    if scratch is not None:
        kill_descendants(os.getpid())
        _reap_all()
        _empty(scratch)


def _relay(
    load: Callable[[], LoadReply], loader: Channel, fault_fd: int | None, limit: int
) -> tuple[LoadReply, int | None]:
    """The child's answer, and its pid if it is still to be stopped (None: it was, to say how it ended)."""
    global _running
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        _child(load, loader, theirs, fault_fd)
    theirs.close()
    fd = ours.detach()
    answers = Channel(fd, os.dup(fd))  # the child's end: not trusted to send plain data, nor to stop
    _running = pid
    try:
        reply: dict[str, Any] = answers.receive(limit)
    except MessageTooLarge as exc:
        _stop(pid)
        return _failed(too_large=exc.limit), None
    except ChannelClosed as exc:  # it ended, or garbled its answer, before answering
        if str(exc).startswith(MALFORMED):
            _stop(pid)
            return _failed(malformed=True), None
        return _failed(crashed=_stop(pid, grace=_EXIT_GRACE)), None
    except BaseException:
        _stop(pid)
        raise
    finally:
        _running = None
        answers.close()
    return cast(LoadReply, reply), pid


def _child(
    load: Callable[[], LoadReply], loader: Channel, end: socket.socket, fault_fd: int | None
) -> NoReturn:
    """The import's process: answer on ``end`` and exit; never speaks on the loader's pipe."""
    status = 1
    try:
        loader.close()
        die_with_parent()
        if fault_fd is not None:
            faulthandler.register(signal.SIGUSR1, file=fault_fd, all_threads=True)
        fd = end.detach()
        Channel(fd, os.dup(fd)).send(load())
        status = 0
    except BaseException:  # not the tool file's fault (``load`` reports those): say why before ending
        traceback.print_exc()
    finally:
        os._exit(status)


_EXIT_GRACE = 1.0
"""Seconds a child that stopped answering has to end by itself (its exit code says why) before it is killed:
one that garbled its answer and kept running would hold the import until the loader's deadline."""


def _stop(pid: int, *, grace: float = 0.0) -> int:
    """Reap the child, killed at once or after ``grace`` seconds; its exit code (negative: the signal that
    ended it)."""
    deadline = time.monotonic() + grace
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            break
        time.sleep(0.005)  # a bounded wait for a process to end: there is no event to wait on
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _reap_all() -> None:
    """Wait for every child of this worker to end (a subreaper's: all it ran below it, just killed), so that
    nothing the import started still writes in the scratch folder once it is emptied. Blocks no longer than
    SIGKILL takes; a process that never ends holds the import until the loader's ``import_timeout``."""
    with contextlib.suppress(ChildProcessError):
        while True:
            os.waitpid(-1, 0)


def _empty(folder: Path) -> None:
    """Remove what ``folder`` holds (links as links), keeping the folder."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in list(entries):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)


def _failed(
    *, crashed: int | None = None, too_large: int | None = None, malformed: bool = False
) -> LoadReply:
    """The answer standing in for one the child never gave."""
    reply = LoadReply(ok=False, error=None, tools=[], executed=[], deps={}, executions=0)
    if malformed:
        reply["malformed"] = True
    if crashed is not None:
        reply["crashed"] = crashed
    if too_large is not None:
        reply["too_large"] = too_large
    return reply
