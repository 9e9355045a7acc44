"""Reusing the input model built for an identical signature.

Building a tool's pydantic model and its JSON Schema is most of what creating a
function tool costs, and the same signatures come back all the time: a file
saved again with only its body changed, many small tools taking ``(a: int, b: int)``
or nothing at all. Such a signature gets the model built the first time.

A signature is only cached when its key pins down everything the model and
schema are built from, by value, without holding on to user objects: parameter
names in order, documented descriptions, defaults that are JSON scalars, and
annotations made of standard-library types, ``Literal`` scalars and
``Annotated`` descriptions. User classes (models, dataclasses, enums), ``Field(...)``
defaults and other metadata are built every time: they may change between
reloads, or hold state the key cannot see.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Annotated, Any, Generic, Literal, TypeVar, get_args, get_origin

__all__ = ["LruCache", "signature_key"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_STABLE_MODULES = frozenset(
    {"builtins", "typing", "typing_extensions", "types", "collections.abc", "datetime", "decimal", "uuid"}
)
_LITERAL_TYPES = frozenset({str, int, bool, bytes, type(None)})
_DEFAULT_TYPES = frozenset({str, int, bool, type(None)})
_EMPTY = inspect.Parameter.empty


class _Uncacheable(Exception):
    """Raised while building a key for something the key cannot describe by value."""


def signature_key(
    parameters: Sequence[inspect.Parameter], hints: Mapping[str, Any], doc_params: Mapping[str, str]
) -> Hashable | None:
    """A key equal for two signatures exactly when they build the same model; None when unsure."""
    try:
        return tuple(
            (
                param.name,
                _hint_key(hints.get(param.name, Any)),
                _default_key(param.default),
                doc_params.get(param.name),
            )
            for param in parameters
        )
    except (_Uncacheable, TypeError):
        return None


def _stable(obj: Any) -> bool:
    return getattr(obj, "__module__", None) in _STABLE_MODULES


def _hint_key(hint: Any) -> Hashable:
    origin = get_origin(hint)
    if origin is None:
        if isinstance(hint, type) and _stable(hint):
            return hint
        raise _Uncacheable
    if not _stable(origin):
        raise _Uncacheable
    args = get_args(hint)
    if origin is Literal:
        return (type(hint), origin, tuple(_literal_key(value) for value in args))
    if origin is Annotated:
        return (type(hint), origin, _hint_key(args[0]), tuple(_metadata_key(meta) for meta in args[1:]))
    return (type(hint), origin, tuple(_arg_key(arg) for arg in args))


def _arg_key(arg: Any) -> Hashable:
    if arg is Ellipsis:
        return ("...",)
    return _hint_key(arg)


def _literal_key(value: Any) -> Hashable:
    if type(value) not in _LITERAL_TYPES:
        raise _Uncacheable
    return (type(value), value)


def _metadata_key(meta: Any) -> Hashable:
    if type(meta) is not str:
        raise _Uncacheable
    return meta


def _default_key(default: Any) -> Hashable:
    if default is _EMPTY:
        return ("required",)
    kind = type(default)
    if kind in _DEFAULT_TYPES:
        return (kind, default)
    if kind is float:
        return (kind, repr(default))  # 0.0 and -0.0 are equal, but are not the same default
    raise _Uncacheable


class LruCache(Generic[K, V]):
    """A small thread-safe cache that forgets the least recently used entry past ``maxsize``."""

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The cached value, marked as recently used; None when absent."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Store ``value``, dropping the oldest entry when full."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
