"""A worker's process tree: finding it, bounding it, and stopping all of it.

A tool may start processes, and those may start their own sessions
(``start_new_session=True``) or double-fork into daemons. Killing the worker's
process group then misses them, so a worker marks itself a child subreaper
(``PR_SET_CHILD_SUBREAPER``, in ``worker_main``): whatever its tools start stays
in its tree however it detaches, and ``kill_tree`` stops the whole tree, the
worker first so nothing new is forked while it is swept.

How the number of processes is bounded (``ProcessWatch``), and why this way:

* ``RLIMIT_NPROC`` counts every process of the *user*, not of one worker, and
  the kernel never applies it to root (CI runs as root);
* a cgroup's ``pids.max`` is exact, but needs a writable cgroup hierarchy, which
  ordinary users and most containers do not have, and cgroup v2's rule that a
  cgroup with processes cannot delegate controllers makes a per-worker group
  under the loader's own impossible without a service manager;
* a seccomp filter can refuse ``fork`` and ``clone``, but cannot count them: it
  would forbid every subprocess, which legitimate tools need.

So the loader counts: one thread reads ``/proc/loadavg`` (one small read) every
``interval``; when the number of tasks on the machine has grown by a step
since its last look, it reads the process table and stops every worker whose
tree holds more than ``max_processes`` live processes. A fork bomb overshoots
the limit by what it forks within one interval, then loses its whole tree;
the machine keeps its process ids. Linux only (elsewhere nothing is counted).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = ["ProcessTable", "ProcessWatch", "kill_descendants", "kill_tree"]

logger = logging.getLogger(__name__)

_SWEEPS: Final = 64
"""Rounds of stopping newly found descendants before the tree is killed (a fork bomb races the sweep)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    parent: int
    started: int
    zombie: bool


class ProcessTable:
    """One reading of ``/proc``: each process's parent, start time and whether it is a zombie."""

    def __init__(self) -> None:
        self.entries: dict[int, _Entry] = {}
        children: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    data = handle.read()
            except OSError:  # gone meanwhile
                continue
            fields = data[data.rindex(b")") + 2 :].split(b" ", 20)
            pid = int(name)
            entry = _Entry(int(fields[1]), int(fields[19]), fields[0] == b"Z")
            self.entries[pid] = entry
            children.setdefault(entry.parent, []).append(pid)
        self._children = children

    def descendants(self, root: int) -> set[int]:
        """Every live (not zombie) process below ``root``."""
        found: set[int] = set()
        pending = list(self._children.get(root, ()))
        while pending:
            pid = pending.pop()
            if pid in found:
                continue
            if not self.entries[pid].zombie:
                found.add(pid)
            pending.extend(self._children.get(pid, ()))
        return found

    def started(self, pid: int) -> int | None:
        entry = self.entries.get(pid)
        return None if entry is None else entry.started


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signum)


def kill_tree(root: int | None, known: Iterable[tuple[int, int]] = ()) -> None:
    """SIGKILL ``root``, its process group and every descendant, in whatever session.

    ``root`` None: the worker was reaped; only ``known`` processes still running
    (same pid, same start time) are killed.

    ``root`` is stopped first, then its descendants round by round until no new
    one appears (a stopped process forks nothing), and only then is anything
    killed: killing first would hand the orphans to init before they are found.
    ``known`` ((pid, start time) pairs seen earlier) covers descendants of a
    root that has already exited, whose tree is gone from ``/proc``.
    """
    if root is None:  # reaped already: its id may be another process's by now
        table = ProcessTable() if os.path.isdir("/proc") else None
        for pid, started in known:
            if table is not None and table.started(pid) == started:
                _signal(pid, signal.SIGKILL)
        return
    if not os.path.isdir("/proc"):
        with contextlib.suppress(OSError):
            os.killpg(root, signal.SIGKILL)
        _signal(root, signal.SIGKILL)
        return
    _signal(root, signal.SIGSTOP)
    table = ProcessTable()
    stopped = {pid for pid, started in known if table.started(pid) == started}
    for pid in stopped:
        _signal(pid, signal.SIGSTOP)
    stopped = _stop_below(root, stopped, table)
    with contextlib.suppress(OSError):
        os.killpg(root, signal.SIGKILL)  # the worker leads its own group
    for pid in stopped:
        _signal(pid, signal.SIGKILL)
    _signal(root, signal.SIGKILL)


def _stop_below(root: int, stopped: set[int], table: ProcessTable) -> set[int]:
    """SIGSTOP the descendants of ``root`` (and of ``stopped``) round by round until none is new."""
    for _ in range(_SWEEPS):
        fresh = set().union(*(table.descendants(pid) for pid in (root, *stopped))) - stopped
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        stopped |= fresh
        table = ProcessTable()
    return stopped


def kill_descendants(root: int) -> None:
    """SIGKILL every process below ``root``, sparing ``root``: what a call left running when it returned.

    Cheap when there is nothing: only ``root``'s own children are read, and the
    process table only when one of them runs (a subreaper ``root`` holds every
    orphan of its tree, so no running child means no running descendant).
    """
    if not any(_runs(pid) for pid in _children(root)):
        return
    for pid in _stop_below(root, set(), ProcessTable()):
        _signal(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found += [int(child) for child in handle.read().split()]
    return found


def _runs(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data[data.rindex(b")") + 2 : data.rindex(b")") + 3] != b"Z"


class Watched(Protocol):
    """What ``ProcessWatch`` needs of a worker."""

    descendants: tuple[tuple[int, int], ...]
    over_limit: int | None

    @property
    def pid(self) -> int: ...

    def running(self) -> bool: ...

    def stop(self) -> None: ...


class ProcessWatch:
    """A thread that stops any worker whose process tree grows past ``limit`` (see the module docstring)."""

    def __init__(
        self, workers: Callable[[], Iterable[Watched]], limit: int, *, interval: float = 0.05
    ) -> None:
        self._workers = workers
        self._limit = limit
        self._step = max(1, limit // 4)
        self._interval = interval
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tool-loader-process-watch", daemon=True)
        self.enabled = os.path.isfile("/proc/loadavg")

    def start(self) -> None:
        if self.enabled:
            self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        lowest: int | None = None
        while not self._done.wait(self._interval):
            tasks = _tasks()
            lowest = tasks if lowest is None else min(lowest, tasks)
            if tasks - lowest < self._step:
                continue
            try:
                self.check()
            except Exception:  # never let the watch die: it is what bounds a fork bomb
                logger.exception("could not count the workers' processes")
            lowest = _tasks()

    def check(self) -> None:
        """Count every worker's tree now; stop those over the limit."""
        table = ProcessTable()
        for worker in self._workers():
            if not worker.running():
                continue
            tree = table.descendants(worker.pid)
            worker.descendants = tuple((pid, table.entries[pid].started) for pid in tree)
            if len(tree) > self._limit:
                worker.over_limit = len(tree)
                logger.warning(
                    "pid=<%s>, processes=<%d>, limit=<%d> | worker over its process limit; stopping it",
                    worker.pid,
                    len(tree),
                    self._limit,
                )
                worker.stop()


def _tasks() -> int:
    """Every task (process or thread) on the machine, from ``/proc/loadavg``'s fourth field."""
    try:
        with open("/proc/loadavg", "rb") as handle:
            return int(handle.read().split()[3].split(b"/")[1])
    except (OSError, IndexError, ValueError):
        return 0
