"""One worker process, seen from the loader: start, ask, stop, and say how it ended.

Workers are plain ``subprocess`` children rather than ``multiprocessing``
processes because the loader must choose their environment (an allowlist) and
working directory, and must not re-import the host's ``__main__``. They run
``python -I`` (no current folder on ``sys.path``, no ``PYTHON*`` variables
read by the interpreter) with the loader's own ``sys.path`` less its working
folder (``worker_sys_path``), in their own
session so a Ctrl-C in the console reaches only the console.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Final, cast

from .errors import WorkerCrashed, WorkerSentTooMuch, WorkerStartError, WorkerTimeout
from .fork_server import ForkedProcess, ForkServer
from .messages import Hello, Message, Request, WorkerSettings
from .protocol import Channel, ChannelClosed, ChannelTimeout, MessageTooLarge, wire_limit
from .tree import kill_descendants, kill_tree

__all__ = [
    "FRAME_SECONDS",
    "LOADER_HOME",
    "WorkerProcess",
    "describe_exit",
    "worker_command_path",
    "worker_sys_path",
]

logger = logging.getLogger(__name__)

_BOOT: Final = (
    "import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
    "from loader.isolation.worker_main import main; sys.exit(main(sys.argv[2]))"
)
_RELAY_CHUNK: Final = 65536
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
FRAME_SECONDS: Final = 10.0
"""How long a worker has to finish a message once it has begun one, or to take one the loader sends:
a frame is a pipe write, so only a worker that stopped half-way (a tool writing to the pipe) misses it."""

_LOOK_EVERY: Final = 1.0
"""How often a wait for a worker's answer also looks whether the worker process still runs."""
_MAX_STACK_BYTES: Final = 64 * 1024
"""The most of a stuck worker's stacks the loader reads (faulthandler's are a few KB)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _printable(text: str) -> str:
    """``text`` with control characters (terminal escapes) made ``?``: it is shown to the user."""
    return _CONTROL.sub("?", text)


def _working_folder() -> str | None:
    try:
        return os.path.realpath(os.getcwd())
    except OSError:  # removed since
        return None


_STARTED_IN: Final = _working_folder()
"""The folder the loader was started from (``python -m`` put it first on ``sys.path``)."""
LOADER_HOME: Final = str(Path(__file__).resolve().parents[2])
"""The folder holding the ``loader`` package: site-packages, or a source checkout."""


def worker_sys_path() -> list[str]:
    """The loader's ``sys.path`` as its workers get it: absolute folders, never the working folder.

    ``python -m loader`` (the form ``mcp-config`` writes) puts the folder it was
    started from first on ``sys.path``: often a home folder, whose settings
    modules and projects no tool should import. A relative entry (``''`` under
    ``-c``) would name the worker's own folder, beside the tool folder. The
    folder holding ``loader`` stays, so a worker can start from a checkout.
    """
    working = {_STARTED_IN, _working_folder()}
    kept = [e for e in sys.path if os.path.isabs(e) and os.path.realpath(e) not in working]
    return kept if LOADER_HOME in kept else [*kept, LOADER_HOME]


def _path_without(roots: Sequence[str], entries: Sequence[str]) -> list[str]:
    """``entries`` less the watched folders: no tool file is importable by its bare name."""
    real_roots = {os.path.realpath(root) for root in roots}
    return [entry for entry in entries if os.path.realpath(entry or os.curdir) not in real_roots]


_SHOWN_CONTROLS: Final = {
    code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if code not in (0x09, 0x0A)
}
"""Control characters (C0 but tab and newline, DEL, C1) as their escaped text: shown, never obeyed."""


def _relay_lines(pipe: Any, *, untrusted: bool) -> None:
    """A worker's stderr (its tools' print, logging, warnings), line by line, to ``sys.stderr``.

    Written through the host's Python stream rather than inherited as fd 2, so
    whoever owns the console (a progress bar, ``watch``'s full screen) decides
    where a tool's output goes, as it does for tools run in threads. An
    ``untrusted`` (sandboxed) worker's control characters are shown escaped:
    the stream is often the user's terminal, whose escape sequences set its
    title, clear it, or answer back into its input.
    """
    with pipe:
        for line in iter(lambda: pipe.readline(_RELAY_CHUNK), b""):  # a line without an end comes in parts
            stream = sys.stderr
            if stream is None:
                continue
            text = line.decode("utf-8", errors="replace")
            try:
                stream.write(text.translate(_SHOWN_CONTROLS) if untrusted else text)
                stream.flush()
            except (OSError, ValueError):  # the host's stderr is closed or gone: drop the line
                continue


def _started(
    settings: WorkerSettings, env: dict[str, str], cwd: Path, prefix: tuple[str, ...], fault_write: int
) -> tuple[subprocess.Popen[bytes], int, int, IO[bytes]]:
    """A worker started as a new interpreter: its process, the loader's ends of its stdin and stdout
    (descriptors of their own), and its stderr."""
    try:
        process = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                "-I",
                "-c",
                _BOOT,
                json.dumps(worker_command_path(settings.get("roots", ()))),
                json.dumps({**settings, "fault_fd": fault_write}),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            pass_fds=(fault_write,),
            start_new_session=True,
        )
    except OSError as exc:
        raise WorkerStartError(f"could not start a worker process with {sys.executable}: {exc}") from exc
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    reader = os.dup(process.stdout.fileno())
    writer = os.dup(process.stdin.fileno())
    process.stdin.close()
    process.stdout.close()
    return process, writer, reader, process.stderr


def worker_command_path(roots: Sequence[str]) -> list[str]:
    """The ``sys.path`` a worker starts with: the loader's (``worker_sys_path``) less the watched folders."""
    return _path_without(roots, worker_sys_path())


class WorkerProcess:
    """A started worker and the parent's end of its pipes.

    Not thread-safe: whoever holds it (the import role, or one call at a time)
    is its only user.
    """

    def __init__(
        self,
        settings: WorkerSettings,
        env: dict[str, str],
        cwd: Path,
        prefix: tuple[str, ...] = (),
        *,
        scratch: Path | None = None,
        forks: ForkServer | None = None,
    ) -> None:
        self.scratch = scratch
        """Sandbox mode: the worker's own writable folder, removed with the worker."""
        self.reply_limit = wire_limit(settings.get("max_result_bytes"))
        """The longest message read from this worker (any reply: a call's, an import's, an ack)."""
        fault_read, fault_write = os.pipe()
        os.set_blocking(fault_read, False)
        self.process: subprocess.Popen[bytes] | ForkedProcess
        try:
            self.process, writer, reader, stderr = (
                forks.start(dict(settings), env, cwd, fault_write)
                if forks is not None and not prefix
                else _started(settings, env, cwd, prefix, fault_write)
            )
        except BaseException:
            os.close(fault_read)
            raise
        finally:
            os.close(fault_write)
        threading.Thread(
            target=_relay_lines,
            args=(stderr,),
            kwargs={"untrusted": "sandbox" in settings},
            name="tool-loader-worker-stderr",
            daemon=True,
        ).start()
        os.set_blocking(writer, False)  # a worker that stops reading cannot hold the loader's thread
        self.channel = Channel(reader, writer)
        self._fault_read = fault_read
        self.ready = False
        self.known: dict[str, int] = {}
        """Module versions (name → serial) this call worker holds, as confirmed by its answers (an
        import worker holds none: each import runs in a process of its own)."""
        self.built: set[int] = set()
        """Tool-module versions this worker has made tool instances of (for ``cleanup``)."""
        self.pending: list[Request] = []
        """Requests (cleanups) to send once the current user hands the worker back."""
        self.prepared: list[tuple[int, dict[str, int]]] = []
        """Prepare requests sent without waiting: (tool serial, versions it builds), answered in order."""
        self.owner: str | None = None
        """The tool file whose calls this worker serves, for its whole life (None: a spare, an importer)."""
        self.synced = 0
        """The ledger epoch this worker's modules were last brought up to (call role)."""
        self.abandoned = False
        """Its import was given up on and the worker stopped (import role)."""
        self.descendants: tuple[tuple[int, int], ...] = ()
        """The processes below it when last counted, as (pid, start time), for stopping them later."""
        self.over_limit: int | None = None
        """How many processes it had when it was stopped for its process limit."""
        self.keeps_children = settings.get("sandbox") is None
        """False in sandbox mode: processes a call or import started are stopped when it returns."""
        self._kill_lock = threading.Lock()
        self._released = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        """Whether the worker runs, as its holder sees it: its end of the pipe is open (one ``poll``,
        no system call about the process). A process its tool forked can hold that end open after
        the worker died, so a wait for an answer also looks at the process (``receive``)."""
        return self.process.returncode is None and not self.channel.hung_up()

    def running(self) -> bool:
        """Whether the worker process runs, from any thread (an exited worker is not reaped here:
        see ``stop``)."""
        return self.process.returncode is None and not self._exited()

    def _exited(self) -> bool:
        """Whether the worker has exited, leaving it unreaped (its pid stays ours until ``kill``)."""
        return self._status() is not None

    def _status(self) -> int | None:
        """``Popen.returncode`` as it will be (negative: killed by that signal), None while running.

        Read without reaping: a reaped worker's pid, and so its process group's id,
        may be handed to a new process, which a later ``killpg`` would hit.
        """
        if self.process.returncode is not None:
            return self.process.returncode
        if isinstance(self.process, ForkedProcess):  # the template's child: its poll never reaps it
            return self.process.poll()
        try:
            found = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped by someone else: Popen knows how it ended
            return self.process.poll()
        if found is None:
            return None
        return found.si_status if found.si_code == os.CLD_EXITED else -found.si_status

    def _wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the worker to exit, without reaping it."""
        deadline = time.monotonic() + timeout
        while not self._exited():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def wait_ready(self, timeout: float) -> None:
        """Wait for the worker's hello; ``WorkerStartError`` if it fails or is late."""
        if self.ready:
            return
        try:
            if not self.channel.poll(timeout):
                self.kill()
                raise WorkerStartError(f"worker process {self.pid} did not start within {timeout:g} s")
            hello = cast(Hello, self.channel.receive(self.reply_limit, time.monotonic() + FRAME_SECONDS))
        except ChannelTimeout as exc:
            self.kill()
            raise WorkerStartError(f"worker process {self.pid} sent half a message at start") from exc
        except ChannelClosed as exc:
            raise WorkerStartError(
                f"worker process {self.pid} exited at start ({self.exit_description()})"
            ) from exc
        if not hello.get("ready"):
            self.kill()
            raise WorkerStartError(
                str(hello.get("fatal") or f"worker process {self.pid} sent {hello!r} at start")
            )
        self.ready = True

    def ready_now(self) -> bool:
        """Whether the worker has said hello (read without waiting if it is in the pipe)."""
        if self.ready:
            return True
        try:
            if self.channel.poll(0):
                self.wait_ready(0.1)
        except (ChannelClosed, WorkerStartError):
            return False
        return self.ready

    def request(self, message: Request, timeout: float | None) -> dict[str, Any]:
        """Send one request and return its answer (no intermediate messages expected)."""
        self.send(message)
        return self.receive(None if timeout is None else time.monotonic() + timeout)

    def collect_prepared(self, deadline: float | None) -> None:
        """Read the answers to prepare requests sent earlier without waiting, so that the next
        request's answer is its own (whoever takes the worker next must do this first)."""
        while self.prepared:
            serial, versions = self.prepared.pop(0)
            answer = self.receive(deadline)
            if answer.get("ok"):
                self.known.update(versions)
                self.built.add(serial)
            else:
                self.known.clear()

    def send(self, message: Message) -> None:
        """Send one request; ``WorkerTimeout`` if the worker does not take it in time (then stop it)."""
        try:
            self.channel.send(message, deadline=time.monotonic() + FRAME_SECONDS)
        except ChannelTimeout as exc:
            raise WorkerTimeout(f"worker process {self.pid} stopped reading its requests") from exc
        except ChannelClosed as exc:
            raise self._crashed() from exc

    def receive(
        self,
        deadline: float | None,
        cancelled: Callable[[], bool] | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """The next message; ``WorkerTimeout`` past ``deadline``, ``WorkerCrashed`` if the worker died,
        ``WorkerSentTooMuch`` for a message longer than ``limit`` bytes (never read).

        Once a message has begun it must be complete within ``FRAME_SECONDS`` (and
        shortly after ``deadline``), or it counts as the worker not answering.
        """
        while True:
            left = _LOOK_EVERY if deadline is None else max(0.0, deadline - time.monotonic())
            wait = min(left, _LOOK_EVERY)
            if cancelled is not None:
                wait = min(wait, 0.2)
            try:
                if self.channel.poll(wait):
                    return self.channel.receive(limit or self.reply_limit, _frame_deadline(deadline))
            except ChannelTimeout as exc:
                raise WorkerTimeout(f"worker process {self.pid} stopped half-way through a message") from exc
            except MessageTooLarge as exc:
                raise WorkerSentTooMuch(exc.limit) from exc
            except ChannelClosed as exc:
                raise self._crashed() from exc
            if cancelled is not None and cancelled():
                raise WorkerTimeout("the call was cancelled")
            if deadline is not None and time.monotonic() >= deadline:
                raise WorkerTimeout(f"worker process {self.pid} did not answer in time")
            if self._exited():  # a process its tool forked holds the pipe open: it is no answer
                raise self._crashed()

    def _crashed(self) -> WorkerCrashed:
        self._wait_exit(2.0)
        self.stop()  # what its tools started goes with it
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            logger.warning("pid=<%s> | worker did not exit after SIGKILL", self.pid)
        how = self.exit_description()
        return WorkerCrashed(f"worker process {self.pid} {how}", exit=how)

    def killed_by_signal(self) -> bool:
        """Whether the worker ended by a signal (killed from outside, or a crash), not by exiting."""
        code = self._status()
        return code is not None and code < 0

    def exit_description(self) -> str:
        """``exited with status 3`` / ``was killed by SIGSEGV`` / ``is running``."""
        code = self._status()
        return "is running" if code is None else describe_exit(code)

    def stack_in(self, watch_file: Path, wait: float = 0.5) -> tuple[int | None, str]:
        """The line of ``watch_file`` the worker is executing, and all its threads' stacks.

        Asks the ``faulthandler`` of the process running the import (SIGUSR1, which
        the worker passes on: ``import_fork``), which answers from a C signal
        handler, so this works even while C code holds the GIL. The
        tool can write on that pipe too, so what comes back is untrusted: what
        was there before the question is dropped, at most ``_MAX_STACK_BYTES``
        are read, and only printable text is kept.
        """
        self._read_stack(0.0)  # left there earlier: not an answer to this question
        try:
            os.kill(self.pid, signal.SIGUSR1)
        except OSError:
            return None, ""
        stack = _printable(self._read_stack(wait).decode("utf-8", "replace"))
        target = str(watch_file)
        for match in _FRAME.finditer(stack):  # most recent call first
            if match["file"] == target:
                return int(match["line"]), stack
        return None, stack

    def _read_stack(self, wait: float) -> bytes:
        """What the stack pipe holds, up to ``_MAX_STACK_BYTES``, read until it is quiet or ``wait`` ends."""
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + wait
        while size < _MAX_STACK_BYTES:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._fault_read], [], [], 0.05 if chunks else max(0.0, left))
            if not ready:
                if chunks or left <= 0:
                    break
                continue
            try:
                data = os.read(self._fault_read, _MAX_STACK_BYTES - size)
            except BlockingIOError:
                continue
            if not data:
                break
            chunks.append(data)
            size += len(data)
        return b"".join(chunks)

    def stop_strays(self) -> None:
        """Sandbox mode: stop the processes the last call or import left running (the worker lives on).

        Their CPU time would count against no call's limit (``RLIMIT_CPU`` is per process).
        """
        if not self.keeps_children and self.process.returncode is None:
            kill_descendants(self.pid)

    def stop(self) -> None:
        """Stop the worker and every process its tools started, by signals only: safe from any thread.

        Its pipes stay open for whoever is reading them (they see their end);
        ``kill`` also releases them. SIGKILL works whatever the worker's code is
        doing (even C code holding the GIL). Processes in sessions of their own
        go too (``tree.kill_tree``).
        """
        reaped = self.process.returncode is not None  # then its pid may be another process's
        kill_tree(None if reaped else self.pid, self.descendants)

    def kill(self) -> None:
        """Stop the worker at once, and any process a tool started in its group, and release its pipes."""
        self.stop()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            logger.warning("pid=<%s> | worker did not exit after SIGKILL", self.pid)
        with self._kill_lock:
            if self._released:
                return
            self._released = True
        self.channel.close()
        os.close(self._fault_read)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def close(self) -> None:
        """Let the worker exit on its own (end of its input), killing it if it lingers."""
        self.channel.close()
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def describe_exit(code: int) -> str:
    """How a process ended, from its exit code (negative: the signal): ``exited with status 3``,
    ``was killed by SIGSEGV``."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _frame_deadline(deadline: float | None) -> float:
    """When a message that begins now must be complete: ``FRAME_SECONDS`` from now, and no later than
    a second past the caller's own deadline."""
    now = time.monotonic()
    if deadline is None:
        return now + FRAME_SECONDS
    return min(now + FRAME_SECONDS, max(deadline, now) + 1.0)
