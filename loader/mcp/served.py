"""What the server serves right now: one post-commit record, so a result names the tool set that ran it.

With a loader, the server answers from the loader's published record (a
registry snapshot with the file statuses behind it, ``ToolLoader.published``)
and learns of changes when the loader publishes, not when the registry
commits: a call and a listing take one record and read the tools and the
fingerprint from it, so nothing has to wait for the two to agree. Without a
loader, a record is made from the registry's snapshot alone (names and specs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from immutables import Map

from ..fingerprint import FingerprintCache
from ..registry.tool_registry import ToolRegistry
from ..reload.published import Published

if TYPE_CHECKING:
    from ..reload.loader import ToolLoader

__all__ = ["ServedTools"]


class ServedTools:
    """The record to answer from now, and a way to hear when it changes (its generation)."""

    def __init__(self, registry: ToolRegistry, loader: ToolLoader | None) -> None:
        self._registry = registry
        self._loader = loader
        self._cache = FingerprintCache()
        # Without a loader a record depends on the snapshot alone (immutable): the last one is kept,
        # so a call or a listing between two commits costs a lookup, not a fingerprint.
        self._last: Published | None = None

    def current(self) -> Published:
        """The record every answer of one request is taken from."""
        if self._loader is not None:
            return self._loader.published
        snapshot = self._registry.snapshot()
        last = self._last
        if last is not None and last.snapshot is snapshot:
            return last
        record = self._last = Published(snapshot, Map(), self._cache)
        return record

    def subscribe(self, listener: Callable[[int], None]) -> Callable[[], None]:
        """Call ``listener`` with each new record's generation; returns the function that unsubscribes."""
        if self._loader is not None:
            return self._loader.subscribe_published(lambda record: listener(record.generation))
        return self._registry.subscribe(lambda change_set: listener(change_set.generation))
