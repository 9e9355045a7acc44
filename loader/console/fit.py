"""Fitting text and table columns into a terminal width without breaking words.

A column is never narrower than its header word; when the columns do not fit,
the least useful ones go first; what stays is cut with ``…`` (a path from the
left, so its file name and line survive), never wrapped mid-word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Column", "clip", "clip_left", "fit_columns"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column's needs: ``comfort`` is the width below which it is better dropped than squeezed.

    Attributes:
        name: The column's key (and header word).
        rank: Usefulness, 0 most useful; the highest rank is dropped first.
        comfort: The narrowest width worth showing (never below the header's length).
        want: The width its longest cell needs.
        flexible: Takes whatever width is left once every column has what it wants.
        header: The header word when it is not ``name``.
        most: The width it grows to once every column has its ``want`` (default ``want``).
    """

    name: str
    rank: int
    comfort: int
    want: int
    flexible: bool = False
    header: str | None = None
    most: int | None = None

    @property
    def least(self) -> int:
        """The narrowest this column may be: its comfort, and never narrower than its header word."""
        return max(self.comfort, len(self.header or self.name))


def fit_columns(columns: Sequence[Column], width: int, gap: int = 1) -> dict[str, int]:
    """The width of each column kept (in the given order), dropping the least useful until they fit."""
    kept = list(columns)
    while kept and sum(c.least for c in kept) + gap * (len(kept) - 1) > width:
        kept.remove(max(kept, key=lambda c: c.rank))
    widths = {c.name: c.least for c in kept}
    spare = width - sum(widths.values()) - gap * max(0, len(kept) - 1)
    for second in (False, True):
        for column in sorted(kept, key=lambda c: c.rank):
            goal = column.most if second and column.most is not None else column.want
            grow = min(spare, max(0, goal - widths[column.name]))
            widths[column.name] += grow
            spare -= grow
    flexible = [c for c in kept if c.flexible]
    if flexible and spare > 0:
        widths[flexible[0].name] += spare
    return {c.name: widths[c.name] for c in kept}


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in ``…`` when cut."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…" if width > 0 else ""


def clip_left(text: str, width: int) -> str:
    """``text`` cut from the left to ``width`` characters (``…/calculator.py:12``)."""
    if len(text) <= width:
        return text
    return "…" + text[len(text) - width + 1 :] if width > 1 else clip(text, width)
