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

Strands is an optional extra (the ``strands`` extra: ``pip install 'strands-agents>=1.35'``); nothing
else in the package imports this module.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..distribution import missing_extra

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
    raise missing_extra(__name__, "Strands Agents", "strands", exc) from exc

from ..context.handlers import CONTEXT_HANDLERS_KEY, ContextHandlers
from ..context.messages import Answer, ContextCapability, LogEntry, ProgressUpdate, Question
from ..tools.strands_function import StrandsFunctionTool
from ..types import AgentTool, ToolSpec, new_tool_use_id
from .discovery import DiscoveryMode
from .live import ToolSource, registry_of
from .offer import ToolOffer
from .skills import SkillRun, SkillsMode

if TYPE_CHECKING:
    from strands import Agent

    from ..registry.snapshot import RegistrySnapshot
    from ..registry.tool_registry import ToolRegistry

__all__ = ["LoaderToolProvider", "StrandsContextHandlers", "StrandsFunctionTool", "StrandsToolAdapter"]

logger = logging.getLogger(__name__)


class StrandsToolAdapter(StrandsAgentTool):
    """One registry tool as a Strands ``AgentTool``, looked up by name on every use.

    The adapter holds a name, not a tool: its spec and its calls always reach
    the version the registry serves now, so a reload needs no new adapter. A
    call to a tool that has since been removed returns the registry's error
    result naming the tools still available.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        name: str,
        tool: AgentTool,
        *,
        current: Callable[[], RegistrySnapshot] | None = None,
    ) -> None:
        """Tool ``name``, looked up in the snapshot ``current`` gives (default: ``registry``'s)."""
        super().__init__()
        self._registry = registry
        self._current = current or registry.snapshot
        self._name = name
        self._last_spec: ToolSpec = tool.tool_spec
        self._last_type = tool.tool_type

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def tool_spec(self) -> StrandsToolSpec:
        """A deep copy of the current spec: Strands normalises specs in place."""
        current = self._current().get(self._name)
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
        """Run the current version through the registry: its progress and logs as they come, then
        one ``ToolResultEvent``.

        Sync tool bodies run in a worker thread so the agent's event loop (and
        concurrent tool calls) never stall on them. Each progress report is an
        event ``{"progress": {"progress", "total", "message"}}``, each log entry
        ``{"log": {"level", "message", "data", "logger"}}`` (Strands hands them
        on as tool stream events). Questions go to the handlers the agent's
        caller put in the invocation state under ``tool_context_handlers``, if any.
        """
        handlers = StrandsContextHandlers(invocation_state.get(CONTEXT_HANDLERS_KEY))
        call = asyncio.ensure_future(
            self._current().ainvoke(
                self._name,
                tool_use.get("input"),
                tool_use_id=tool_use.get("toolUseId") or new_tool_use_id(),
                invocation_state=invocation_state,
                agent=invocation_state.get("agent"),
                context_handlers=handlers,
            )
        )
        try:
            async for event in handlers.events_until(call):
                yield event
            yield ToolResultEvent(cast(Any, call.result()))
        finally:
            call.cancel()


class StrandsContextHandlers(ContextHandlers):
    """A tool's context under a Strands agent: progress and logs become the tool's stream events.

    Questions (and a copy of every progress report and log entry) go to
    ``inner``: handlers the agent's caller passed in the invocation state.
    """

    def __init__(self, inner: Any = None) -> None:
        self._inner = inner if isinstance(inner, ContextHandlers) else None
        self._loop = asyncio.get_running_loop()
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    @property
    def capabilities(self) -> frozenset[ContextCapability]:
        return self._inner.capabilities if self._inner is not None else frozenset()

    def progress(self, update: ProgressUpdate) -> None:
        self._post(
            {"progress": {"progress": update.progress, "total": update.total, "message": update.message}}
        )
        if self._inner is not None:
            self._inner.progress(update)

    def log(self, entry: LogEntry) -> None:
        data = {
            "level": entry.level.value,
            "message": entry.message,
            "data": entry.data,
            "logger": entry.logger,
        }
        self._post({"log": data})
        if self._inner is not None:
            self._inner.log(entry)

    def ask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        return (self._inner or ContextHandlers()).ask(questions)

    async def aask(self, questions: Sequence[Question]) -> tuple[Answer, ...]:
        return await (self._inner or ContextHandlers()).aask(questions)

    def _post(self, event: dict[str, Any]) -> None:
        """Queue an event for the agent, from the loop or from a tool's thread."""
        try:
            self._loop.call_soon_threadsafe(self._events.put_nowait, event)
        except RuntimeError:  # the agent's loop is gone: nobody is listening any more
            pass

    async def events_until(self, call: asyncio.Future[Any]) -> AsyncIterator[dict[str, Any]]:
        """The events the tool sends while ``call`` runs, the last of them included."""
        while not call.done():
            getter = asyncio.ensure_future(self._events.get())
            await asyncio.wait({getter, call}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
        await asyncio.sleep(0)  # events a tool's thread sent just before it ended
        while not self._events.empty():
            yield self._events.get_nowait()


class _AgentSync:
    """What one agent was last given: the snapshot, our adapters in it, the names we left alone; its run."""

    __slots__ = ("adapters", "own", "run", "skipped", "snapshot")

    def __init__(self, run: SkillRun | None) -> None:
        self.snapshot: RegistrySnapshot | None = None
        self.adapters: dict[str, StrandsToolAdapter] = {}
        self.skipped: set[str] = set()
        self.run = run
        self.own: dict[str, StrandsToolAdapter] = {}
        """With ``skills="on-activation"``: this agent's adapters, resolving in its run's view."""


class LoaderToolProvider(ToolProvider, Plugin):
    """The loader's tools for Strands agents, kept in step with the registry.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = Agent(model=..., plugins=[LoaderToolProvider(loader)])

    A tool whose name an agent already uses for a tool of its own is skipped
    (with a warning) rather than replaced.
    """

    def __init__(
        self,
        source: ToolSource,
        *,
        name: str = "tool-loader",
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        Args:
            source: Where the tools come from; it keeps loading and reloading on its own.
            name: The plugin name; give each provider on one agent its own.
            discovery: ``"search"`` offers ``search_tools`` and ``call_tool`` instead of every tool
                (``loader.integrations.discovery``).
            skills: ``"on-activation"`` offers a skill's tools only once the invocation called
                ``activate_skill`` for it (``loader.integrations.skills``); plugin form only.
        """
        self._plugin_name = name
        self._registry = registry_of(source)
        self._offer = ToolOffer(self._registry, discovery=discovery, skills=skills)
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
        """Adapters for every tool offered now, in name order."""
        snapshot = self._offer.step()
        with self._lock:
            tools = {name: tool for name in snapshot.names() if (tool := snapshot.get(name)) is not None}
            return [self._adapter(name, tool) for name, tool in tools.items()]

    def _adapter(self, name: str, tool: AgentTool, state: _AgentSync | None = None) -> StrandsToolAdapter:
        """The adapter of ``name``: shared, or with ``skills="on-activation"`` the agent's own."""
        if state is not None and self._offer.per_run:
            adapters, current = state.own, lambda: self._offer.step(state.run)
        else:
            adapters, current = self._adapters, self._offer.step
        adapter = adapters.get(name)
        if adapter is None:
            adapter = adapters[name] = StrandsToolAdapter(self._registry, name, tool, current=current)
        return adapter

    # -- ToolProvider ---------------------------------------------------------------

    async def load_tools(self, **kwargs: Any) -> Sequence[StrandsAgentTool]:
        """The current tools (the ``Agent(tools=[provider])`` form).

        Raises:
            ValueError: ``skills="on-activation"``, which needs to change the tools between steps.
        """
        if self._offer.per_run:
            raise ValueError(
                'skills="on-activation" changes the tools between steps, which the tool-provider form '
                "cannot: use Agent(plugins=[provider]) instead of Agent(tools=[provider])"
            )
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
        """A new invocation: with ``skills="on-activation"``, a new run with no skill active."""
        if self._offer.per_run:
            with self._lock:
                self._state(event.agent).run = self._offer.run()
        self.sync(event.agent)

    def _state(self, agent: Agent) -> _AgentSync:
        state = self._agents.get(agent)
        if state is None:
            state = self._agents[agent] = _AgentSync(self._offer.run())
        return state

    def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        self.sync(event.agent)

    def sync(self, agent: Agent) -> None:
        """Bring ``agent``'s tool registry in line with ours: add new tools, drop removed ones.

        Changed tools need nothing: adapters resolve the current version. A
        no-op (one snapshot comparison) when nothing changed since last time.
        """
        with self._lock:
            state = self._state(agent)
            snapshot = self._offer.step(state.run)
            if state.snapshot is snapshot:
                return
            target = agent.tool_registry
            current = {name: tool for name in snapshot.names() if (tool := snapshot.get(name)) is not None}
            for name in sorted(current.keys() - state.adapters.keys()):
                adapter = self._adapter(name, current[name], state)
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
            state.snapshot = snapshot


def _register(target: Any, adapter: StrandsToolAdapter) -> str | None:
    """Add ``adapter`` to a Strands tool registry, or say why not (an agent's own tools keep their names)."""
    if adapter.tool_name in target.registry:
        return "the agent has its own tool of this name"
    try:
        target.register_tool(adapter)
    except ValueError as exc:  # a '-'/'_' variant of one of the agent's own tools
        return str(exc)
    return None
