"""The registry's immutable view at one generation, on persistent maps readers share.

A ``RegistrySnapshot`` is what readers see: a plain attribute read of the
registry's current one, with no lock. Its ``immutables.Map`` s are shared with
the next snapshot but for the changed paths: a ``RegistryBatch`` (below) stages
each change on them under the registry's write lock, and builds its successor
snapshot from them, so a commit costs what it changed.
"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, TypeVar, Unpack, overload

from immutables import Map

from ..context.handlers import ContextHandlers, with_handlers
from ..errors import DuplicateToolError, ToolNameMismatchError, ToolNotFoundError
from ..fingerprint import tool_digest
from ..names import check_tool_name, normalise_tool_name
from ..results import error_result
from ..types import (
    AgentTool,
    Component,
    ComponentKind,
    ToolCall,
    ToolChoice,
    ToolChoiceAuto,
    ToolConfig,
    ToolResult,
    ToolSpec,
    as_agent_tool,
    new_tool_use_id,
)
from .changes import ChangeKind, ComponentChange, RegistryChange, RegistryChangeSet
from .lifecycle import Lifecycle, arun_counted, astream_counted, run_counted
from .name_listing import NameListing
from .search_index import SearchIndex

__all__ = [
    "BATCH_OVER",
    "CallOptions",
    "ComponentEntry",
    "RegistryBatch",
    "RegistryEntry",
    "RegistrySnapshot",
    "SearchHit",
    "ToolCalls",
    "ToolLike",
    "ToolWrites",
    "unknown_tool",
]

BATCH_OVER = "this registry batch is closed; open a new one with registry.batch()"
"""Why a batch refuses changes once its ``with`` block has ended."""


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    """One registered name: its tool and where it came from (e.g. a file path)."""

    name: str
    tool: AgentTool
    source: str | None


@dataclass(frozen=True, slots=True)
class ComponentEntry:
    """One registered prompt, resource or resource template, and where it came from."""

    component: Component
    source: str | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result of ``search_tools``: what a model needs to call the tool, and its score."""

    name: str
    description: str
    input_schema: dict[str, Any]
    digest: str
    score: float

    def to_json(self) -> dict[str, Any]:
        """What a search shows a model of the hit (not its score): enough to call the tool."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "digest": self.digest,
        }


def _lookup(entries: Map[str, RegistryEntry], aliases: Map[str, str], name: str) -> RegistryEntry | None:
    """The entry of ``name``: exactly, else by its '-'/'_' variant."""
    entry = entries.get(name)
    if entry is None:
        exact = aliases.get(normalise_tool_name(name))
        entry = None if exact is None else entries[exact]
    return entry


def unknown_tool(name: str, tool_use_id: str, available: tuple[str, ...]) -> ToolResult:
    """The error result for a call to a name nobody registered, listing what is there."""
    listing = ", ".join(available) if available else "none"
    return error_result(tool_use_id, f"Unknown tool: {name}. Available tools: {listing}")


class CallOptions(TypedDict, total=False):
    """The keywords of ``invoke`` and ``ainvoke``: the call id, its state, the agent, the context handlers."""

    tool_use_id: str | None
    invocation_state: dict[str, Any] | None
    agent: Any
    context_handlers: ContextHandlers | None


class ToolCalls:
    """``invoke`` and ``ainvoke``, stated once for the registry and its snapshots.

    A class using it says which snapshot a call runs in and which tool it finds there, counted as in
    flight (``_acquire``); the call is the same from there.
    """

    __slots__ = ()

    def _acquire(self, name: str) -> tuple[RegistrySnapshot, AgentTool | None]:
        raise NotImplementedError

    def invoke(self, name: str, input: Any = None, **options: Unpack[CallOptions]) -> ToolResult:
        """Run the named tool; an unknown name or a failing tool gives an error result, never an exception.

        Through a snapshot, the tool is the version the snapshot pinned.
        """
        begun = self._begin(name, input, **options)
        if not isinstance(begun, tuple):
            return begun
        snapshot, tool, call = begun
        return run_counted(tool, snapshot._lifecycle, call, generation=snapshot._generation)

    async def ainvoke(self, name: str, input: Any = None, **options: Unpack[CallOptions]) -> ToolResult:
        """Async ``invoke``; a pending async cleanup runs on the caller's loop."""
        begun = self._begin(name, input, **options)
        if not isinstance(begun, tuple):
            return begun
        snapshot, tool, call = begun
        return await arun_counted(tool, snapshot._lifecycle, call, generation=snapshot._generation)

    def _begin(
        self,
        name: str,
        input: Any,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
        context_handlers: ContextHandlers | None = None,
    ) -> tuple[RegistrySnapshot, AgentTool, ToolCall] | ToolResult:
        """The snapshot, tool and call an ``invoke`` runs, or the error result for an unknown name."""
        snapshot, tool = self._acquire(name)
        tool_use_id = tool_use_id or new_tool_use_id()
        if tool is None:
            return unknown_tool(name, tool_use_id, snapshot._names)
        return (
            snapshot,
            tool,
            ToolCall(input, tool_use_id, with_handlers(invocation_state, context_handlers), agent),
        )


