"""Process isolation (``ToolLoader(paths, isolation="process")``): tools run in worker processes.

Crash containment, not a security sandbox: a worker runs with the user's
rights. ``isolation="sandbox"`` adds one: each worker confines itself with
Landlock, seccomp and rlimits before any tool code runs (``sandbox/``).

Names load on first use: ``LoaderConfig`` imports the options alone, and the
worker machinery comes only with a loader that asks for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "DEFAULT_WORKER_ENV": ".options",
    "ProcessBackend": ".backend",
    "ProxyTool": ".proxy",
    "SandboxOptions": ".sandbox",
    "SandboxUnavailable": ".sandbox",
    "ToolDescription": ".proxy",
    "WorkerCrashed": ".errors",
    "WorkerError": ".errors",
    "WorkerOptions": ".options",
    "WorkerStartError": ".errors",
    "WorkerTimeout": ".errors",
    "worker_environment": ".options",
}


def __getattr__(name: str) -> Any:
    """Import a name's module on first use, so importing one options module stays cheap."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
