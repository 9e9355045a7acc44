"""What can go wrong with a worker process, as types the loader and proxies can tell apart."""

from __future__ import annotations

from ..errors import ToolLoaderError

__all__ = ["WorkerCrashed", "WorkerError", "WorkerStartError", "WorkerTimeout"]


class WorkerError(ToolLoaderError):
    """Base of the worker-process errors."""


class WorkerStartError(WorkerError):
    """A worker process did not start (bad interpreter, unimportable loader, a limit too low)."""


class WorkerCrashed(WorkerError):
    """The worker process died while serving a request; ``exit`` says how (signal or status)."""

    def __init__(self, message: str, *, exit: str) -> None:
        super().__init__(message)
        self.exit = exit


class WorkerTimeout(WorkerError):
    """The worker did not answer in time (the caller then stops it)."""
