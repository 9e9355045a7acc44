"""Where a tool's exception was raised, for ``call``: ``raised at tools/weather.py:12 in forecast``.

A tool that raises becomes an error result (the model reads it); the tool
kinds log the exception itself at ERROR. ``call`` catches those records here
instead of printing them, so it can name the raising line of the tool's own
code, and print the whole traceback only with ``-v``.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from ..calls.containment import CallAbandoned
from .render import TOOL_LOGGERS, location

__all__ = ["RaiseCatcher", "formatted_traceback", "raising_frame"]


class RaiseCatcher(logging.Handler):
    """Holds the last exception the tool loggers reported while installed (a context manager)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.exception: BaseException | None = None
        self._saved: list[tuple[logging.Logger, bool, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the exception; print nothing (a call stopped at its deadline raised nothing of its own)."""
        if (
            record.exc_info
            and record.exc_info[1] is not None
            and not isinstance(record.exc_info[1], CallAbandoned)
        ):
            self.exception = record.exc_info[1]

    def __enter__(self) -> RaiseCatcher:
        for name in TOOL_LOGGERS:
            logger = logging.getLogger(name)
            self._saved.append((logger, logger.propagate, logger.level))
            logger.addHandler(self)
            logger.propagate = False
            logger.setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc: object) -> None:
        for logger, propagate, level in self._saved:
            logger.removeHandler(self)
            logger.propagate = propagate
            logger.setLevel(level)
        self._saved.clear()


def raising_frame(exc: BaseException, roots: Sequence[Path]) -> str | None:
    """``file:line in function`` of the innermost frame in a watched folder (else the innermost frame)."""
    frames = list(
        traceback.walk_tb(exc.__traceback__ if isinstance(exc.__traceback__, TracebackType) else None)
    )
    if not frames:
        return None
    prefixes = tuple(str(root) + "/" for root in roots)
    chosen = next(
        (pair for pair in reversed(frames) if pair[0].f_code.co_filename.startswith(prefixes)), frames[-1]
    )
    frame, line = chosen
    return f"{location(frame.f_code.co_filename, line)} in {frame.f_code.co_name}"


def formatted_traceback(exc: BaseException) -> str:
    """The whole traceback, as Python prints it."""
    return "".join(traceback.format_exception(exc)).rstrip()
