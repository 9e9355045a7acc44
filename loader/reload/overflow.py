"""Hearing that the kernel's inotify queue overflowed, which watchdog drops without a word.

When a burst of changes (a ``git checkout`` of thousands of files) outruns the
reader, the kernel stops queueing events for that inotify instance and queues
one ``IN_Q_OVERFLOW`` record instead: every change after it, until the reader
catches up, has no event at all. watchdog (up to 6.0 at least) parses that
record and skips it (its watch descriptor is -1), so nothing downstream learns
that events were lost.

``watch_overflows`` wraps watchdog's parser of raw inotify buffers once per
process and calls every subscriber when an overflow record passes through.
The record names no watch, so every subscriber hears of every overflow: a
loader that did not overflow only reconciles its folders once more.
Subscribers are called on watchdog's reader thread and must return quickly.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["IN_Q_OVERFLOW", "overflows_seen", "records_read", "watch_overflows"]

logger = logging.getLogger(__name__)

IN_Q_OVERFLOW = 0x4000
"""The inotify mask bit of the record the kernel queues in place of the events it drops."""

_lock = threading.Lock()
_subscribers: dict[int, Callable[[], None]] = {}
_ids = itertools.count()
_seen = 0
_records = 0
_MARK = "_tool_loader_overflows"
"""Set on our wrapper, so it is installed once however many loaders start."""


def overflows_seen() -> int:
    """How many overflow records this process has read (for benchmarks and logs)."""
    return _seen


def records_read() -> int:
    """How many raw inotify records this process has read, overflows included (for benchmarks)."""
    return _records


def watch_overflows(callback: Callable[[], None]) -> Callable[[], None]:
    """Call ``callback`` whenever an inotify queue of this process overflows; returns an unsubscribe.

    A no-op where watchdog has no inotify reader (not Linux): other observers
    do not queue events in the kernel.
    """
    _install()
    key = next(_ids)
    with _lock:
        _subscribers[key] = callback

    def unsubscribe() -> None:
        with _lock:
            _subscribers.pop(key, None)

    return unsubscribe


def _overflowed() -> None:
    global _seen
    with _lock:
        _seen += 1
        callbacks = list(_subscribers.values())
    logger.warning("overflows=<%d> | the kernel's file event queue overflowed: events were lost", _seen)
    for callback in callbacks:
        try:
            callback()
        except Exception:
            logger.exception("could not handle an event queue overflow")


def _count(records: int) -> None:
    global _records
    with _lock:
        _records += records


def _install() -> None:
    """Wrap ``Inotify._parse_event_buffer``, once per process."""
    try:
        from watchdog.observers.inotify_c import Inotify
    except (ImportError, OSError):  # no inotify here (or no libc to load it from)
        return
    with _lock:
        current = Inotify.__dict__.get("_parse_event_buffer")
        if not isinstance(current, staticmethod) or getattr(current.__func__, _MARK, False):
            return
        parse = current.__func__

        def parse_and_hear_overflows(event_buffer: bytes) -> Iterator[tuple[int, int, int, bytes]]:
            count = 0
            try:
                for record in parse(event_buffer):
                    count += 1
                    if record[1] & IN_Q_OVERFLOW:
                        _overflowed()
                    yield record
            finally:
                _count(count)

        wrapper: Any = parse_and_hear_overflows
        setattr(wrapper, _MARK, True)
        setattr(Inotify, "_parse_event_buffer", staticmethod(wrapper))  # noqa: B010 (a private method)
