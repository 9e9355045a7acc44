"""Which fingerprint belongs to which registry generation, for results that name the tool set answering.

The loader commits the registry first and then publishes the new snapshot
together with the file statuses (content hashes) as one pair, so a snapshot
paired with statuses read at another moment could give the fingerprint of
neither tool set: an answer from the old code labelled with the new
fingerprint, or the reverse. Each generation's fingerprint is taken from the
loader's published pair when it announces the batch, and a result that ran on
a generation not yet published (the moment between the commit and the
publication) waits for it, briefly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from ..fingerprint import FingerprintCache
from ..registry.snapshot import RegistrySnapshot

if TYPE_CHECKING:
    from ..reload.loader import ToolLoader

__all__ = ["SETTLE_TIMEOUT", "GenerationFingerprints"]

SETTLE_TIMEOUT = 1.0
"""Seconds a result waits for the loader to publish the statuses of the registry generation it ran on."""

_KEPT = 64  # generations remembered: calls pin older snapshots, briefly


class GenerationFingerprints:
    """Fingerprints per registry generation; without a loader, names and specs only (nothing to wait for)."""

    def __init__(self, loader: ToolLoader | None) -> None:
        self._loader = loader
        self._cache = FingerprintCache()
        self._settled: dict[int, str] = {}
        # Without a loader a snapshot's fingerprint depends on the snapshot alone (immutable):
        # the last one is kept, so a call or a listing between two reloads costs a lookup, not O(tools).
        self._last: tuple[RegistrySnapshot, str] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        if loader is not None:
            self._settle()
            self._unsubscribe = loader.subscribe(self._settle)

    def __call__(self, snapshot: RegistrySnapshot) -> str:
        """The fingerprint of ``snapshot``: as recorded when it settled, else the best current estimate."""
        if self._loader is None:
            last = self._last
            if last is not None and last[0] is snapshot:
                return last[1]
            value = self._cache(snapshot)
            self._last = (snapshot, value)
            return value
        settled = self._settled.get(snapshot.generation)
        if settled is not None:
            return settled
        return self._cache(snapshot, self._loader.status(include_removed=False))

    def ready(self, snapshot: RegistrySnapshot) -> str | None:
        """The fingerprint of ``snapshot`` if nothing needs waiting for (else None: await ``settled``)."""
        if self._loader is None:
            return self(snapshot)
        return self._settled.get(snapshot.generation)

    async def settled(self, snapshot: RegistrySnapshot) -> str:
        """The fingerprint of ``snapshot`` once its generation settled (at most ``SETTLE_TIMEOUT`` later)."""
        if self._loader is not None and snapshot.generation not in self._settled:
            with anyio.move_on_after(SETTLE_TIMEOUT):
                while snapshot.generation not in self._settled:
                    await anyio.sleep(0.001)
        return self(snapshot)

    def close(self) -> None:
        """Stop following the loader."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _settle(self, _event: object = None) -> None:
        """Record the fingerprint of the generation the loader published with its file statuses."""
        assert self._loader is not None
        generation, value = self._loader.published_fingerprint()
        if generation in self._settled:
            return
        recent = {g: v for g, v in self._settled.items() if g > generation - _KEPT}
        self._settled = {**recent, generation: value}
