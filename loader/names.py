"""Tool names: the one rule every tool kind, the registry and the loader check against.

Bedrock's Converse API and MCP clients accept 1 to 64 characters from letters,
digits, ``_`` and ``-``. A model treats ``my-tool`` and ``my_tool`` as the same
name, so the registry and the loader compare names in ``normalise_tool_name`` form.
"""

from __future__ import annotations

import re

from .errors import InvalidToolNameError

__all__ = ["TOOL_NAME_PATTERN", "check_tool_name", "is_valid_tool_name", "normalise_tool_name"]

TOOL_NAME_PATTERN = re.compile(r"\A[A-Za-z0-9_-]{1,64}\Z")
"""Anchored at both ends (``\\Z``, not ``$``, which would let a trailing newline through),
so ``match``, ``fullmatch`` and ``search`` all check the whole name."""


def is_valid_tool_name(name: object) -> bool:
    """Whether ``name`` is a string of 1 to 64 characters from letters, digits, ``_`` and ``-``."""
    return isinstance(name, str) and TOOL_NAME_PATTERN.match(name) is not None


def check_tool_name(name: object) -> str:
    """Return ``name`` if it is a valid tool name.

    Raises:
        InvalidToolNameError: ``name`` is not a string of 1 to 64 characters from letters, digits,
            ``_`` and ``-``.
    """
    if not isinstance(name, str) or TOOL_NAME_PATTERN.match(name) is None:
        raise InvalidToolNameError(str(name))
    return name


def normalise_tool_name(name: str) -> str:
    """``my-tool`` and ``my_tool`` are the same name to a model, so they are one key here."""
    return name.replace("-", "_")
