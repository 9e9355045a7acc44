"""The messages between the loader and its worker processes.

Framing is a 4-byte big-endian length and that many bytes, over a plain pipe.
Every frame is bounded (``MAX_MESSAGE_BYTES``; a call's reply by ``wire_limit``)
and every read in the loader has a deadline, so a worker that stops half-way
through a frame, or announces a huge one, costs its own worker and nothing else.
The payload is plain data, never pickle, in both directions: unpickling what a
worker sends would let tool code run in the loader's process, which would make
any sandbox put around the worker (see the README) pointless. It is MessagePack
(``msgspec``, the ``msgspec`` extra) when installed, else JSON with bytes (image
and document results, source files) as ``{"$bytes": base64}``; a frame says
which by its first byte, so a value MessagePack cannot hold (an integer over 64
bits) crosses as JSON. Either way a message decodes to the same plain data:
``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, lists, and dicts
with ``str`` keys (``encode_value`` makes any value so); anything else a
worker sends is refused as malformed.
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

try:
    import msgspec
except ImportError:  # the msgspec extra is not installed: JSON frames
    msgspec = None  # type: ignore[assignment]

__all__ = [
    "MALFORMED",
    "MAX_MESSAGE_BYTES",
    "Channel",
    "ChannelClosed",
    "ChannelTimeout",
    "MessageTooLarge",
    "encode_value",
    "json_safe_state",
    "wire_limit",
]

MAX_MESSAGE_BYTES: Final = 256 * 1024 * 1024
"""A worker's message larger than this is refused rather than read into memory."""

_BYTES_TAG: Final = "$bytes"
_HEADER: Final = struct.Struct("!I")
MALFORMED: Final = "malformed message"
"""How a ``ChannelClosed`` for a message that arrived whole but does not decode begins."""
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


_SCALARS: Final = frozenset({type(None), bool, int, float, str, bytes})


def encode_value(value: Any) -> Any:
    """``value`` as plain data: tuples as lists, keys as text, other objects as their repr.

    Subclasses of ``str``, ``int`` and ``float`` become the plain type (their
    value, as JSON would write it); ``bytearray`` and ``memoryview`` become bytes.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value  # non-finite floats cross as Python reads them back
    if kind is dict:
        return {key if type(key) is str else str(key): encode_value(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [encode_value(item) for item in value]
    return _encode_other(value)


def _encode_other(value: Any) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        return {str(key): encode_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(item) for item in value]
    return repr(value)


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


def _tag_bytes(value: object) -> dict[str, str]:
    if isinstance(value, bytes):
        return {_BYTES_TAG: base64.b64encode(value).decode("ascii")}
    raise TypeError(f"{type(value).__name__} is not plain data (protocol.encode_value makes it so)")


def _untag_bytes(value: dict[str, Any]) -> Any:
    if len(value) == 1 and isinstance(value.get(_BYTES_TAG), str):
        return base64.b64decode(value[_BYTES_TAG])
    return value


def _json_dumps(message: Message) -> bytes:
    return json.dumps(message, separators=(",", ":"), default=_tag_bytes).encode("utf-8")


def _json_loads(data: bytes) -> Any:
    return json.loads(data, object_hook=_untag_bytes)


def _refuse_extension(code: int, data: memoryview) -> Any:
    raise ValueError(f"MessagePack extension type {code}")


if msgspec is not None:
    _msgpack_encode = msgspec.msgpack.Encoder().encode
    _msgpack_decode = msgspec.msgpack.Decoder(ext_hook=_refuse_extension).decode

    def _encode(message: Message) -> bytes:
        """One message as a frame's body: MessagePack, or JSON for what MessagePack cannot hold."""
        try:
            return _msgpack_encode(message)
        except (OverflowError, TypeError):  # an int over 64 bits; TypeError: not plain data
            return _json_dumps(message)

    def _decode(data: bytes, trusted: bool) -> Any:
        """A frame's body as plain data (``ValueError`` if it is neither form, or holds anything else)."""
        if data[:1] == b"{":  # a MessagePack map never starts with this byte
            return _json_loads(data)
        try:
            message = _msgpack_decode(data)
        except msgspec.DecodeError as exc:
            raise ValueError(str(exc)) from None
        if not trusted:
            _check_plain(message)
        return message

