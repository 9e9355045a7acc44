"""The messages between the loader and its worker processes.

Framing is a 4-byte big-endian length and that many bytes, over a plain pipe.
Every frame is bounded (``MAX_MESSAGE_BYTES``; a call's reply by ``wire_limit``)
and every read in the loader has a deadline, so a worker that stops half-way
through a frame, or announces a huge one, costs its own worker and nothing else.
The payload is JSON, not pickle, in both directions: unpickling what a worker
sends would let tool code run in the loader's process, which would make any
sandbox put around the worker (see the README) pointless. Bytes (image and
document results, source files) travel as ``{"$bytes": base64}``.
"""

from __future__ import annotations

import base64
import json
import math
import os
import select
import struct
import time
from typing import Any, Final

from .messages import Message

__all__ = [
    "MAX_MESSAGE_BYTES",
    "Channel",
    "ChannelClosed",
    "ChannelTimeout",
    "MessageTooLarge",
    "decode_value",
    "encode_value",
    "json_safe_state",
    "wire_limit",
]

MAX_MESSAGE_BYTES: Final = 256 * 1024 * 1024
"""A worker's message larger than this is refused rather than read into memory."""

_BYTES_TAG: Final = "$bytes"
_HEADER: Final = struct.Struct("!I")
_CHUNK: Final = 1024 * 1024


class ChannelClosed(Exception):
    """The other end went away (the worker exited, or the loader closed the pipe)."""


class ChannelTimeout(Exception):
    """A message was not complete (or not taken) by its deadline: the pipe is out of step from here on."""


class MessageTooLarge(Exception):
    """A message over the size allowed: not sent, or (receiving) not read, and the pipe closed."""

    def __init__(self, size: int | None, limit: int) -> None:
        super().__init__(f"a message of {size or 'more than ' + format(limit, ',')} bytes, over {limit:,}")
        self.size = size
        self.limit = limit


def wire_limit(max_result_bytes: int | None) -> int:
    """The largest call message for a result limit: JSON and base64 framing on top of the content."""
    if max_result_bytes is None:
        return MAX_MESSAGE_BYTES
    return 2 * max_result_bytes + 1024 * 1024


def encode_value(value: Any) -> Any:
    """``value`` as JSON-compatible data; bytes tagged, tuples as lists, other objects as their repr."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value  # non-finite floats cross as JSON's NaN/Infinity, as Python reads them back
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {_BYTES_TAG: base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {str(key): encode_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(item) for item in value]
    return repr(value)


def decode_value(value: Any) -> Any:
    """The inverse of ``encode_value`` for bytes (everything else is already plain data)."""
    if isinstance(value, dict):
        if len(value) == 1 and _BYTES_TAG in value and isinstance(value[_BYTES_TAG], str):
            return base64.b64decode(value[_BYTES_TAG])
        return {key: decode_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_value(item) for item in value]
    return value


def json_safe_state(state: dict[str, Any] | None) -> dict[str, Any]:
    """The parts of an invocation state that can cross to a worker.

    ``agent`` never crosses (a live object of the caller's process); any other
    entry crosses only if it is plain JSON data, and is dropped otherwise.
    """
    kept: dict[str, Any] = {}
    for key, value in (state or {}).items():
        if key == "agent" or not isinstance(key, str):
            continue
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        kept[key] = value
    return kept


class Channel:
    """One end of a worker pipe: JSON objects in, JSON objects out, each a length-prefixed frame.

    Reads never trust the other end to finish what it started: with a
    ``deadline`` a frame that stops half-way raises ``ChannelTimeout`` (the
    stream is then out of step, so the caller stops that worker), and a length
    over ``limit`` is refused before its body is read. Writes to a
    non-blocking end wait for room until their ``deadline`` the same way.
    """

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._closed = False

    def send(self, message: Message, limit: int | None = None, deadline: float | None = None) -> None:
        """Send one message; ``ChannelClosed`` if the other end is gone, ``MessageTooLarge`` (nothing
        sent) if it is longer than ``limit`` bytes, ``ChannelTimeout`` if the other end took too little
        of it by ``deadline``."""
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        if len(data) > min(limit or MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES):
            raise MessageTooLarge(len(data), min(limit or MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES))
        view = memoryview(_HEADER.pack(len(data)) + data)
        try:
            while view:
                try:
                    written = os.write(self._write_fd, view[:_CHUNK])
                except BlockingIOError:
                    self._wait(self._write_fd, select.POLLOUT, deadline)
                    continue
                view = view[written:]
        except (OSError, ValueError) as exc:
            raise ChannelClosed(str(exc)) from exc

    def poll(self, timeout: float | None) -> bool:
        """Whether a message (or the end of the pipe) starts within ``timeout`` seconds."""
        try:
            return _ready(self._read_fd, select.POLLIN, timeout)
        except (OSError, ValueError) as exc:
            raise ChannelClosed(str(exc)) from exc

    def receive(self, limit: int = MAX_MESSAGE_BYTES, deadline: float | None = None) -> dict[str, Any]:
        """The next message; ``ChannelClosed`` at the end of the pipe or on a malformed message,
        ``MessageTooLarge`` for one longer than ``limit`` bytes (its length is read, its body never),
        ``ChannelTimeout`` if it is not complete by ``deadline`` (a ``time.monotonic`` time)."""
        try:
            (size,) = _HEADER.unpack(self._read(_HEADER.size, deadline))
            if size > limit:
                raise MessageTooLarge(size, limit)
            data = self._read(size, deadline)
        except (OSError, ValueError) as exc:
            raise ChannelClosed(str(exc) or "end of pipe") from exc
        try:
            message = json.loads(data)
        except ValueError as exc:
            raise ChannelClosed(f"malformed message: {exc}") from exc
        if not isinstance(message, dict):
            raise ChannelClosed("malformed message: not an object")
        return message

    def _read(self, size: int, deadline: float | None) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        done = 0
        while done < size:
            if deadline is not None:
                self._wait(self._read_fd, select.POLLIN, deadline)
            got = os.readv(self._read_fd, [view[done : min(size, done + _CHUNK)]])
            if got == 0:
                raise ChannelClosed("end of pipe")
            done += got
        return bytes(buffer)

    @staticmethod
    def _wait(fd: int, event: int, deadline: float | None) -> None:
        remaining = None if deadline is None else deadline - time.monotonic()
        if (remaining is not None and remaining <= 0) or not _ready(fd, event, remaining):
            raise ChannelTimeout("the other end did not finish a message in time")

    def close(self) -> None:
        """Close both directions."""
        if self._closed:
            return
        self._closed = True
        for fd in (self._read_fd, self._write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def _ready(fd: int, event: int, timeout: float | None) -> bool:
    """Whether ``fd`` is ready for ``event`` (or at its end) within ``timeout`` seconds (None: wait)."""
    waiter = select.poll()
    waiter.register(fd, event)
    return bool(waiter.poll(None if timeout is None else max(0, math.ceil(timeout * 1000))))
