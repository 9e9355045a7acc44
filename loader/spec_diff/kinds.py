"""How much one tool's spec change matters to its callers: the kinds, their order, one tool's verdict.

``SpecChangeKind`` names the kinds and ``SEVERITY`` ranks them; ``SpecChange``
is the verdict for one tool, with one reason per difference. ``SpecNotes``
collects reasons while ``loader.spec_diff.schemas`` walks two schemas, and turns
them into that verdict. ``loader.spec_diff.specs`` is the entry point.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["SEVERITY", "SpecChange", "SpecChangeKind", "SpecNotes"]


class SpecChangeKind(StrEnum):
    """How much a spec change matters to existing callers, most severe first in ``SEVERITY``."""

    BREAKING = "breaking"
    ADDITIVE = "additive"
    COSMETIC = "cosmetic"
    NONE = "none"


SEVERITY = {
    SpecChangeKind.NONE: 0,
    SpecChangeKind.COSMETIC: 1,
    SpecChangeKind.ADDITIVE: 2,
    SpecChangeKind.BREAKING: 3,
}
"""Each kind's rank: the higher, the more it matters to callers of the old spec."""


@dataclass(frozen=True, slots=True)
class SpecChange:
    """The classification of one tool's spec change.

    ``reasons`` holds one short line per difference, most severe first;
    ``reason_kinds`` gives the kind of each line (same length and order).
    """

    kind: SpecChangeKind = SpecChangeKind.NONE
    reasons: tuple[str, ...] = ()
    reason_kinds: tuple[SpecChangeKind, ...] = ()

    def reasons_of(self, kind: SpecChangeKind) -> tuple[str, ...]:
        """The reasons of one kind, e.g. only what breaks callers."""
        return tuple(r for r, k in zip(self.reasons, self.reason_kinds, strict=False) if k is kind)

    @property
    def breaking(self) -> bool:
        """Whether callers of the old version may fail against the new one."""
        return self.kind is SpecChangeKind.BREAKING

    def to_json(self) -> dict[str, Any]:
        """A plain dict for storage and status JSON."""
        return {
            "kind": self.kind.value,
            "reasons": [
                {"kind": k.value, "reason": r} for r, k in zip(self.reasons, self.reason_kinds, strict=False)
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SpecChange:
        """The inverse of ``to_json``."""
        items = [(SpecChangeKind(i["kind"]), str(i["reason"])) for i in data.get("reasons", ())]
        return cls(
            SpecChangeKind(data.get("kind", "none")),
            tuple(r for _, r in items),
            tuple(k for k, _ in items),
        )


class SpecNotes:
    """Reasons collected during one comparison, deduplicated."""

    def __init__(self) -> None:
        self.items: list[tuple[SpecChangeKind, str]] = []

    def add(self, kind: SpecChangeKind, reason: str) -> None:
        """Note one difference, once."""
        if (kind, reason) not in self.items:
            self.items.append((kind, reason))

    def breaking_count(self) -> int:
        """How many of the reasons break callers."""
        return sum(1 for kind, _ in self.items if kind is SpecChangeKind.BREAKING)

    def change(self) -> SpecChange:
        """The verdict: the most severe kind noted, and every reason, most severe first."""
        if not self.items:
            return SpecChange()
        ordered = sorted(self.items, key=lambda item: -SEVERITY[item[0]])
        return SpecChange(ordered[0][0], tuple(r for _, r in ordered), tuple(k for k, _ in ordered))
