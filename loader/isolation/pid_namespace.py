"""A sandboxed worker in a PID namespace of its own: it sees no other process, and none it starts outlives it.

Landlock closes other processes' ``/proc`` entries to a sandboxed tool, but not
``stat("/proc/<pid>")``: without a namespace a tool still learns which pids
exist, their owners and start times. And a process a tool forks just before
its worker dies (``os._exit``, a crash) is handed to the machine's init before
the loader can count it, so it kept running. Here the template forks each
sandboxed worker into a PID namespace (and mount namespace, with ``/proc``
mounted again for it) of its own, in three steps:

- a short-lived *middle* process makes the namespaces (as an ordinary user,
  inside a user namespace of its own that maps only that user's own ids) and
  forks twice;
- the first child is the namespace's *init* (pid 1): it mounts ``/proc``,
  then only waits, for the worker to end or the template to die (a pipe only
  the template writes), and exits; the kernel then kills every process left in
  the namespace, whatever the worker started and however it detached;
- the second child is the worker (pid 2). The middle exits, the worker becomes
  the template's child (the template is a child subreaper), and only then,
  told so by the template, asks for its parent-death signal and goes on as
  any forked worker does. In a user namespace it first drops every capability
  the namespace gave it.

The worker is not the namespace's init, on purpose: an init ignores the
signals it has no handler for, ``SIGXCPU`` of the per-call CPU limit among
them. Where the kernel refuses a step (no user namespaces for unprivileged
users, a ``/proc`` that may not be mounted again inside a container), the
template says why and forks its workers as before; ``docs/sandbox.md`` lists
what that leaves open.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, Final, NoReturn

from .host import drop_capabilities

__all__ = ["NamespaceUnavailable", "available", "fork_in_namespace"]

_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWPID: Final = 0x20000000
_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MS_NOEXEC: Final = 8
_MS_REC: Final = 0x4000
_MS_PRIVATE: Final = 1 << 18
_PR_SET_DUMPABLE: Final = 4
_PR_SET_CHILD_SUBREAPER: Final = 36
_WORKER: Final = 2
"""The worker's pid in its namespace: the init is forked first (1), the worker next."""
_SETUP_SECONDS: Final = 10.0
_REPORT_LIMIT: Final = 4096


class NamespaceUnavailable(Exception):
    """The kernel refused a step: the reason, for the template to say once and fork without namespaces."""


