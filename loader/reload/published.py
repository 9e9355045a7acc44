"""The loader's post-commit record: a registry snapshot and the file statuses that go with it, as one object.

The registry commits first; the loader then works out the file statuses of
the batch and publishes both together. A reader that paired a snapshot with
statuses read at another moment could name a tool set that never existed (old
code labelled with new content hashes, or the reverse), so readers that need
both (the MCP server's fingerprints, probes, metrics) take one ``Published``
and read everything from it. Its fingerprint is worked out on first read.
"""

from __future__ import annotations

from pathlib import Path

from immutables import Map

from ..fingerprint import FingerprintCache
from ..registry.snapshot import RegistrySnapshot
from ..status import FileStatus

__all__ = ["Published"]


class Published:
    """One post-commit record: ``snapshot``, its files' ``statuses``, and their fingerprint."""

    __slots__ = ("_cache", "_fingerprint", "snapshot", "statuses")

    def __init__(
        self, snapshot: RegistrySnapshot, statuses: Map[Path, FileStatus], cache: FingerprintCache
    ) -> None:
        self.snapshot = snapshot
        self.statuses = statuses
        self._cache = cache
        self._fingerprint: str | None = None

    @property
    def generation(self) -> int:
        """The registry generation this record was published for."""
        return self.snapshot.generation

    @property
    def fingerprint(self) -> str:
        """sha256 of the tool set: names, specs and the content hashes of their files (computed once)."""
        value = self._fingerprint
        if value is None:
            # Two first readers may both compute it: the same value, so no lock on the read path.
            value = self._fingerprint = self._cache(self.snapshot, self.statuses.values())
        return value

    def __repr__(self) -> str:
        return f"<Published generation={self.generation} files={len(self.statuses)}>"
