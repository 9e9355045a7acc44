"""The optional extras (``mcp``, ``metrics``, ``strands``) and the ``pip install`` line that adds one.

A hint that says ``pip install 'tool-loader[mcp]'`` only works if a package
index serves a distribution of that name, and if none does, anyone could
register it. So hints name the requirements themselves, as the installed
distribution's metadata declares them for the extra, or, when the package runs
from a checkout that was never installed, as ``FALLBACK`` (which a test keeps
equal to ``pyproject.toml``).
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
from collections.abc import Mapping
from typing import Final

__all__ = ["DISTRIBUTION", "FALLBACK", "install_command", "requirements"]

DISTRIBUTION: Final = "tool-loader"

FALLBACK: Final[Mapping[str, tuple[str, ...]]] = {
    "mcp": ("mcp>=2.1,<3",),
    "metrics": ("prometheus_client>=0.20",),
    "strands": ("strands-agents>=1.35",),
}
"""Each extra's requirements as ``pyproject.toml`` spells them, for when no metadata is installed."""

_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*(.*)$")


def _lower_bounds_first(requirement: str) -> str:
    """``mcp<3,>=2.1`` (as metadata stores it) as ``mcp>=2.1,<3`` (as people write it)."""
    found = _NAME.match(requirement)
    if found is None:
        return requirement.strip()
    name, rest = found.groups()
    specifiers = [part.strip() for part in rest.split(",") if part.strip()]
    specifiers.sort(key=lambda spec: 0 if spec.startswith((">", "~", "=")) else 1)
    return name + ",".join(specifiers)


def requirements(extra: str, distribution: str = DISTRIBUTION) -> tuple[str, ...]:
    """What ``extra`` installs: from the distribution's metadata, else ``FALLBACK`` (empty if unknown)."""
    try:
        declared = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        declared = []
    found: list[str] = []
    for line in declared:
        requirement, _, marker = line.partition(";")
        wanted = _EXTRA.search(marker)
        if wanted is not None and wanted.group(1) == extra:
            found.append(_lower_bounds_first(requirement))
    return tuple(found) or tuple(FALLBACK.get(extra, ()))


def install_command(extra: str, distribution: str = DISTRIBUTION) -> str:
    """``pip install 'mcp>=2.1,<3'``: a command that installs what ``extra`` needs, from any index."""
    return " ".join(["pip install", *(shlex.quote(r) for r in requirements(extra, distribution))])
