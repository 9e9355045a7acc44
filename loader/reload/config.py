"""How a ``ToolLoader`` watches and loads: one small frozen object."""

from __future__ import annotations

import warnings
from dataclasses import InitVar, dataclass, field, replace
from typing import Any, Final, Literal

from ..calls.runner import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_BYTES, CallLimits
from ..isolation.options import WorkerOptions
from ..isolation.sandbox.options import SandboxOptions, parse_endpoint
from .watcher import WatchTimings

__all__ = ["LoaderConfig"]


class _NotGiven:
    """The default of a deprecated flat setting: read ``workers`` or ``sandbox`` instead.

    It is what reading a flat name gives (they are constructor arguments only), so it refuses to be
    tested as true or false: old code that reads ``config.sandbox_best_effort`` fails loudly.
    """

    def __repr__(self) -> str:
        return "<deprecated: see LoaderConfig.workers and LoaderConfig.sandbox>"

    def __bool__(self) -> bool:
        raise TypeError(
            "the flat LoaderConfig settings are constructor arguments only: "
            "read LoaderConfig.workers and LoaderConfig.sandbox"
        )


_NOT_GIVEN: Final = _NotGiven()
_FLAT: Final = {
    "worker_env": "worker_env",
    "max_memory_mb": "max_memory_mb",
    "max_processes": "max_processes",
    "worker_command_prefix": "command_prefix",
    "sandbox_allow_read": "allow_read",
    "sandbox_allow_write": "allow_write",
    "sandbox_allow_connect": "allow_connect",
    "sandbox_allow_network": "allow_network",
    "sandbox_best_effort": "best_effort",
    "sandbox_call_cpu_seconds": "max_cpu_seconds",
    "sandbox_max_file_mb": "max_file_mb",
}
"""Each deprecated flat setting, in declaration order, and its ``WorkerOptions``/``SandboxOptions`` field."""


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
        workers: Process and sandbox modes: the worker processes' ``WorkerOptions``
            (environment, memory and process limits, a command prefix); the call limits
            below take the place of its own.
        sandbox: Sandbox mode: what a confined tool may reach and use (``SandboxOptions``;
            None: the defaults). Ignored in the other modes.
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
    workers: WorkerOptions = field(default_factory=WorkerOptions)
    sandbox: SandboxOptions | None = None
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    max_concurrent_calls_per_tool: int = 8
    max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES
    gate: bool = False
    example_timeout: float = 5.0
    bytecode_cache: bool = True

    # Deprecated flat settings: accepted for one release and folded into ``workers``/``sandbox``.
    worker_env: InitVar[Any] = _NOT_GIVEN
    max_memory_mb: InitVar[Any] = _NOT_GIVEN
    max_processes: InitVar[Any] = _NOT_GIVEN
    worker_command_prefix: InitVar[Any] = _NOT_GIVEN
    sandbox_allow_read: InitVar[Any] = _NOT_GIVEN
    sandbox_allow_write: InitVar[Any] = _NOT_GIVEN
    sandbox_allow_connect: InitVar[Any] = _NOT_GIVEN
    sandbox_allow_network: InitVar[Any] = _NOT_GIVEN
    sandbox_best_effort: InitVar[Any] = _NOT_GIVEN
    sandbox_call_cpu_seconds: InitVar[Any] = _NOT_GIVEN
    sandbox_max_file_mb: InitVar[Any] = _NOT_GIVEN

    def __post_init__(self, *flat: Any) -> None:
        given = {name: value for name, value in zip(_FLAT, flat, strict=True) if value is not _NOT_GIVEN}
        if not given:
            return
        warnings.warn(
            f"LoaderConfig({', '.join(given)}=...) is deprecated: "
            "use LoaderConfig(workers=WorkerOptions(...), sandbox=SandboxOptions(...))",
            DeprecationWarning,
            stacklevel=3,
        )
        workers = {_FLAT[name]: value for name, value in given.items() if not name.startswith("sandbox_")}
        if workers:
            object.__setattr__(self, "workers", replace(self.workers, **workers))
        sandbox: dict[str, Any] = {_FLAT[n]: v for n, v in given.items() if n.startswith("sandbox_")}
        if sandbox:
            if "allow_connect" in sandbox:
                sandbox["allow_connect"] = tuple(parse_endpoint(e) for e in sandbox["allow_connect"])
            object.__setattr__(self, "sandbox", replace(self.sandbox or SandboxOptions(), **sandbox))

    def call_limits(self) -> CallLimits:
        """The call timeout and per-tool concurrency cap, as the registry takes them."""
        return CallLimits(self.call_timeout, self.max_concurrent_calls_per_tool, self.max_result_bytes)

    def worker_options(self) -> WorkerOptions:
        """``workers`` under this config's call limits, which apply in every mode."""
        return replace(
            self.workers,
            max_result_bytes=self.max_result_bytes or None,
            max_concurrent_per_tool=self.max_concurrent_calls_per_tool,
            call_timeout=self.call_timeout or 0.0,
        )

    def sandbox_options(self) -> SandboxOptions | None:
        """What each worker is confined by: ``sandbox`` (or the defaults) in sandbox mode, else None."""
        if self.isolation != "sandbox":
            return None
        return self.sandbox if self.sandbox is not None else SandboxOptions()
