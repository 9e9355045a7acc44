"""How a ``ToolLoader`` watches and loads: one small frozen object."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..calls.runner import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_BYTES, CallLimits
from .watcher import WatchTimings

__all__ = ["DEFAULT_MAX_MEMORY_MB", "DEFAULT_MAX_PROCESSES", "LoaderConfig"]

DEFAULT_MAX_MEMORY_MB = 2048
"""Process mode: each worker's data limit unless configured (room for numpy, pandas and the like)."""
DEFAULT_MAX_PROCESSES = 256
"""Process mode: processes below each worker unless configured (room for a pool of subprocesses)."""


@dataclass(frozen=True, slots=True)
class LoaderConfig:
    """How the loader watches and loads; the defaults suit interactive editing.

    Attributes:
        recursive: Scan and watch sub-folders.
        timings: Delays between file events and loading (see ``loader.reload.watcher``).
        empty_grace: How long a file that became empty, or lost all its tools,
            keeps serving its last tools (editors that truncate, then write).
        import_timeout: Seconds before an import that does not finish is reported as stuck.
        import_patience: While watching, how long a batch waits for one file's import
            before going on without it (the file is picked up when its import ends).
        rescan_interval: Seconds between stat checks of every file, a safety net
            for events the OS dropped (0 disables).
        supervise_interval: Seconds between checks that each watched folder
            exists and is watched (folders created or recreated later).
        entry_point_plugins: Load third-party plugins from the ``tool_loader.plugins`` entry points.
        builtin_plugins: Register the built-in discovery plugins.
        isolation: ``"thread"`` imports and calls in this process (the default);
            ``"process"`` runs them in supervised worker processes (``loader.isolation``);
            ``"sandbox"`` is process isolation with each worker confined by the kernel
            (Landlock, seccomp, rlimits: ``loader.isolation.sandbox``, ``docs/sandbox.md``).
        worker_env: Process mode: extra environment variable names workers inherit.
        max_memory_mb: Process mode: each worker's data limit in MB (default 2048; None or 0:
            none). ``RLIMIT_DATA`` on Linux, which counts what a process writes (heap, private
            mappings), not the address space that libraries like numpy reserve unused.
        max_processes: Process mode: most processes below each worker (default 256; None or
            0: none); a worker past it is stopped with everything it started.
        worker_command_prefix: Process mode: a wrapper workers run under (a sandbox such as bwrap).
        sandbox_allow_read: Sandbox mode: extra files or folders tools may read.
        sandbox_allow_write: Sandbox mode: extra files or folders tools may read and write.
        sandbox_allow_connect: Sandbox mode: ``HOST:PORT`` endpoints tools may connect to
            over TCP (the port is enforced, the host is not).
        sandbox_allow_network: Sandbox mode: leave the network open to tools.
        sandbox_best_effort: Sandbox mode: start even where the kernel cannot enforce a
            layer (a warning names the layers that are off) instead of refusing to start.
        sandbox_call_cpu_seconds: Sandbox mode: CPU seconds one call may use (default 60;
            None: no limit); a call past it loses its worker and gets an error result.
        sandbox_max_file_mb: Sandbox mode: the largest file a tool may write, in MB (default
            1024; None: no limit); a larger write fails with ``EFBIG``.
        call_timeout: Seconds before a call is answered with a timeout error (None or 0: no limit).
        max_concurrent_calls_per_tool: Threads one synchronous tool may occupy at once.
        max_result_bytes: The largest result a call hands on (default 32 MiB; None or 0: no
            limit); a larger one becomes an error result naming the limit and the size. In
            process mode the worker refuses it before sending, so the loader's process never
            reads more than the limit from a worker.
            The call limits apply to the registry the loader creates; a registry passed in
            keeps its own (the worker-side size check applies either way).
        gate: Run a changed file's tool examples before it goes live; a failure
            rejects the new version and the last good one keeps serving.
        example_timeout: Seconds one example may run before it counts as failed.
        bytecode_cache: Thread mode: keep the compiled code of a scan's files for the next
            start, keyed by path and content hash (``loader.importing.bytecode_cache``).
    """

    recursive: bool = True
    timings: WatchTimings = field(default_factory=WatchTimings)
    empty_grace: float = 0.5
    import_timeout: float = 10.0
    import_patience: float = 0.1
    rescan_interval: float = 2.0
    supervise_interval: float = 0.25
    entry_point_plugins: bool = True
    builtin_plugins: bool = True
    isolation: Literal["thread", "process", "sandbox"] = "thread"
    worker_env: tuple[str, ...] = ()
    max_memory_mb: int | None = DEFAULT_MAX_MEMORY_MB
    max_processes: int | None = DEFAULT_MAX_PROCESSES
    worker_command_prefix: tuple[str, ...] = ()
    sandbox_allow_read: tuple[str | Path, ...] = ()
    sandbox_allow_write: tuple[str | Path, ...] = ()
    sandbox_allow_connect: tuple[str, ...] = ()
    sandbox_allow_network: bool = False
    sandbox_best_effort: bool = False
    sandbox_call_cpu_seconds: float | None = 60.0
    sandbox_max_file_mb: int | None = 1024
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    max_concurrent_calls_per_tool: int = 8
    max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES
    gate: bool = False
    example_timeout: float = 5.0
    bytecode_cache: bool = True

    def __post_init__(self) -> None:
        for name in ("max_memory_mb", "max_processes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be a whole number >= 0 (0: no limit), not {value!r}")

    def call_limits(self) -> CallLimits:
        """The call timeout and per-tool concurrency cap, as the registry takes them."""
        return CallLimits(self.call_timeout, self.max_concurrent_calls_per_tool, self.max_result_bytes)
