"""Process isolation (``ToolLoader(paths, isolation="process")``): tools run in worker processes.

Crash containment, not a security sandbox: a worker runs with the user's
rights. ``isolation="sandbox"`` adds one: each worker confines itself with
Landlock, seccomp and rlimits before any tool code runs (``sandbox/``).
"""

from __future__ import annotations

from .backend import ProcessBackend
from .errors import WorkerCrashed, WorkerError, WorkerStartError, WorkerTimeout
from .options import DEFAULT_WORKER_ENV, WorkerOptions, worker_environment
from .proxy import ProxyTool, ToolDescription
from .sandbox import SandboxOptions, SandboxUnavailable

__all__ = [
    "DEFAULT_WORKER_ENV",
    "ProcessBackend",
    "ProxyTool",
    "SandboxOptions",
    "SandboxUnavailable",
    "ToolDescription",
    "WorkerCrashed",
    "WorkerError",
    "WorkerOptions",
    "WorkerStartError",
    "WorkerTimeout",
    "worker_environment",
]
