"""Turn a title into a URL slug (shares ``text_helpers`` with ``word_count``)."""

from __future__ import annotations

from typing import Literal

import text_helpers

from loader import tool


@tool(category="text", tags=["text", "url"])
def slugify(title: str, separator: Literal["-", "_"] = "-", max_length: int = 60) -> str:
    """Make a lower-case, ASCII-only slug from a title.

    Args:
        title: The text to turn into a slug, e.g. "Café au lait: a guide".
        separator: The character placed between words.
        max_length: The longest slug to return; cut at a word boundary.
    """
    slug = text_helpers.slugify_text(title, separator)
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit(separator, 1)[0]
    return slug
