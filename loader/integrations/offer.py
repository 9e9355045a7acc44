"""What a live adapter offers a model at each step, from its ``discovery`` and ``skills`` options.

Every adapter asks ``ToolOffer.step()`` for the snapshot a step offers and
runs that step's calls through it: the registry's current snapshot; with
``discovery="search"`` the two-tool view of ``loader.integrations.discovery``;
with ``skills="on-activation"`` the view of the run's ``SkillRun``
(``loader.integrations.skills``), which an adapter starts with ``run()`` where
its framework begins a run.
"""

from __future__ import annotations

from typing import get_args

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from .discovery import DiscoveryMode, search_view
from .skills import SkillRun, SkillsMode

__all__ = ["ToolOffer"]


def _checked(parameter: str, value: object, allowed: tuple[object, ...]) -> None:
    if value not in allowed:
        choices = " or ".join(repr(a) for a in allowed)
        raise ValueError(f"{parameter} must be {choices}, got {value!r}")


class ToolOffer:
    """The snapshots one adapter offers, step by step."""

    def __init__(
        self, registry: ToolRegistry, *, discovery: DiscoveryMode = "all", skills: SkillsMode = "listed"
    ) -> None:
        """Offer ``registry``'s tools as ``discovery`` and ``skills`` say.

        Raises:
            ValueError: An option that is not one of its values, or both options set
                (``search_tools`` would find and ``call_tool`` run the tools of skills never activated).
        """
        _checked("discovery", discovery, get_args(DiscoveryMode))
        _checked("skills", skills, get_args(SkillsMode))
        if discovery == "search" and skills == "on-activation":
            raise ValueError(
                'skills="on-activation" needs discovery="all": search_tools and call_tool reach every tool'
            )
        self.registry = registry
        self.discovery = discovery
        self.skills = skills
        self._view = search_view(registry) if discovery == "search" else None

    @property
    def per_run(self) -> bool:
        """Whether what is offered depends on the run (``skills="on-activation"``)."""
        return self.skills == "on-activation"

    def run(self) -> SkillRun | None:
        """A new run's skill state (None unless ``skills="on-activation"``)."""
        return SkillRun(self.registry) if self.per_run else None

    def step(self, run: SkillRun | None = None) -> RegistrySnapshot:
        """The snapshot a step of ``run`` offers and runs its calls through.

        In search mode the same object every time (its two tools answer from the
        registry as it is when called), and a run's view is the same object until
        the registry or the run's activations change, so adapters that cache
        their framework tools by snapshot identity build them once.
        """
        if self._view is not None:
            return self._view
        if run is None:
            run = self.run()  # no run known: nothing activated
        return run.view() if run is not None else self.registry.snapshot()
