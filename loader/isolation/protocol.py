"""The messages between the loader and its worker processes.

Framing is ``multiprocessing.connection.Connection``: a length-prefixed
message per ``send_bytes``, over a plain pipe, with ``poll`` for deadlines.
The payload is JSON, not pickle, in both directions: unpickling what a worker
sends would let tool code run in the loader's process, which would make any
sandbox put around the worker (see the README) pointless. Bytes (image and
document results, source files) travel as ``{"$bytes": base64}``.
"""

from __future__ import annotations

import base64
import json
from multiprocessing.connection import Connection
from typing import Any, Final

__all__ = [
    "MAX_MESSAGE_BYTES",
    "Channel",
    "ChannelClosed",
    "MessageTooLarge",
    "decode_value",
    "encode_value",
    "json_safe_state",
    "wire_limit",
]

MAX_MESSAGE_BYTES: Final = 256 * 1024 * 1024
"""A worker's message larger than this is refused rather than read into memory."""

_BYTES_TAG: Final = "$bytes"


class ChannelClosed(Exception):
    """The other end went away (the worker exited, or the loader closed the pipe)."""


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
    """One end of a worker pipe: JSON objects in, JSON objects out."""

    def __init__(self, reader: Connection, writer: Connection) -> None:
        self._reader = reader
        self._writer = writer

    def send(self, message: dict[str, Any], limit: int | None = None) -> None:
        """Send one message; ``ChannelClosed`` if the other end is gone, ``MessageTooLarge`` (nothing
        sent) if it is longer than ``limit`` bytes."""
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        if limit is not None and len(data) > limit:
            raise MessageTooLarge(len(data), limit)
        try:
            self._writer.send_bytes(data)
        except (OSError, ValueError) as exc:
            raise ChannelClosed(str(exc)) from exc

    def poll(self, timeout: float | None) -> bool:
        """Whether a message (or the end of the pipe) is ready within ``timeout`` seconds."""
        try:
            return self._reader.poll(timeout)
        except (OSError, ValueError) as exc:
            raise ChannelClosed(str(exc)) from exc

    def receive(self, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
        """The next message; ``ChannelClosed`` at the end of the pipe or on a malformed message,
        ``MessageTooLarge`` for one longer than ``limit`` bytes (its length is read, its body never)."""
        try:
            data = self._reader.recv_bytes(limit)
        except OSError as exc:
            if "bad message length" in str(exc):
                raise MessageTooLarge(None, limit) from exc
            raise ChannelClosed(str(exc) or "end of pipe") from exc
        except (EOFError, ValueError) as exc:
            raise ChannelClosed(str(exc) or "end of pipe") from exc
        try:
            message = json.loads(data)
        except ValueError as exc:
            raise ChannelClosed(f"malformed message: {exc}") from exc
        if not isinstance(message, dict):
            raise ChannelClosed("malformed message: not an object")
        return message

    def close(self) -> None:
        """Close both directions."""
        for connection in (self._reader, self._writer):
            try:
                connection.close()
            except OSError:
                pass
