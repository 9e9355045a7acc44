"""Which of the loader's own threads died, and of what: the fact behind a liveness probe.

A thread that applies saves, watches folders or writes history can die of an
exception nobody catches; the process then looks alive (it answers) but no
save ever goes live again, and an orchestrator that only asks "do you answer?"
never restarts it. A ``ThreadHealth`` is told which threads matter
(``watch``); one ``threading.excepthook`` (installed once, chained to the one
before it) records the death of a watched thread with its traceback and logs
it. Threads nobody watches (a tool's own) are left to the previous hook.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = ["ThreadDeath", "ThreadHealth"]

logger = logging.getLogger(__name__)

_owners: weakref.WeakKeyDictionary[threading.Thread, ThreadHealth] = weakref.WeakKeyDictionary()
_install_lock = threading.Lock()
_previous_hook: Any = None


@dataclass(frozen=True, slots=True)
class ThreadDeath:
    """A watched thread ended with an exception."""

    thread: str
    exc_type: str
    message: str
    traceback: str
    at: float

    def one_line(self) -> str:
        return f"thread {self.thread} died: {self.exc_type}: {self.message}"


class ThreadHealth:
    """The threads one loader (and what serves it) depends on, and those of them that died."""

    def __init__(self) -> None:
        self._deaths: tuple[ThreadDeath, ...] = ()
        self._lock = threading.Lock()

    def watch(self, thread: threading.Thread) -> threading.Thread:
        """Count ``thread`` among those that must not die (before or after it starts); returns it."""
        _install_hook()
        _owners[thread] = self
        return thread

    def deaths(self) -> tuple[ThreadDeath, ...]:
        """Every watched thread that died so far, oldest first."""
        return self._deaths

    @property
    def healthy(self) -> bool:
        return not self._deaths

    def _died(self, args: threading.ExceptHookArgs) -> None:
        thread = args.thread.name if args.thread is not None else "?"
        text = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
        death = ThreadDeath(thread, args.exc_type.__name__, str(args.exc_value), text, time.time())
        # Logged before it is recorded: whoever sees the death (a probe, a test) finds the log line written.
        logger.critical("thread=<%s> | a loader thread died; the process is not healthy:\n%s", thread, text)
        with self._lock:
            self._deaths = (*self._deaths, death)


def _install_hook() -> None:
    global _previous_hook
    with _install_lock:
        if _previous_hook is None:
            _previous_hook = threading.excepthook
            threading.excepthook = _excepthook


def _excepthook(args: threading.ExceptHookArgs) -> None:
    owner = _owners.get(args.thread) if args.thread is not None else None
    if owner is not None:
        owner._died(args)
    elif _previous_hook is not None:
        _previous_hook(args)
