"""The loader's live tools in a smolagents ``ToolCallingAgent``, synced from step callbacks.

``agent = LiveTools(loader).attach(ToolCallingAgent(tools=[], model=model))``

* smolagents has no hook before a step, only callbacks after one. ``attach``
  syncs the agent's tools at once and registers a callback that syncs them
  again after every step (action, planning and final-answer steps): the next
  step's model call and its tool calls both read ``agent.tools`` as that sync
  left it, one registry snapshot, each tool bound to it.
* What that means: a change is seen at the first step that starts after the
  sync that follows it, so a save made during step N shows at step N+1. A
  save made while the agent is idle shows at the second step of its next
  run, unless you call ``live.sync(agent)`` before ``agent.run``.
* The system prompt lists the tools too; a sync that changes them rewrites
  ``agent.memory.system_prompt`` so the prompt and the tool list agree.
* smolagents describes inputs with its own type names, one per parameter
  (``string``, ``integer``, ``number``, ``boolean``, ``array``, ``object``,
  ``null``, ``any``) plus ``nullable``: the rest of each parameter's JSON
  Schema (enums, items, nested properties, with ``$ref`` s inlined) is kept
  beside it and reaches the model. Lossy: a parameter with no JSON type
  becomes ``any``, which smolagents sends as ``string``; an optional
  parameter becomes ``nullable`` (a ``None`` the model sends for it is left
  out of the call); names with ``-`` are offered with ``_``; a name that is
  not a Python identifier is not offered. Results are text (images and binary
  documents as a short placeholder).
* An error result raises ``LiveToolError`` in the tool: smolagents records a
  tool-execution error on the step, shows it to the model and goes on.

``CodeAgent`` is refused: it hands its tools to its code executor once per
run, so a synced tool would never reach the code it runs.

smolagents is an optional extra: ``smolagents``.
"""

from __future__ import annotations

import keyword
import logging
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from ..distribution import missing_extra

try:
    from smolagents import CodeAgent, MultiStepAgent, Tool  # type: ignore[import-untyped]  # no type hints
    from smolagents.memory import (  # type: ignore[import-untyped]
        FinalAnswerStep,
        MemoryStep,
        SystemPromptStep,
    )
    from smolagents.tools import AUTHORIZED_TYPES  # type: ignore[import-untyped]
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "smolagents", "smolagents", exc) from exc

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..spec_diff.shapes import resolve
from ..types import AgentTool, JSONSchema
from .discovery import DiscoveryMode
from .live import ToolSource, failed, input_schema, registry_of, result_text
from .offer import ToolOffer
from .skills import SkillRun, SkillsMode

__all__ = ["LiveTool", "LiveToolError", "LiveTools", "smolagents_inputs"]

logger = logging.getLogger(__name__)

_MAX_INLINE_DEPTH = 8
"""How deep ``$ref`` s are inlined; a recursive schema stops there as an open object."""


class LiveToolError(Exception):
    """A live tool's error result, raised so smolagents takes its tool-failure path."""


