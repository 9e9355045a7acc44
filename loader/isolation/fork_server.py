"""Workers forked from a warm template process instead of started as new interpreters.

A worker's interpreter spends about half a second of CPU importing what every
worker needs (pydantic, jsonschema, the loader's call and import code) before
it can run a line of a tool. The pool starts one per tool file called, so a
fresh folder of 20 files paid 20 such starts before its last file answered.
Here one *template* process, started once per backend with the workers'
``python -I`` command line and ``sys.path``, imports that code and then only
forks: each new worker is a copy of it that takes its pipes, environment and
working folder and runs ``worker_main.main`` exactly as a started interpreter
does (its own session, its parent-death signal, its sandbox applied by itself
before any tool code). A fork costs milliseconds and shares the template's
pages until they are written.

The template runs no tool code and takes requests only from the loader, over a
socket no worker holds (each fork closes every descriptor but its own four
before it runs anything). Its workers are its children, not the loader's: the
template keeps each one's exit unreaped until the loader asks (``reap``), so a
worker's pid stays its own while the loader may still signal it, and the
loader sees the exit through a pidfd. What forking shares, and a started
interpreter would not: the template's hash seed and address layout
(docs/isolation-matrix.md). A wrapper (``command_prefix``) or a system without
pidfds starts each worker as its own interpreter, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Final, NoReturn

from .errors import WorkerStartError
from .pid_namespace import NamespaceUnavailable, fork_in_namespace

__all__ = ["ForkServer", "ForkedProcess", "available", "serve"]

logger = logging.getLogger(__name__)

_BOOT: Final = (
    "import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
    "from loader.isolation.fork_server import serve; sys.exit(serve(int(sys.argv[2])))"
)
_MAX_REQUEST: Final = 1 << 20
"""The longest request the template reads (settings, environment and folder of one worker)."""
_FDS: Final = 4
"""A worker's descriptors, in order: its stdin, stdout, stderr and the stack pipe (which becomes fd 3)."""
_PR_SET_DUMPABLE: Final = 4
_ALL_FDS: Final = 2**31 - 1


def available() -> bool:
    """Whether workers can be forked from a template here (Linux with pidfds)."""
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


