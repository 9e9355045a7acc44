"""Sorted name listings that a registry commit derives from its predecessor's, lazily.

A commit must cost what it changed, not what the registry holds, yet readers
want ``names()`` sorted. So a commit records only its delta against the last
listing that was worked out (``NameListing``); the first reader of the new
snapshot applies that delta with ``bisect`` to a copy of the old tuple (one
C-level copy plus a few insertions, no re-sort), and later readers get the
cached tuple. A delta that grows past ``DELTA_LIMIT`` names (many commits with
nobody listing in between, or one big batch) falls back to a plain sort.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping

__all__ = ["DELTA_LIMIT", "NameListing"]

DELTA_LIMIT = 256
"""Beyond this many changed names, sorting afresh is as cheap as patching."""


class NameListing:
    """How to get one snapshot's sorted names: a cached tuple, or a base tuple plus a delta.

    ``delta`` maps a name to whether it is present (True) or absent (False)
    relative to ``base``; None means "sort the keys yourself".
    """

    __slots__ = ("_base", "_delta", "_sorted")

    def __init__(
        self,
        sorted_names: tuple[str, ...] | None = None,
        *,
        base: tuple[str, ...] | None = None,
        delta: Mapping[str, bool] | None = None,
    ) -> None:
        self._sorted = sorted_names
        self._base = base
        self._delta = delta

    @property
    def known(self) -> tuple[str, ...] | None:
        """The sorted tuple if it has been worked out already."""
        return self._sorted

    def successor(self, added: Iterable[str], removed: Iterable[str]) -> NameListing:
        """The listing of the next commit, which added and removed these names (O(changes))."""
        if self._sorted is not None:
            base, delta = self._sorted, {}
        elif self._base is not None and self._delta is not None:
            base, delta = self._base, dict(self._delta)
        else:
            return NameListing()
        for name in removed:
            delta[name] = False
        for name in added:
            delta[name] = True
        if len(delta) > DELTA_LIMIT:
            return NameListing()
        return NameListing(base=base, delta=delta)

    def resolve(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The sorted names; ``keys`` (the snapshot's names, any order) is read only without a base.

        Racing readers may both compute it; they compute the same tuple.
        """
        names = self._sorted
        if names is not None:
            return names
        base, delta = self._base, self._delta
        if base is None or delta is None:
            names = tuple(sorted(keys))
        else:
            patched = list(base)
            for name, present in delta.items():
                index = bisect_left(patched, name)
                found = index < len(patched) and patched[index] == name
                if present and not found:
                    patched.insert(index, name)
                elif not present and found:
                    del patched[index]
            names = tuple(patched)
        self._sorted = names
        self._base = self._delta = None
        return names