def _inline(node: Any, root: Mapping[str, Any], depth: int) -> Any:
    """``node`` with every ``$ref`` into ``root``'s ``$defs`` replaced by its target."""
    if isinstance(node, list):
        return [_inline(item, root, depth) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node or "allOf" in node:
        if depth >= _MAX_INLINE_DEPTH:
            return {"type": "object"}
        node, _ = resolve(node, root)
        depth += 1
    return {key: _inline(value, root, depth) for key, value in node.items() if key not in ("$defs", "title")}


def _smol_type(schema: Mapping[str, Any]) -> str | list[str]:
    declared = schema.get("type")
    if isinstance(declared, str) and declared in AUTHORIZED_TYPES:
        return declared
    if isinstance(declared, list):
        known = [t for t in declared if t in AUTHORIZED_TYPES]
        if known:
            return known if len(known) > 1 else known[0]
    return "any"


def smolagents_inputs(schema: JSONSchema) -> dict[str, dict[str, Any]]:
    """A tool's JSON Schema as smolagents ``inputs``: one typed, described entry per parameter."""
    required = set(schema.get("required", []))
    inputs: dict[str, dict[str, Any]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        entry = dict(_inline(prop, schema, 0))
        options = entry.get("anyOf")
        if isinstance(options, list):
            entry["anyOf"] = [{**option, "type": _smol_type(option)} for option in options]
        entry["type"] = _smol_type(entry)
        entry.setdefault("description", name)
        if name not in required:
            entry["nullable"] = True
        inputs[name] = entry
    return inputs


def _smol_name(name: str) -> str | None:
    """The name smolagents can take (``-`` as ``_``), or None when there is none."""
    candidate = name.replace("-", "_")
    return candidate if candidate.isidentifier() and not keyword.iskeyword(candidate) else None


class LiveTool(Tool):  # type: ignore[misc]  # smolagents ships no type hints
    """One registry tool, bound to the snapshot it came from, as a smolagents ``Tool``."""

    skip_forward_signature_validation = True

    def __init__(self, snapshot: RegistrySnapshot, tool: AgentTool, name: str) -> None:
        spec = tool.tool_spec
        schema = input_schema(tool)
        self.name = name
        self.description = spec.get("description", "")
        self.inputs = smolagents_inputs(schema)
        self.output_type = "string"
        self._snapshot = snapshot
        self._tool_name = spec["name"]
        self._required = frozenset(schema.get("required", []))
        super().__init__()

    def forward(self, *args: Any, **kwargs: Any) -> str:
        if args and not kwargs and len(self.inputs) == 1:  # smolagents passes a lone argument positionally
            kwargs = {next(iter(self.inputs)): args[0]}
        arguments = {
            key: value for key, value in kwargs.items() if value is not None or key in self._required
        }
        result = self._snapshot.invoke(self._tool_name, arguments)
        text = result_text(result)
        if failed(result):
            raise LiveToolError(text)
        return text


class _AgentSync:
    """What one agent was last given: the snapshot, the names we put in ``agent.tools``; its run's skills."""

    __slots__ = ("names", "run", "skipped", "snapshot")

    def __init__(self, run: SkillRun | None) -> None:
        self.snapshot: RegistrySnapshot | None = None
        self.names: set[str] = set()
        self.skipped: set[str] = set()
        self.run = run


class LiveTools:
    """The loader's tools for smolagents agents, synced after every step.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = LiveTools(loader).attach(ToolCallingAgent(tools=[], model=model))
    """

    def __init__(
        self, source: ToolSource, *, discovery: DiscoveryMode = "all", skills: SkillsMode = "listed"
    ) -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        ``discovery="search"`` offers ``search_tools`` and ``call_tool`` instead
        of every tool (``loader.integrations.discovery``). ``skills="on-activation"``
        offers a skill's tools only once the run called ``activate_skill`` for it
        (``loader.integrations.skills``); a run ends at its final-answer step.
        """
        self._registry = registry_of(source)
        self._offer = ToolOffer(self._registry, discovery=discovery, skills=skills)
        self._lock = threading.RLock()
        self._agents: weakref.WeakKeyDictionary[MultiStepAgent, _AgentSync] = weakref.WeakKeyDictionary()
        self._cached: tuple[RegistrySnapshot | None, dict[str, LiveTool]] = (None, {})

    @property
    def registry(self) -> ToolRegistry:
        """The registry the tools come from."""
        return self._registry

    def live_tools(self, snapshot: RegistrySnapshot | None = None) -> dict[str, LiveTool]:
        """The tools of ``snapshot`` (default: the next step's) by the names smolagents knows them by."""
        snapshot = snapshot or self._offer.step()
        with self._lock:
            cached, tools = self._cached
            if cached is not snapshot:
                tools = {}
                for tool in snapshot.tools():
                    name = _smol_name(tool.tool_name)
                    if name is None:
                        logger.warning(
                            "tool_name=<%s> | not a Python identifier, not offered", tool.tool_name
                        )
                        continue
                    tools[name] = LiveTool(snapshot, tool, name)
                self._cached = (snapshot, tools)
            return tools

    def attach(self, agent: MultiStepAgent) -> MultiStepAgent:
        """Give ``agent`` the current tools and re-sync after each of its steps; returns ``agent``."""
        if isinstance(agent, CodeAgent):
            raise TypeError(
                "LiveTools cannot serve a CodeAgent: it hands its tools to its code executor once per run; "
                "use a ToolCallingAgent"
            )
        self.sync(agent)
        agent.step_callbacks.register(MemoryStep, self._after_step)
        return agent

    def _after_step(self, step: MemoryStep, agent: MultiStepAgent) -> None:
        if isinstance(step, FinalAnswerStep):  # the run is over: the next one starts with no skill active
            with self._lock:
                state = self._agents.get(agent)
                if state is not None:
                    state.run = self._offer.run()
        self.sync(agent)

    def sync(self, agent: MultiStepAgent) -> None:
        """Bring ``agent.tools`` in line with the registry: add new tools, swap changed ones, drop gone ones.

        A no-op (one snapshot comparison) when nothing changed since last time.
        An agent's own tool of the same name is left alone.
        """
        with self._lock:
            state = self._agents.get(agent)
            if state is None:
                state = self._agents[agent] = _AgentSync(self._offer.run())
            snapshot = self._offer.step(state.run)
            if state.snapshot is snapshot:
                return
            live = self.live_tools(snapshot)
            for name in state.names - live.keys():
                del agent.tools[name]
            state.names &= live.keys()
            for name, tool in live.items():
                if name in agent.tools and name not in state.names:
                    if name not in state.skipped:
                        state.skipped.add(name)
                        logger.warning("tool_name=<%s> | the agent has its own tool of this name", name)
                    continue
                agent.tools[name] = tool
                state.names.add(name)
            state.skipped &= live.keys()
            state.snapshot = snapshot
            agent.memory.system_prompt = SystemPromptStep(system_prompt=agent.system_prompt)
