"""Text utilities shared by ``slugify.py`` and ``word_count.py``.

This file defines no tools, so the loader imports it only for the tools that
use it; saving it reloads both of them.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["slugify_text", "words"]

_WORD = re.compile("[^\\W_]+(?:['\u2019-][^\\W_]+)*")  # an inner apostrophe or hyphen joins a word


def words(text: str) -> list[str]:
    """The words of ``text``: letters and digits, keeping inner apostrophes and hyphens."""
    return _WORD.findall(text)


def slugify_text(text: str, separator: str = "-") -> str:
    """Lower-case ASCII words of ``text`` joined by ``separator`` (accents are dropped, not lost)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return separator.join(word.lower() for word in words(ascii_text))