class RegistrySnapshot(ToolCalls):
    """An immutable view of the registry at one generation; its tools stay callable.

    A snapshot pins tool objects: invoking through it runs the version it saw,
    even after that tool was replaced or unregistered (its cleanup waits for
    calls already running, but a call started after the cleanup ran uses a
    tool that has released its resources).

    Its maps are persistent (``immutables.Map``, a hash array mapped trie):
    the next snapshot shares all but the changed paths with this one, so a
    commit costs O(changed tools) whatever the registry holds. Listings
    (``names``, ``tools``) are worked out on first read and cached.
    """

    __slots__ = (
        "_aliases",
        "_components",
        "_entries",
        "_generation",
        "_holders",
        "_lifecycle",
        "_listing",
        "_search",
        "_tools",
    )

    def __init__(
        self,
        generation: int = 0,
        entries: Iterable[RegistryEntry] = (),
        *,
        lifecycle: Lifecycle[RegistrySnapshot] | None = None,
    ) -> None:
        by_name = {entry.name: entry for entry in entries}
        holders: dict[int, int] = {}
        for entry in by_name.values():
            holders[id(entry.tool)] = holders.get(id(entry.tool), 0) + 1
        self._generation = generation
        self._entries: Map[str, RegistryEntry] = Map(by_name)
        self._aliases: Map[str, str] = Map({normalise_tool_name(name): name for name in by_name})
        self._holders: Map[int, int] = Map(holders)
        self._listing = NameListing()
        self._search = SearchIndex().with_changes((), ((e.name, e.tool) for e in by_name.values()))
        self._tools: tuple[AgentTool, ...] | None = None
        self._lifecycle = lifecycle
        self._components: Map[str, ComponentEntry] = Map()

    @property
    def _names(self) -> tuple[str, ...]:
        return self._listing.resolve(self._entries)

    @property
    def generation(self) -> int:
        """The commit this snapshot reflects (0 for an empty, never-changed registry)."""
        return self._generation

    def _entry(self, name: str) -> RegistryEntry | None:
        return _lookup(self._entries, self._aliases, name)

    def names(self) -> tuple[str, ...]:
        """The registered names, sorted."""
        return self._listing.resolve(self._entries)

    def get(self, name: str) -> AgentTool | None:
        """The tool named exactly ``name``, else the one whose name differs only by '-' vs '_'."""
        entry = self._entry(name)
        return None if entry is None else entry.tool

    def tools(self) -> tuple[AgentTool, ...]:
        """The tools, in name order."""
        tools = self._tools
        if tools is None:
            entries = self._entries
            tools = self._tools = tuple(entries[name].tool for name in self.names())
        return tools

    def specs(self) -> list[ToolSpec]:
        """The tool specs, in name order."""
        return [tool.tool_spec for tool in self.tools()]

    def source_of(self, name: str) -> str | None:
        """Where the named tool came from (e.g. a file path), or None."""
        entry = self._entry(name)
        return None if entry is None else entry.source

    def digest(self, name: str) -> str | None:
        """The named tool's digest (``loader.fingerprint.tool_digest``), or None."""
        entry = self._entry(name)
        return None if entry is None else tool_digest(entry.tool)

    def components(self, kind: ComponentKind | None = None) -> tuple[Component, ...]:
        """The prompts, resources and resource templates (only ``kind`` if given), by kind, then key."""
        found = (entry.component for entry in self._components.values())
        chosen = [c for c in found if kind is None or c.kind is kind]
        return tuple(sorted(chosen, key=lambda c: (c.kind.value, c.key)))

    def component(self, kind: ComponentKind, key: str) -> Component | None:
        """The prompt named ``key``, or the resource (template) of URI ``key``, or None."""
        entry = self._components.get(f"{kind.value}:{key}")
        return None if entry is None else entry.component

    def search_tools(self, query: str, limit: int = 5) -> list[SearchHit]:
        """The ``limit`` tools that best match ``query`` (BM25 over their text), best first.

        A hit is always callable through this snapshot: the index is part of it.
        """
        hits: list[SearchHit] = []
        for name, score in self._search.search(query, limit):
            tool = self._entries[name].tool
            spec = tool.tool_spec
            schema = spec.get("inputSchema", {}).get("json", {})
            hits.append(SearchHit(name, spec.get("description", ""), schema, tool_digest(tool), score))
        return hits

    def tool_config(self, tool_choice: ToolChoice | None = None) -> ToolConfig:
        """The tools section of a model request; the model picks (``{"auto": {}}``) by default."""
        auto: dict[Literal["auto"], ToolChoiceAuto] = {"auto": {}}
        choice = tool_choice if tool_choice is not None else auto
        return {"tools": [{"toolSpec": spec} for spec in self.specs()], "toolChoice": choice}

    def _acquire(self, name: str) -> tuple[RegistrySnapshot, AgentTool | None]:
        """The pinned tool, counted as in flight."""
        tool = self.get(name)
        if tool is not None and self._lifecycle is not None:
            self._lifecycle.enter(tool)
        return self, tool

    async def astream(
        self,
        name: str,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        context_handlers: ContextHandlers | None = None,
    ) -> AsyncIterator[Any]:
        """The pinned tool's stream events as they come, under the call limits; the last is its result.

        For callers that show progress (``tool-loader call``): a synchronous tool
        runs on its lane, so the caller's loop (and a Ctrl-C) never waits on it.
        """
        tool_use_id = tool_use_id or new_tool_use_id()
        tool = self.get(name)
        if tool is None:
            yield unknown_tool(name, tool_use_id, self._names)
            return
        state = with_handlers(invocation_state, context_handlers)
        async for event in astream_counted(
            tool, self._lifecycle, input, tool_use_id, state, generation=self._generation
        ):
            yield event

    def narrowed(self, drop: Iterable[str] = (), add: Iterable[RegistryEntry] = ()) -> RegistrySnapshot:
        """This snapshot without the tools named in ``drop`` and with ``add``, at the same generation.

        Calls through it are counted and limited as calls through this one. Costs
        what it changes, like a commit. For adapters that offer a model part of
        a snapshot (``loader.integrations.skills``).
        """
        batch = RegistryBatch(self)
        for name in drop:
            batch.unregister(name)
        for entry in add:
            batch.replace(entry.tool, source=entry.source)
        return batch.successor(batch.changes(), self._lifecycle, generation=self._generation)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._entry(name) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(self.tools())

    def __repr__(self) -> str:
        return (
            f"<RegistrySnapshot generation={self._generation} tools={list(self._names)}"
            f" components={sorted(self._components.keys())}>"
        )


