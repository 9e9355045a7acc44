"""Strands Agents both ways: the loader's tools in a Strands ``Agent``, Strands ``@tool`` files in the loader.

* ``LoaderToolProvider`` hands a running registry (or ``ToolLoader``) to an
  agent. As a Strands plugin (``Agent(plugins=[provider])``) it re-syncs the
  agent's tools before every model call, so added, changed and removed tools
  show on the agent's next turn. It is also a Strands ``ToolProvider``
  (``Agent(tools=[provider])``), which loads the tools once: edits still apply
  (each adapter resolves its tool by name at call time), additions and
  removals need the plugin form.
* ``StrandsToolAdapter`` is one of our tools seen as a Strands ``AgentTool``.
* ``StrandsFunctionTool`` is the other direction: a Strands
  ``DecoratedFunctionTool`` (``from strands import tool``) as one of our tools,
  which the ``strands_tools`` discovery plugin builds for tool files.

Strands is an optional extra (``pip install 'tool-loader[strands]'``); nothing
else in the package imports this module.
"""

from __future__ import annotations

import copy
import logging
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

try:
    from strands.hooks import BeforeInvocationEvent, BeforeModelCallEvent
    from strands.plugins import Plugin
    from strands.tools import ToolProvider
    from strands.types._events import ToolResultEvent
    from strands.types.tools import AgentTool as StrandsAgentTool
    from strands.types.tools import ToolGenerator as StrandsToolGenerator
    from strands.types.tools import ToolSpec as StrandsToolSpec
    from strands.types.tools import ToolUse as StrandsToolUse
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "loader.integrations.strands needs Strands Agents: pip install 'tool-loader[strands]'"
    ) from exc

from ..tools.strands_function import StrandsFunctionTool
from ..types import AgentTool, ToolSpec, new_tool_use_id
from .live import ToolSource, registry_of

if TYPE_CHECKING:
    from strands import Agent

    from ..registry.tool_registry import ToolRegistry

__all__ = ["LoaderToolProvider", "StrandsFunctionTool", "StrandsToolAdapter"]

logger = logging.getLogger(__name__)


