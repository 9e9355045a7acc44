"""``Listeners``: who is told of one kind of news, and how they are told."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Listeners"]

T = TypeVar("T")


class Listeners(Generic[T]):
    """The subscribers to one kind of news: file events, published records, change sets, finished calls.

    Subscribing swaps in a new tuple under a lock, so ``tell`` reads one
    snapshot without locking: a listener that subscribes or unsubscribes while
    being told changes who hears the next news, not this one.
    """

    __slots__ = ("_lock", "_logger", "_subscribed", "_what")

    def __init__(self, what: str, logger: logging.Logger) -> None:
        """``what`` names these listeners in the log line of one that raised (``call`` listener)."""
        self._what = what
        self._logger = logger
        self._lock = threading.Lock()
        self._subscribed: tuple[tuple[object, Callable[[T], None]], ...] = ()

    def subscribe(self, listener: Callable[[T], None]) -> Callable[[], None]:
        """Call ``listener`` with all future news; returns the function that ends this subscription."""
        token = object()
        with self._lock:
            self._subscribed = (*self._subscribed, (token, listener))

        def unsubscribe() -> None:
            with self._lock:
                self._subscribed = tuple(item for item in self._subscribed if item[0] is not token)

        return unsubscribe

    def __bool__(self) -> bool:
        """Whether anyone listens (a caller may skip building news nobody hears)."""
        return bool(self._subscribed)

    def tell(self, news: T) -> None:
        """Call every listener with ``news``, in the order they subscribed; one that raises is logged."""
        for _, listener in self._subscribed:
            try:
                listener(news)
            except Exception:
                self._logger.exception("listener=<%r> | %s listener raised", listener, self._what)
