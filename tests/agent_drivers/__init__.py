"""The six framework drivers, one module each, and the pytest parameters that pick them.

A scenario parametrised with ``agents()`` runs once per framework (and per
way of running it, with ``modes=True``); ``Agent.build`` skips the test when
the framework's extra is not installed (and fails it in CI), so the drivers' modules are imported
only by the tests that use them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pytest
from live_agents import Driver
from support import require_module

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.skills import SkillsMode
from loader.reload.loader import ToolLoader

__all__ = ["FRAMEWORKS", "Agent", "Framework", "agents"]


@dataclass(frozen=True, slots=True)
class Framework:
    """A framework: the package its extra installs, its driver, the ways it runs an agent (the first: the default)."""

    name: str
    package: str
    driver: str
    modes: tuple[str, ...]

    def driver_class(self) -> type[Driver]:
        # A missing framework skips here and fails in CI, as the other extras' tests do.
        require_module(self.package, f"pip install -e '.[{self.name.replace('_', '-')}]'")
        module = importlib.import_module(f"agent_drivers.{self.name}_driver")
        driver: type[Driver] = getattr(module, self.driver)
        return driver


FRAMEWORKS = (
    Framework("langchain", "langchain", "LangChainDriver", ("invoke", "ainvoke")),
    Framework("openai_agents", "agents", "OpenAIAgentsDriver", ("run_sync", "run")),
    Framework("pydantic_ai", "pydantic_ai", "PydanticAIDriver", ("run_sync", "run")),
    Framework("google_adk", "google.adk", "GoogleADKDriver", ("run_async", "run")),
    Framework("llama_index", "llama_index.core", "LlamaIndexDriver", ("streaming", "blocking")),
    Framework("smolagents", "smolagents", "SmolagentsDriver", ("run",)),
)


@dataclass(frozen=True, slots=True)
class Agent:
    """A framework and one way of running its agent: what a shared scenario is parametrised over."""

    framework: Framework
    mode: str

    def build(
        self,
        loader: ToolLoader,
        *,
        own_greet: bool = False,
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> Driver:
        """The framework's driver around ``loader`` (with the agent's own ``greet`` tool if asked)."""
        driver_class = self.framework.driver_class()
        tools = [driver_class.own_greet()] if own_greet else []
        # every driver takes (loader, *, tools, mode, discovery, skills)
        make: Callable[..., Driver] = driver_class
        return make(loader, tools=tools, mode=self.mode, discovery=discovery, skills=skills)


def agents(*, modes: bool = False, without: Iterable[str] = ()) -> list[Any]:
    """One pytest parameter per framework (``modes``: per framework and mode), with readable ids."""
    left_out = set(without)
    return [
        pytest.param(Agent(framework, mode), id=_id(framework, mode, modes))
        for framework in FRAMEWORKS
        if framework.name not in left_out
        for mode in (framework.modes if modes else framework.modes[:1])
    ]


def _id(framework: Framework, mode: str, modes: bool) -> str:
    return f"{framework.name}-{mode}" if modes and len(framework.modes) > 1 else framework.name