ToolLike = AgentTool | object
"""What ``register`` and ``replace`` take: an ``AgentTool``, or an instance of a ``@tool`` class."""


def _staged(tool: ToolLike | str, instance: ToolLike | None, verb: str) -> tuple[str, AgentTool]:
    """The name and the ``AgentTool`` of ``verb(tool)`` or ``verb(name, tool)``.

    Raises:
        TypeError: Not a tool, nor an instance of a ``@tool`` class (or a name without its tool).
        ToolNameMismatchError: ``verb(name, tool)`` with a name the tool does not define.
        InvalidToolNameError: The tool's name is outside ``^[A-Za-z0-9_-]{1,64}$``.
    """
    given = tool if isinstance(tool, str) else None
    target = instance if given is not None else tool
    if given is None and instance is not None:
        raise TypeError(
            f"{verb}(tool, ...): pass the name first, as in {verb}(name, tool), or the tool alone"
        )
    found = as_agent_tool(target) if target is not None else None
    if found is None:
        what = "nothing" if target is None else type(target).__name__
        raise TypeError(
            f"{verb}() takes an AgentTool or an instance of a @tool class, got {what}"
            + (f" (after the name {given!r})" if given is not None else "")
        )
    name = check_tool_name(found.tool_name)
    if given is not None and normalise_tool_name(given) != normalise_tool_name(name):
        raise ToolNameMismatchError(given, name, type(target).__name__)
    return name, found


def _differs(old: RegistryEntry, new: RegistryEntry) -> bool:
    return old.tool is not new.tool or old.source != new.source


_Entry = TypeVar("_Entry", RegistryEntry, ComponentEntry)