class ForkServer:
    """The loader's end of one template process: started on first use, started again if it died."""

    def __init__(self, sys_path: list[str], env: dict[str, str], cwd: Path, start_timeout: float) -> None:
        self._sys_path = sys_path
        self._env = env
        self._cwd = cwd
        self._timeout = start_timeout
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None
        self.namespace_refused: str | None = None
        """Why the template forks sandboxed workers without a PID namespace of their own, once it has said."""
        self.generation = 0
        """Templates started so far: a worker of an earlier one died with it; its pid is no longer held."""

    def start(
        self, settings: dict[str, Any], env: dict[str, str], cwd: Path, fault_fd: int
    ) -> tuple[ForkedProcess, int, int, IO[bytes]]:
        """A new worker: its process, and the loader's ends of its stdin and stdout (descriptors) and
        stderr (a file), as ``process.py`` starts one without the template."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs = (stdin_r, stdout_w, stderr_w, fault_fd)
        try:
            request = {"op": "fork", "settings": settings, "env": env, "cwd": str(cwd)}
            reply = self._ask(request, theirs, retry=True)
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise
        finally:
            for fd in theirs[:3]:
                os.close(fd)
        pid = reply.get("pid")
        if not isinstance(pid, int):
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise WorkerStartError(f"the worker template could not fork: {reply.get('error')}")
        refused = reply.get("pid_namespace")
        if isinstance(refused, str) and refused != self.namespace_refused:
            self.namespace_refused = refused
            logger.info("sandboxed workers share this machine's process list: no PID namespace (%s)", refused)
        return ForkedProcess(self, pid, self.generation), stdin_w, stdout_r, os.fdopen(stderr_r, "rb")

    def status(self, pid: int, generation: int) -> tuple[int, bool]:
        """How worker ``pid`` of template ``generation``, which has ended, ended (negative: the signal), and
        whether its pid is still held (unreaped). A worker of a template that has died died with it, by
        SIGKILL, and was reaped elsewhere: its pid may name another process by now."""
        reply = self._ask({"op": "status", "pid": pid}, generation=generation)
        code = reply.get("code")
        return (code, True) if isinstance(code, int) and not reply.get("gone") else (-signal.SIGKILL, False)

    def reap(self, pid: int, generation: int) -> int:
        """Release worker ``pid``, which has ended; how it ended."""
        reply = self._ask({"op": "reap", "pid": pid}, generation=generation)
        code = reply.get("code")
        return code if isinstance(code, int) else -signal.SIGKILL

    def close(self) -> None:
        """Stop the template (its workers get their parent-death signal)."""
        with self._lock:
            self._stop()

    def _ask(
        self, request: dict[str, Any], fds: tuple[int, ...] = (), *, retry: bool = False, generation: int = 0
    ) -> dict[str, Any]:
        """One request and its answer. Only ``fork`` (from the pool's one spawning thread, which the
        template's parent-death signal is tied to) starts the template; with none running, a worker
        asked about has died with it, by SIGKILL."""
        data = json.dumps(request).encode()
        forking = request["op"] == "fork"
        with self._lock:
            for attempt in range(2 if retry else 1):
                if not forking and (not self._running() or generation != self.generation):
                    return {"gone": True}
                try:
                    sock = self._connection()
                    socket.send_fds(sock, [data], list(fds))
                    answer = sock.recv(_MAX_REQUEST)
                except (OSError, TimeoutError) as exc:
                    self._stop()
                    why = f"did not answer: {exc}"
                else:
                    if answer:
                        result: dict[str, Any] = json.loads(answer)
                        return result
                    self._stop()
                    why = "exited"
                if not forking:
                    return {"gone": True}
                if attempt or not retry:
                    raise WorkerStartError(f"the worker template {why}")
        raise WorkerStartError("the worker template did not answer")

    def _running(self) -> bool:
        return self._socket is not None and self._process is not None and self._process.poll() is None

    def _connection(self) -> socket.socket:
        """The template's socket, the template started first if it is not running (lock held)."""
        if self._running():
            assert self._socket is not None
            return self._socket
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT, json.dumps(self._sys_path), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                cwd=self._cwd,
                env=self._env,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            raise WorkerStartError(
                f"could not start the worker template with {sys.executable}: {exc}"
            ) from exc
        finally:
            theirs.close()
        ours.settimeout(self._timeout)
        self._socket = ours
        self.generation += 1
        return ours

    def _stop(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._process is not None:
            with contextlib.suppress(OSError):
                self._process.kill()
            self._process.wait()
            self._process = None


class ForkedProcess:
    """A worker forked by the template, as ``WorkerProcess`` uses a ``subprocess.Popen``.

    ``returncode`` is set once the worker's pid is no longer held for it (it was
    reaped): until then the pid cannot name another process, so signals sent to
    it reach only this worker. Safe from any thread (``WorkerProcess.running``
    and ``stop`` are): the worker is reaped once, and its pidfd closed once,
    never while another thread waits on it.
    """

    def __init__(self, server: ForkServer, pid: int, generation: int) -> None:
        self._server = server
        self._generation = generation
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd: int | None = os.pidfd_open(pid)
        self._ended_as: int | None = None
        self._lock = threading.Lock()

    def _ended(self, timeout: float | None) -> bool:
        with self._lock:
            if self._pidfd is None:
                return True
            fd = os.dup(self._pidfd)  # waited on without the lock: another thread may release the pidfd
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            return bool(poller.poll(None if timeout is None else max(0, int(timeout * 1000))))
        finally:
            os.close(fd)

    def poll(self) -> int | None:
        """How it ended, or None while it runs; it stays unreaped (its pid held) if the template lives."""
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            if self._ended_as is not None:
                return self._ended_as
        if not self._ended(0):
            return None
        code, held = self._server.status(self.pid, self._generation)
        with self._lock:
            if self._ended_as is None:
                self._ended_as = code
            if not held and self.returncode is None:
                self._release(code)
            return self._ended_as

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to end (``subprocess.TimeoutExpired`` past ``timeout``), then reap it (once)."""
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
        with self._lock:
            if self.returncode is None:
                self._release(self._server.reap(self.pid, self._generation))
            assert self.returncode is not None
            return self.returncode

    def _release(self, code: int) -> None:
        """Its pid is no longer held (lock held)."""
        self.returncode = code
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


# ----------------------------------------------------------------- the template process
def serve(fd: int) -> int:
    """The template's loop: fork a worker, say how one ended, or reap one, until the loader hangs up."""
    from .import_fork import die_with_parent

    die_with_parent()
    _set_dumpable(False)  # no process of this user traces it to plant code in every worker it forks
    from . import worker_main  # the half second every worker would spend, spent once

    worker_main.warm_up()

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    template = _Template()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, _MAX_REQUEST, _FDS)
        except OSError:
            return 1
        if not data:
            return 0
        template.reap_inits()
        try:
            request = json.loads(data)
            reply = _handle(request, fds, sock, worker_main.main, template)
        except Exception as exc:  # a bad request: say so, keep serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for received in fds:
                os.close(received)
        sock.send(json.dumps(reply).encode())


class _Template:
    """What the template keeps between requests for the PID namespaces of sandboxed workers."""

    def __init__(self) -> None:
        # the write end closes only when the template dies: each namespace's init waits on the read end
        self.life, self._life_w = os.pipe()
        self.refused: str | None = None
        """Why the kernel refused a namespace (then workers are forked without one), else None."""
        self._inits: set[int] = set()

    def fork(self, become_worker: Callable[[bool], NoReturn], sandboxed: bool) -> dict[str, Any]:
        if sandboxed and self.refused is None:
            try:
                pid, init = fork_in_namespace(self.life, lambda: become_worker(True))
            except NamespaceUnavailable as exc:
                self.refused = str(exc)
            else:
                self._inits.add(init)
                return {"pid": pid, "pid_namespace": None}
        pid = os.fork()
        if pid == 0:
            become_worker(False)
        return {"pid": pid, "pid_namespace": self.refused if sandboxed else None}

    def reap_inits(self) -> None:
        """Collect the namespaces' inits that have ended (each ends with its worker)."""
        for init in list(self._inits):
            with contextlib.suppress(ChildProcessError):
                if not os.waitpid(init, os.WNOHANG)[0]:
                    continue
            self._inits.discard(init)


def _handle(
    request: dict[str, Any], fds: list[int], sock: socket.socket, main: Any, template: _Template
) -> dict[str, Any]:
    op = request.get("op")
    if op == "fork":
        if len(fds) != _FDS:
            return {"error": f"{len(fds)} descriptors sent, {_FDS} expected"}
        return template.fork(
            lambda namespaced: _become_worker(sock, fds, request, main, namespaced),
            bool(request["settings"].get("sandbox")),
        )
    if op == "status":
        found = os.waitid(os.P_PID, int(request["pid"]), os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return {"code": None if found is None else _code(found)}
    if op == "reap":
        _, status = os.waitpid(int(request["pid"]), 0)
        return {"code": os.waitstatus_to_exitcode(status)}
    return {"error": f"unknown op {op!r}"}


def _code(found: os.waitid_result) -> int:
    return found.si_status if found.si_code == os.CLD_EXITED else -found.si_status


def _become_worker(
    sock: socket.socket, fds: list[int], request: dict[str, Any], main: Any, namespaced: bool
) -> NoReturn:
    """The forked child: take the worker's descriptors as 0-3, drop every other, and run the worker.
    ``namespaced``: in a PID namespace of its own, where its parent (outside) has no pid to compare."""
    code = 1
    try:
        parent = os.getppid()
        sock.close()
        os.setsid()
        from .import_fork import die_with_parent

        die_with_parent()
        if not namespaced and os.getppid() != parent:  # the template died before the signal was asked for
            os._exit(1)  # (in a namespace, its init ends the worker when the template dies)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in fds]
        for target, fd in enumerate(high):
            os.dup2(fd, target)
        os.closerange(_FDS, _ALL_FDS)
        _set_dumpable(True)  # as a started interpreter is
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # computed again from this worker's TMPDIR
        os.chdir(request["cwd"])
        code = main(json.dumps({**request["settings"], "fault_fd": _FDS - 1}))
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def _set_dumpable(dumpable: bool) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, int(dumpable), 0, 0, 0)