def fork_in_namespace(life: int, become_worker: Callable[[], NoReturn]) -> tuple[int, int]:
    """Fork a worker that runs ``become_worker`` in namespaces of its own; its pid and its init's pid, both
    children of the caller from now on. ``life``: a pipe's read end whose write end only the caller holds
    (the init ends, and the namespace with it, when the caller dies)."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "becoming a child subreaper")
    report_r, report_w = os.pipe()
    go_r, go_w = os.pipe()
    try:
        middle = os.fork()
        if middle == 0:
            os.close(report_r)
            os.close(go_w)
            _middle(libc, report_w, go_r, life, become_worker)
        os.close(report_w)
        os.close(go_r)
        report_w = go_r = -1
        answer = _report(report_r, middle)
        if "error" in answer:
            raise NamespaceUnavailable(str(answer["error"]))
        os.write(go_w, b"1")  # the middle is reaped: the worker is this process's child now
        return int(answer["worker"]), int(answer["init"])
    finally:
        for fd in (report_r, report_w, go_r, go_w):
            if fd >= 0:
                os.close(fd)


def _report(report: int, middle: int) -> dict[str, Any]:
    """What the middle process said, once it has exited (killed if it takes longer than the setup may)."""
    data = b""
    deadline = time.monotonic() + _SETUP_SECONDS
    poller = select.poll()
    poller.register(report, select.POLLIN)
    while len(data) < _REPORT_LIMIT:
        if not poller.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            os.kill(middle, signal.SIGKILL)
            data = json.dumps({"error": f"setting up the namespaces took over {_SETUP_SECONDS:g} s"}).encode()
            break
        chunk = os.read(report, _REPORT_LIMIT)
        if not chunk:
            break
        data += chunk
    os.waitpid(middle, 0)
    try:
        answer = json.loads(data)
    except ValueError:
        return {"error": "the process setting up the namespaces exited without a word"}
    return answer if isinstance(answer, dict) else {"error": "the namespaces' setup said nothing useful"}


def _middle(
    libc: ctypes.CDLL, report: int, go: int, life: int, become_worker: Callable[[], NoReturn]
) -> NoReturn:
    """Make the namespaces, fork their init and the worker, say both pids, exit."""
    code = 1
    try:
        own_users = _enter(libc)
        mounted_r, mounted_w = os.pipe()
        started_r, started_w = os.pipe()
        init = os.fork()
        if init == 0:
            _init(libc, life, mounted_w, started_r)
        os.close(mounted_w)
        os.close(started_r)
        said = _read_all(mounted_r)
        if said != b"ok":
            os.kill(init, signal.SIGKILL)
            raise NamespaceUnavailable(said.decode(errors="replace") or "the namespace's init exited")
        worker = os.fork()
        if worker == 0:
            os.close(started_w)
            os.close(report)
            _worker(go, own_users, become_worker)
        os.close(started_w)  # the init may look for the worker now
        os.write(report, json.dumps({"worker": worker, "init": init}).encode())
        code = 0
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(report, json.dumps({"error": str(exc)}).encode())
    finally:
        os._exit(code)


def _enter(libc: ctypes.CDLL) -> bool:
    """Move this process into new mount and user namespaces, its children into a new PID namespace, and
    keep its mounts to itself; whether it made a user namespace (as an ordinary user)."""
    uid, gid = os.geteuid(), os.getegid()
    own_users = uid != 0
    _check(libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID | (_CLONE_NEWUSER if own_users else 0)), "unshare")
    if own_users:
        _map_own_ids(libc, uid, gid)
    _check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "making the mounts private")
    return own_users


def _mount_proc(libc: ctypes.CDLL) -> None:
    """In the new PID namespace: a ``/proc`` of its own, where no other process has an entry."""
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _check(libc.mount(b"proc", b"/proc", b"proc", flags, None), "mounting /proc")


def available() -> tuple[bool, str]:
    """Whether the kernel gives this process's sandboxed workers a PID namespace, and if not why: the
    steps tried in a child process (for ``tool-loader check``; the template finds out on its own)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return False, "Linux with pidfds only"
    libc = ctypes.CDLL(None, use_errno=True)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            os.close(read_end)
            _enter(libc)
            init = os.fork()
            if init == 0:
                try:
                    _mount_proc(libc)
                except BaseException as exc:
                    with contextlib.suppress(BaseException):
                        os.write(write_end, str(exc).encode())
                    os._exit(1)
                os._exit(0)
            code = 0 if os.waitpid(init, 0)[1] == 0 else 1
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                os.write(write_end, str(exc).encode())
        finally:
            os._exit(code)
    os.close(write_end)
    why = _read_all(read_end).decode(errors="replace")
    if os.waitpid(child, 0)[1] != 0:
        return False, why or "the trial of the namespaces failed"
    return True, "a PID namespace per worker: it sees no other process, and what it starts ends with it"


def _init(libc: ctypes.CDLL, life: int, mounted: int, started: int) -> NoReturn:
    """Pid 1: mount ``/proc`` for the namespace, then wait for the worker or the template to end."""
    try:
        _close_all_but(life, mounted, started)
        _mount_proc(libc)
        os.write(mounted, b"ok")
        os.close(mounted)
        os.read(started, 1)  # end of file: the worker is forked (or the middle died)
        worker = os.pidfd_open(_WORKER)
        poller = select.poll()
        poller.register(life, select.POLLIN)
        poller.register(worker, select.POLLIN)
        poller.poll()
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(mounted, str(exc).encode())
    finally:
        os._exit(0)  # the kernel kills what is left in the namespace


def _worker(go: int, own_users: bool, become_worker: Callable[[], NoReturn]) -> NoReturn:
    """Wait until the template has reaped the middle (this process is its child then); become the worker."""
    try:
        if os.read(go, 1) != b"1":
            os._exit(1)
        os.close(go)
        if own_users:
            drop_capabilities()  # the user namespace gave it every one, there
    except BaseException:
        os._exit(1)
    become_worker()


def _map_own_ids(libc: ctypes.CDLL, uid: int, gid: int) -> None:
    """Map the user's own ids, and only them, in the new user namespace (as ``unshare -r`` does). The
    template is not dumpable, which makes its ``/proc/self`` files root's: this process is for as long as
    it writes them."""
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        maps = {"setgroups": "deny", "uid_map": f"{uid} {uid} 1", "gid_map": f"{gid} {gid} 1"}
        for name, text in maps.items():
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    finally:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, _REPORT_LIMIT):
        data += chunk
    os.close(fd)
    return data


def _close_all_but(*keep: int) -> None:
    low = 0
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 2**31 - 1)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise NamespaceUnavailable(f"{what}: {os.strerror(number)}")