def _net_changes(
    touched: Iterable[str],
    base: Map[str, _Entry],
    staged: Map[str, _Entry],
    differs: Callable[[_Entry, _Entry], bool],
) -> Iterator[tuple[ChangeKind, str, _Entry | None, _Entry | None, str | None]]:
    """Each touched key's net change from ``base`` to ``staged``: kind, key, old, new, and its source."""
    for key in touched:
        old, new = base.get(key), staged.get(key)
        if old is None and new is not None:
            yield ChangeKind.ADDED, key, None, new, new.source
        elif old is not None and new is None:
            yield ChangeKind.REMOVED, key, old, None, old.source
        elif old is not None and new is not None and differs(old, new):
            yield ChangeKind.REPLACED, key, old, new, new.source


class ToolWrites:
    """``register`` and ``replace`` in their two forms, stated once for the registry and its batches.

    A class using it says where a write is staged (``_staging``): a batch on itself, the registry in
    a batch of its own, committed at once.
    """

    __slots__ = ()

    def _staging(self) -> AbstractContextManager[RegistryBatch]:
        raise NotImplementedError

    @overload
    def register(self, tool: ToolLike, /, *, source: str | None = None) -> None: ...
    @overload
    def register(self, name: str, tool: ToolLike, /, *, source: str | None = None) -> None: ...
    def register(
        self, tool: ToolLike | str, instance: ToolLike | None = None, /, *, source: str | None = None
    ) -> None:
        """Add ``tool`` under its name: ``register(tool)``, or ``register(name, tool)`` naming it.

        ``tool`` is an ``AgentTool`` or an instance of a ``@tool`` class (registered
        as that very instance, a ``ClassTool``; its ``cleanup`` runs once it is
        unregistered or replaced).

        Raises:
            DuplicateToolError: The name (or its '-'/'_' variant) is taken.
            InvalidToolNameError: The tool's name is outside ``^[A-Za-z0-9_-]{1,64}$``.
            ToolNameMismatchError: ``name`` is not the name the tool defines.
            TypeError: Not a tool, nor an instance of a ``@tool`` class.
            RuntimeError: The registry is closed, or the batch is over.
        """
        with self._staging() as staged:
            staged._write("register", tool, instance, source)

    @overload
    def replace(self, tool: ToolLike, /, *, source: str | None = None) -> AgentTool | None: ...
    @overload
    def replace(self, name: str, tool: ToolLike, /, *, source: str | None = None) -> AgentTool | None: ...
    def replace(
        self, tool: ToolLike | str, instance: ToolLike | None = None, /, *, source: str | None = None
    ) -> AgentTool | None:
        """Add or swap ``tool`` (forms as ``register``); returns the tool it displaced (cleaned up once
        idle), if any."""
        with self._staging() as staged:
            return staged._write("replace", tool, instance, source)


