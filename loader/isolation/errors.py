"""What can go wrong with a worker process, as types the loader and proxies can tell apart."""

from __future__ import annotations

from typing import Final

from ..errors import ToolLoaderError

__all__ = [
    "ToolRaised",
    "WorkerCrashed",
    "WorkerError",
    "WorkerSentTooMuch",
    "WorkerStartError",
    "WorkerTimeout",
    "tool_raised",
]


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


class WorkerSentTooMuch(WorkerError):
    """The worker's answer is longer than ``limit`` bytes: its body was never read (the caller stops it)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the worker's answer is longer than {limit:,} bytes")
        self.limit = limit


class ToolRaised(WorkerError):
    """A tool raised in its worker instead of returning a result (``@tool(raise_errors=True)``).

    The exception itself cannot cross (it may be of a class only the worker
    has, and unpickling what a worker sends is refused); ``tool_raised`` makes
    one of a subclass named like it, so ``type(exc).__name__`` and ``str(exc)``
    read as they would in-process, and no ``except SystemExit`` in the caller
    ever catches a tool's exit.
    """

    def __init__(self, message: str, *, exc_type: str) -> None:
        super().__init__(message)
        self.exc_type = exc_type


_RAISED_KINDS: Final[dict[str, type[ToolRaised]]] = {}
_RAISED_KINDS_KEPT: Final = 256


def tool_raised(exc_type: str, message: str) -> ToolRaised:
    """A ``ToolRaised`` whose class is named ``exc_type`` (when that is a plain identifier)."""
    kind = _RAISED_KINDS.get(exc_type)
    if kind is None:
        if not exc_type.isidentifier() or len(_RAISED_KINDS) >= _RAISED_KINDS_KEPT:
            return ToolRaised(message, exc_type=exc_type)
        kind = type(exc_type, (ToolRaised,), {"__module__": __name__, "__doc__": ToolRaised.__doc__})
        _RAISED_KINDS[exc_type] = kind
    return kind(message, exc_type=exc_type)
