"""What a live adapter offers a model at each step, from its ``discovery`` option: one place for all seven.

Every adapter asks ``ToolOffer.step()`` for the snapshot a step offers and
runs that step's calls through it: the registry's current snapshot, or with
``discovery="search"`` the two-tool view of ``loader.integrations.discovery``.
"""

from __future__ import annotations

from typing import get_args

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from .discovery import DiscoveryMode, search_view

__all__ = ["ToolOffer"]


def _checked(parameter: str, value: object, allowed: tuple[object, ...]) -> None:
    if value not in allowed:
        choices = " or ".join(repr(a) for a in allowed)
        raise ValueError(f"{parameter} must be {choices}, got {value!r}")


class ToolOffer:
    """The snapshots one adapter offers, step by step."""

    def __init__(self, registry: ToolRegistry, *, discovery: DiscoveryMode = "all") -> None:
        """Offer ``registry``'s tools as ``discovery`` says.

        Raises:
            ValueError: ``discovery`` is not one of ``DiscoveryMode``.
        """
        _checked("discovery", discovery, get_args(DiscoveryMode))
        self.registry = registry
        self.discovery = discovery
        self._view = search_view(registry) if discovery == "search" else None

    def step(self) -> RegistrySnapshot:
        """The snapshot a step offers and runs its calls through.

        In search mode the same object every time (its two tools answer from the
        registry as it is when called), so adapters that cache their framework
        tools by snapshot identity build them once.
        """
        return self._view if self._view is not None else self.registry.snapshot()
