"""Process isolation (``ToolLoader(paths, isolation="process")``): tools run in worker processes.

Crash containment, not a security sandbox: a worker runs with the user's
rights. See the README for when to choose it and how to add a sandbox.
"""

from __future__ import annotations

from .backend import ProcessBackend
from .errors import WorkerCrashed, WorkerError, WorkerStartError, WorkerTimeout
from .options import DEFAULT_WORKER_ENV, WorkerOptions, worker_environment
from .proxy import ProxyTool, ToolDescription

__all__ = [
    "DEFAULT_WORKER_ENV",
    "ProcessBackend",
    "ProxyTool",
    "ToolDescription",
    "WorkerCrashed",
    "WorkerError",
    "WorkerOptions",
    "WorkerStartError",
    "WorkerTimeout",
    "worker_environment",
]