else:
    _encode = _json_dumps

    def _decode(data: bytes, trusted: bool) -> Any:
        """A frame's body as plain data (``ValueError`` if it is not JSON)."""
        return _json_loads(data)


def _check_plain(value: Any) -> None:
    """``ValueError`` unless ``value`` is plain data (MessagePack can also carry timestamps and
    non-text keys, which no well-behaved end sends)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise ValueError(f"a key of type {type(key).__name__}")
            if type(item) not in _SCALARS:
                _check_plain(item)
    elif kind is list:
        for item in value:
            if type(item) not in _SCALARS:
                _check_plain(item)
    elif kind not in _SCALARS:
        raise ValueError(f"a value of type {kind.__name__}")


class Channel:
    """One end of a worker pipe: plain-data objects in and out, each a length-prefixed frame.

    Reads never trust the other end to finish what it started: with a
    ``deadline`` a frame that stops half-way raises ``ChannelTimeout`` (the
    stream is then out of step, so the caller stops that worker), and a length
    over ``limit`` is refused before its body is read. Writes to a
    non-blocking end wait for room until their ``deadline`` the same way.
    ``trusted`` (a worker's end: the loader wrote what it reads) skips the
    check that a message holds plain data only.
    """

    def __init__(self, read_fd: int, write_fd: int, *, trusted: bool = False) -> None:
        self._trusted = trusted
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._closed = False
        os.set_blocking(read_fd, False)  # a read takes what is there; only a wait blocks (to a deadline)
        self._readable = select.poll()
        self._readable.register(read_fd, select.POLLIN)
        self._writable = select.poll()
        self._writable.register(write_fd, select.POLLOUT)

    def send(self, message: Message, limit: int | None = None, deadline: float | None = None) -> None:
        """Send one message; ``ChannelClosed`` if the other end is gone, ``MessageTooLarge`` (nothing
        sent) if it is longer than ``limit`` bytes, ``ChannelTimeout`` if the other end took too little
        of it by ``deadline``."""
        data = _encode(message)
        if len(data) > min(limit or MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES):
            raise MessageTooLarge(len(data), min(limit or MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES))
        view = memoryview(_HEADER.pack(len(data)) + data)
        try:
            while view:
                try:
                    written = os.write(self._write_fd, view[:_CHUNK])
                except BlockingIOError:
                    self._wait(self._writable, deadline)
                    continue
                view = view[written:]
        except (OSError, ValueError) as exc:
            raise ChannelClosed(str(exc)) from exc

    def poll(self, timeout: float | None) -> bool:
        """Whether a message (or the end of the pipe) starts within ``timeout`` seconds."""
        try:
            return bool(self._readable.poll(_milliseconds(timeout)))
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
            message = _decode(data, self._trusted)
        except ValueError as exc:
            raise ChannelClosed(f"{MALFORMED}: {exc}") from exc
        if not isinstance(message, dict):
            raise ChannelClosed(f"{MALFORMED}: not an object")
        return message

    def _read(self, size: int, deadline: float | None) -> bytes:
        chunks: list[bytes] = []
        while size:
            try:
                data = os.read(self._read_fd, min(size, _CHUNK))
            except BlockingIOError:  # nothing there yet: wait for it, until the deadline
                self._wait(self._readable, deadline)
                continue
            if not data:
                raise ChannelClosed("end of pipe")
            chunks.append(data)
            size -= len(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def hung_up(self) -> bool:
        """Whether the other end has closed its end of the pipe (it exited), without waiting.

        Like every read, for the channel's one user at a time (a ``poll`` object is not shared).
        """
        try:
            return any(event & select.POLLHUP for _, event in self._readable.poll(0))
        except (OSError, ValueError):
            return True

    @staticmethod
    def _wait(waiter: select.poll, deadline: float | None) -> None:
        remaining = None if deadline is None else deadline - time.monotonic()
        if (remaining is not None and remaining <= 0) or not waiter.poll(_milliseconds(remaining)):
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


def _milliseconds(timeout: float | None) -> int | None:
    """A ``poll`` timeout: None waits, anything else is whole milliseconds, rounded up."""
    return None if timeout is None else max(0, math.ceil(timeout * 1000))