class StrandsToolAdapter(StrandsAgentTool):
    """One registry tool as a Strands ``AgentTool``, looked up by name on every use.

    The adapter holds a name, not a tool: its spec and its calls always reach
    the version the registry serves now, so a reload needs no new adapter. A
    call to a tool that has since been removed returns the registry's error
    result naming the tools still available.
    """

    def __init__(self, registry: ToolRegistry, name: str, tool: AgentTool) -> None:
        super().__init__()
        self._registry = registry
        self._name = name
        self._last_spec: ToolSpec = tool.tool_spec
        self._last_type = tool.tool_type

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def tool_spec(self) -> StrandsToolSpec:
        """A deep copy of the current spec: Strands normalises specs in place."""
        current = self._registry.get(self._name)
        if current is not None:
            self._last_spec = current.tool_spec
            self._last_type = current.tool_type
        return cast(StrandsToolSpec, copy.deepcopy(self._last_spec))

    @property
    def tool_type(self) -> str:
        return self._last_type

    @property
    def supports_hot_reload(self) -> bool:
        return True

    async def stream(
        self, tool_use: StrandsToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> StrandsToolGenerator:
        """Run the current version through the registry; yields one ``ToolResultEvent``.

        Sync tool bodies run in a worker thread so the agent's event loop (and
        concurrent tool calls) never stall on them.
        """
        result = await self._registry.snapshot().ainvoke(
            self._name,
            tool_use.get("input"),
            tool_use_id=tool_use.get("toolUseId") or new_tool_use_id(),
            invocation_state=invocation_state,
            agent=invocation_state.get("agent"),
        )
        yield ToolResultEvent(cast(Any, result))


class _AgentSync:
    """What one agent was last given: the registry generation, our adapters in it, the names we left alone."""

    __slots__ = ("adapters", "generation", "skipped")

    def __init__(self) -> None:
        self.generation = -1
        self.adapters: dict[str, StrandsToolAdapter] = {}
        self.skipped: set[str] = set()


class LoaderToolProvider(ToolProvider, Plugin):
    """The loader's tools for Strands agents, kept in step with the registry.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = Agent(model=..., plugins=[LoaderToolProvider(loader)])

    A tool whose name an agent already uses for a tool of its own is skipped
    (with a warning) rather than replaced.
    """

    def __init__(self, source: ToolSource, *, name: str = "tool-loader") -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        Args:
            source: Where the tools come from; it keeps loading and reloading on its own.
            name: The plugin name; give each provider on one agent its own.
        """
        self._plugin_name = name
        self._registry = registry_of(source)
        self._adapters: dict[str, StrandsToolAdapter] = {}
        self._agents: weakref.WeakKeyDictionary[Any, _AgentSync] = weakref.WeakKeyDictionary()
        self._consumers: set[Any] = set()
        self._lock = threading.RLock()
        Plugin.__init__(self)

    @property
    def name(self) -> str:
        return self._plugin_name

    @property
    def registry(self) -> ToolRegistry:
        """The registry the tools come from."""
        return self._registry

    def adapters(self) -> list[StrandsToolAdapter]:
        """Adapters for every tool the registry serves now, in name order."""
        snapshot = self._registry.snapshot()
        with self._lock:
            tools = {name: tool for name in snapshot.names() if (tool := snapshot.get(name)) is not None}
            return [self._adapter(name, tool) for name, tool in tools.items()]

    def _adapter(self, name: str, tool: AgentTool) -> StrandsToolAdapter:
        adapter = self._adapters.get(name)
        if adapter is None:
            adapter = StrandsToolAdapter(self._registry, name, tool)
            self._adapters[name] = adapter
        return adapter

    # -- ToolProvider ---------------------------------------------------------------

    async def load_tools(self, **kwargs: Any) -> Sequence[StrandsAgentTool]:
        """The current tools (the ``Agent(tools=[provider])`` form)."""
        return self.adapters()

    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        with self._lock:
            self._consumers.add(consumer_id)

    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Forget a consumer; the registry belongs to the caller, so nothing is closed."""
        with self._lock:
            self._consumers.discard(consumer_id)

    # -- Plugin ------------------------------------------------------------------

    def init_agent(self, agent: Agent) -> None:
        """Give ``agent`` the current tools and re-sync before each invocation and model call."""
        self.sync(agent)
        agent.add_hook(self._before_invocation, BeforeInvocationEvent)
        agent.add_hook(self._before_model_call, BeforeModelCallEvent)

    def _before_invocation(self, event: BeforeInvocationEvent) -> None:
        self.sync(event.agent)

    def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        self.sync(event.agent)

    def sync(self, agent: Agent) -> None:
        """Bring ``agent``'s tool registry in line with ours: add new tools, drop removed ones.

        Changed tools need nothing: adapters resolve the current version. A
        no-op (one generation comparison) when nothing changed since last time.
        """
        snapshot = self._registry.snapshot()
        with self._lock:
            state = self._agents.get(agent)
            if state is None:
                state = self._agents[agent] = _AgentSync()
            if state.generation == snapshot.generation:
                return
            target = agent.tool_registry
            current = {name: tool for name in snapshot.names() if (tool := snapshot.get(name)) is not None}
            for name in sorted(current.keys() - state.adapters.keys()):
                adapter = self._adapter(name, current[name])
                if target.registry.get(name) is adapter:  # also given through Agent(tools=[provider])
                    state.adapters[name] = adapter
                    continue
                refusal = _register(target, adapter)
                if refusal is not None:
                    if name not in state.skipped:
                        state.skipped.add(name)
                        logger.warning("tool_name=<%s>, reason=<%s> | tool not given to agent", name, refusal)
                    continue
                state.adapters[name] = adapter
                state.skipped.discard(name)
                logger.debug("tool_name=<%s> | added tool to agent", name)
            for name in sorted(state.adapters.keys() - current.keys()):
                if target.registry.get(name) is state.adapters.pop(name):
                    del target.registry[name]
                    target.dynamic_tools.pop(name, None)
                    logger.debug("tool_name=<%s> | removed tool from agent", name)
            state.skipped &= current.keys()
            state.generation = snapshot.generation


def _register(target: Any, adapter: StrandsToolAdapter) -> str | None:
    """Add ``adapter`` to a Strands tool registry, or say why not (an agent's own tools keep their names)."""
    if adapter.tool_name in target.registry:
        return "the agent has its own tool of this name"
    try:
        target.register_tool(adapter)
    except ValueError as exc:  # a '-'/'_' variant of one of the agent's own tools
        return str(exc)
    return None
