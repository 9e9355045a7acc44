"""Docstrings → a tool description and per-parameter descriptions.

Parsing is delegated to ``docstring_parser`` (Google, reST and NumPy styles are
detected automatically). The description a model sees is the summary and the
long description only: parameter, return, raise, example and note sections are
dropped, because parameters are already described in the input schema and the
other sections are written for human readers.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import docstring_parser

__all__ = ["ParsedDocstring", "docstring_of", "parse_docstring"]

logger = logging.getLogger(__name__)

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """What a tool needs from a docstring.

    Attributes:
        description: Summary plus long description ("" when there is none).
        params: Parameter name → description, for documented parameters with a description.
    """

    description: str = ""
    params: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


def parse_docstring(text: str | None) -> ParsedDocstring:
    """Parse a docstring in any of the Google, reST or NumPy styles.

    A docstring the parser rejects is kept whole as the description, so a
    malformed section never costs the tool its description.
    """
    if not text or not text.strip():
        return ParsedDocstring()
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> ParsedDocstring:
    """Parsing tries every style; a file saved again with the same docstring is parsed once."""
    plain = _plain(text)
    return plain if plain is not None else _parse_sections(text)


def _parse_sections(text: str) -> ParsedDocstring:
    """The full parse, by ``docstring_parser`` (it picks the style that finds the most sections)."""
    cleaned = inspect.cleandoc(text)
    try:
        # The leading newline lets a docstring that opens with a section ("Args:") parse as one.
        parsed = docstring_parser.parse("\n" + cleaned)
    except (docstring_parser.ParseError, IndexError) as exc:  # IndexError: a bare ':' line (reST)
        logger.debug("error=<%s> | docstring not parseable, using it verbatim", exc)
        return ParsedDocstring(description=cleaned.strip())

    parts: list[str] = []
    if parsed.short_description:
        parts.append(parsed.short_description.strip())
    if parsed.long_description:
        # Keep the author's layout: a summary wrapped onto the next line stays joined by one newline.
        separator = "\n\n" if parsed.blank_after_short_description or not parts else "\n"
        if parts:
            parts.append(separator)
        parts.append(parsed.long_description.strip())
    params = {
        param.arg_name: param.description.strip()
        for param in parsed.params
        if param.description and param.description.strip()
    }
    return ParsedDocstring(description="".join(parts), params=MappingProxyType(params))


_SECTION_MARK = re.compile(r"(?m)(:\s*$|^\s*(?::|@|\.\.|>>>)|^\s*([-=~`#*+^\"'])\2+\s*$)")
"""A line that could open a section in some style: ends with ':' (Google, numpydoc titles), starts
with ':', '@', '..' or '>>>' (reST, epydoc, directives, doctests), or underlines a title."""


def _plain(text: str) -> ParsedDocstring | None:
    """The result for a docstring without sections, worked out without the parser; None otherwise.

    Most tool docstrings are a sentence or two. ``docstring_parser`` tries all
    four styles on each (a large share of a small file's import); a
    text with no line that could start a section gets the same answer from a
    split at the first line break (checked against the parser on the docstrings
    of installed packages, ``tests/tools/test_docstrings.py`` on samples).
    """
    if _SECTION_MARK.search(text):
        return None
    cleaned = inspect.cleandoc("\n" + inspect.cleandoc(text))
    head, _, rest = cleaned.partition("\n")
    long = rest.strip()
    if not long:
        return ParsedDocstring(description=head.strip())
    if not head.strip():
        return ParsedDocstring(description=long)
    separator = "\n\n" if rest.startswith("\n") else "\n"
    return ParsedDocstring(description=head.strip() + separator + long)


def docstring_of(obj: Any) -> ParsedDocstring:
    """Parse the docstring of a function, method or class (``inspect.getdoc`` rules)."""
    return parse_docstring(inspect.getdoc(obj))