class RegistryBatch(ToolWrites):
    """Changes staged against the pending state of an open ``ToolRegistry.batch()``.

    Each call checks against what the batch has staged so far, so a duplicate
    or a missing name fails at the call that causes it.
    """

    def __init__(self, base: RegistrySnapshot) -> None:
        self._base = base
        self._entries = base._entries
        self._aliases = base._aliases
        self._holders = base._holders
        self._touched: dict[str, None] = {}
        self._components = base._components
        self._touched_components: dict[str, None] = {}
        self._refusal: str | None = None
        self._committed: RegistryChangeSet | None = None

    @property
    def committed(self) -> RegistryChangeSet | None:
        """What this batch committed, once its ``with`` block has ended (None if it changed nothing).

        Listeners of the loader's own (pluggy hooks, events) can be fed from this
        one object instead of deriving the change a second time.
        """
        return self._committed

    def _check_open(self) -> None:
        if self._refusal is not None:
            raise RuntimeError(self._refusal)

    def _find(self, name: str) -> RegistryEntry | None:
        return _lookup(self._entries, self._aliases, name)

    def _put(self, entry: RegistryEntry) -> None:
        self._entries = self._entries.set(entry.name, entry)
        self._aliases = self._aliases.set(normalise_tool_name(entry.name), entry.name)
        key = id(entry.tool)
        self._holders = self._holders.set(key, self._holders.get(key, 0) + 1)
        self._touched[entry.name] = None

    def _drop(self, entry: RegistryEntry) -> None:
        self._entries = self._entries.delete(entry.name)
        self._aliases = self._aliases.delete(normalise_tool_name(entry.name))
        key = id(entry.tool)
        held = self._holders[key] - 1
        self._holders = self._holders.set(key, held) if held else self._holders.delete(key)
        self._touched[entry.name] = None

    def holds(self, tool: AgentTool) -> bool:
        """Whether ``tool`` (this very object) is staged under any name."""
        return id(tool) in self._holders

    def _staging(self) -> AbstractContextManager[RegistryBatch]:
        return nullcontext(self)

    def _write(
        self,
        verb: Literal["register", "replace"],
        tool: ToolLike | str,
        instance: ToolLike | None,
        source: str | None,
    ) -> AgentTool | None:
        """Stage one ``register`` or ``replace``; returns the tool it displaces."""
        self._check_open()
        name, found = _staged(tool, instance, verb)
        existing = self._find(name)
        if existing is not None:
            if verb == "register":
                raise DuplicateToolError(name, existing_name=existing.name, existing_source=existing.source)
            self._drop(existing)
        self._put(RegistryEntry(name, found, source))
        return None if existing is None else existing.tool

    def unregister(self, name: str) -> AgentTool:
        """Stage removing the named tool and return it.

        Raises:
            ToolNotFoundError: No tool of that name is staged.
        """
        self._check_open()
        existing = self._find(name)
        if existing is None:
            raise ToolNotFoundError(name, tuple(sorted(self._entries)))
        self._drop(existing)
        return existing.tool

    def put_component(self, component: Component, *, source: str | None = None) -> Component | None:
        """Stage adding or swapping a prompt, resource or resource template; returns the one it displaces."""
        self._check_open()
        key = component.component_id
        existing = self._components.get(key)
        self._components = self._components.set(key, ComponentEntry(component, source))
        self._touched_components[key] = None
        return None if existing is None else existing.component

    def drop_component(self, kind: ComponentKind, key: str) -> Component | None:
        """Stage removing a prompt (by name) or a resource (template) (by URI); returns it, or None."""
        self._check_open()
        staged_key = f"{kind.value}:{key}"
        existing = self._components.get(staged_key)
        if existing is None:
            return None
        self._components = self._components.delete(staged_key)
        self._touched_components[staged_key] = None
        return existing.component

    def get_component(self, kind: ComponentKind, key: str) -> Component | None:
        """The staged prompt, resource or resource template of that kind and key."""
        entry = self._components.get(f"{kind.value}:{key}")
        return None if entry is None else entry.component

    def component_changes(self) -> tuple[ComponentChange, ...]:
        """The net effect on each touched component, in the order they were first touched."""
        found = _net_changes(self._touched_components, self._base._components, self._components, operator.ne)
        return tuple(
            ComponentChange(kind, new.component if new else None, old.component if old else None, source)
            for kind, _, old, new, source in found
        )

    def get(self, name: str) -> AgentTool | None:
        """The staged tool of that name (exact, then '-'/'_' normalised)."""
        entry = self._find(name)
        return None if entry is None else entry.tool

    def names(self) -> tuple[str, ...]:
        """The staged names, sorted."""
        return tuple(sorted(self._entries))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def refuse(self, reason: str = BATCH_OVER) -> None:
        """Refuse every later change (its ``with`` block ended, or the registry is closed)."""
        self._refusal = reason

    @property
    def base(self) -> RegistrySnapshot:
        """The snapshot this batch started from."""
        return self._base

    def changes(self) -> tuple[RegistryChange, ...]:
        """The net effect on each touched name, in the order names were first touched."""
        found = _net_changes(self._touched, self._base._entries, self._entries, _differs)
        return tuple(
            RegistryChange(kind, name, new.tool if new else None, old.tool if old else None, source)
            for kind, name, old, new, source in found
        )

    def successor(
        self,
        changes: tuple[RegistryChange, ...],
        lifecycle: Lifecycle[RegistrySnapshot] | None,
        *,
        generation: int | None = None,
    ) -> RegistrySnapshot:
        """The snapshot this batch produces; shares the batch's maps, so O(changes).

        Its generation is the next one unless ``generation`` says (``RegistrySnapshot.narrowed``).
        Records the change set as ``committed``.
        """
        generation = self._base.generation + 1 if generation is None else generation
        snapshot = RegistrySnapshot.__new__(RegistrySnapshot)
        snapshot._generation = generation
        snapshot._entries = self._entries
        snapshot._aliases = self._aliases
        snapshot._holders = self._holders
        snapshot._listing = self._base._listing.successor(
            (c.name for c in changes if c.kind is ChangeKind.ADDED),
            (c.name for c in changes if c.kind is ChangeKind.REMOVED),
        )
        snapshot._search = self._base._search.with_changes(
            (c.name for c in changes if c.previous is not None),
            ((c.name, c.tool) for c in changes if c.tool is not None),
        )
        snapshot._tools = None
        snapshot._lifecycle = lifecycle
        snapshot._components = self._components
        self._committed = RegistryChangeSet(generation, changes, self.component_changes())
        return snapshot
