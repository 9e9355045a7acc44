"""Which exceptions raised while tool code runs belong to the tool, and which to its caller.

A tool is code being iterated on: ``argparse`` on bad input calls
``sys.exit``, a library raises ``KeyboardInterrupt`` or ``GeneratorExit``.
None of that may stop a server or a console, so every ``BaseException`` a
tool raises becomes an error result (``Error: SystemExit - 2``), except the
two that are the caller's, not the tool's:

* a cancellation of the calling asyncio task (its call timeout, an MCP
  client's ``notifications/cancelled``, ``asyncio.run`` turning Ctrl-C into
  cancellation): the task says so (``Task.cancelling() > 0``);
* a ``KeyboardInterrupt`` in the main thread while Python's default SIGINT
  handler is installed: that is how a real Ctrl-C arrives, and there it cannot
  be told apart from a tool's own ``raise KeyboardInterrupt``, so the host's
  Ctrl-C wins. Signals only ever reach the main thread, so anywhere else (a
  worker thread, or an event loop that handles SIGINT itself) a
  ``KeyboardInterrupt`` is the tool's own.

Called from async code, the registry runs synchronous tools on worker
threads, so a Ctrl-C reaches the waiting caller, outside the tool, and simply
propagates; and every ``KeyboardInterrupt`` a tool raises on a worker thread
is an error result. A synchronous tool called with ``invoke`` in the main
thread runs there: its own ``KeyboardInterrupt`` then propagates like a Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading

from ..errors import InputRequired
from ..types import AgentTool

__all__ = ["CallAbandoned", "HostInterrupt", "belongs_to_caller", "failure_log_level", "safe_name"]


class CallAbandoned(BaseException):
    """Raised inside a call its caller gave up on (its deadline passed), to stop it.

    A ``BaseException``, so a tool's ``except Exception`` does not swallow it.
    """


class HostInterrupt(KeyboardInterrupt):
    """Ctrl-C raised by a host's own SIGINT handler (the console's ``call``): always the caller's."""


def belongs_to_caller(exc: BaseException) -> bool:
    """Whether an exception seen around tool code must propagate instead of becoming an error result."""
    if isinstance(exc, asyncio.CancelledError):
        return _task_is_cancelled()
    if isinstance(exc, HostInterrupt):
        return True
    if isinstance(exc, KeyboardInterrupt):
        return (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        )
    return False


def failure_log_level(exc: BaseException) -> int:
    """The level to log what a tool raised at: DEBUG for what is no failure of the tool's.

    A stop the host sent past the deadline (the caller already has the timeout's
    error result; the stop surfacing in the tool's frame later is bookkeeping) and
    a pause for the caller's input (``InputRequired``) are not something the tool
    did wrong; anything else is an ERROR.
    """
    return logging.DEBUG if isinstance(exc, (CallAbandoned, InputRequired)) else logging.ERROR


def _task_is_cancelled() -> bool:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: nobody can have cancelled us
        return False
    return task is not None and task.cancelling() > 0


def safe_name(tool: AgentTool) -> str:
    """The tool's name for a log line, a message or a span, even when its ``tool_name`` raises."""
    try:
        return tool.tool_name
    except Exception:
        return repr(type(tool).__name__)
