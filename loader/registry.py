"""The thread-safe tool registry: immutable snapshots swapped under a lock.

Readers take the current ``RegistrySnapshot`` with a plain attribute read and
never wait for writers. Writers stage changes in a ``RegistryBatch`` while
holding the write lock, then swap in the next snapshot (one generation, one
``RegistryChangeSet``). Change sets are queued under the write lock and
delivered outside it by one thread at a time, so listeners see them in commit
order. Tools that leave the registry get ``cleanup()`` once the calls running
through them have returned (``loader.lifecycle`` counts them).
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from immutables import Map

from .calls import CallLimits, CallRunner
from .errors import DuplicateToolError, ToolNotFoundError
from .lifecycle import Lifecycle, arun_counted, cleanup, run_counted, safe_name
from .names import check_tool_name, normalise_tool_name
from .results import error_result
from .sorted_names import NameListing
from .types import AgentTool, ToolChoice, ToolChoiceAuto, ToolConfig, ToolResult, ToolSpec, new_tool_use_id

__all__ = [
    "ChangeKind",
    "RegistryBatch",
    "RegistryChange",
    "RegistryChangeSet",
    "RegistrySnapshot",
    "ToolRegistry",
]

logger = logging.getLogger(__name__)

Listener = Callable[["RegistryChangeSet"], None]

_BATCH_OVER = "this registry batch is closed; open a new one with registry.batch()"


class ChangeKind(StrEnum):
    """What happened to a name in one commit."""

    ADDED = "added"
    REMOVED = "removed"
    REPLACED = "replaced"


@dataclass(frozen=True, slots=True)
class RegistryChange:
    """One name's change in a commit."""

    kind: ChangeKind
    name: str
    tool: AgentTool | None
    previous: AgentTool | None
    source: str | None


@dataclass(frozen=True, slots=True)
class RegistryChangeSet:
    """Everything one commit changed, tagged with the generation it produced."""

    generation: int
    changes: tuple[RegistryChange, ...]


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    tool: AgentTool
    source: str | None


def _tool_name(tool: AgentTool) -> str:
    if not isinstance(tool, AgentTool):
        raise TypeError(f"the registry holds AgentTool objects, got {type(tool).__name__}")
    return check_tool_name(tool.tool_name)


def _differs(old: _Entry, new: _Entry) -> bool:
    return old.tool is not new.tool or old.source != new.source


def _unknown(name: str, tool_use_id: str, available: tuple[str, ...]) -> ToolResult:
    listing = ", ".join(available) if available else "none"
    return error_result(tool_use_id, f"Unknown tool: {name}. Available tools: {listing}")


class RegistrySnapshot:
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

    __slots__ = ("_aliases", "_entries", "_generation", "_holders", "_lifecycle", "_listing", "_tools")

    def __init__(
        self,
        generation: int = 0,
        entries: Iterable[_Entry] = (),
        *,
        lifecycle: Lifecycle[RegistrySnapshot] | None = None,
    ) -> None:
        by_name = {entry.name: entry for entry in entries}
        holders: dict[int, int] = {}
        for entry in by_name.values():
            holders[id(entry.tool)] = holders.get(id(entry.tool), 0) + 1
        self._generation = generation
        self._entries: Map[str, _Entry] = Map(by_name)
        self._aliases: Map[str, str] = Map({normalise_tool_name(name): name for name in by_name})
        self._holders: Map[int, int] = Map(holders)
        self._listing = NameListing()
        self._tools: tuple[AgentTool, ...] | None = None
        self._lifecycle = lifecycle

    @classmethod
    def _from_batch(
        cls,
        generation: int,
        staged: RegistryBatch,
        changes: tuple[RegistryChange, ...],
        lifecycle: Lifecycle[RegistrySnapshot],
    ) -> RegistrySnapshot:
        """The snapshot a finished batch produces; shares the batch's maps, so O(changes)."""
        snapshot = cls.__new__(cls)
        snapshot._generation = generation
        snapshot._entries = staged._entries
        snapshot._aliases = staged._aliases
        snapshot._holders = staged._holders
        snapshot._listing = staged._base._listing.successor(
            (c.name for c in changes if c.kind is ChangeKind.ADDED),
            (c.name for c in changes if c.kind is ChangeKind.REMOVED),
        )
        snapshot._tools = None
        snapshot._lifecycle = lifecycle
        return snapshot

    @property
    def _names(self) -> tuple[str, ...]:
        return self._listing.resolve(self._entries)

    @property
    def generation(self) -> int:
        """The commit this snapshot reflects (0 for an empty, never-changed registry)."""
        return self._generation

    def _entry(self, name: str) -> _Entry | None:
        entry = self._entries.get(name)
        if entry is None:
            exact = self._aliases.get(normalise_tool_name(name))
            entry = None if exact is None else self._entries[exact]
        return entry

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

    def tool_config(self, tool_choice: ToolChoice | None = None) -> ToolConfig:
        """The tools section of a model request; the model picks (``{"auto": {}}``) by default."""
        auto: dict[Literal["auto"], ToolChoiceAuto] = {"auto": {}}
        choice = tool_choice if tool_choice is not None else auto
        return {"tools": [{"toolSpec": spec} for spec in self.specs()], "toolChoice": choice}

    def invoke(
        self,
        name: str,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the pinned tool; an unknown name or a failing tool gives an error result."""
        tool_use_id = tool_use_id or new_tool_use_id()
        tool = self.get(name)
        if tool is None:
            return _unknown(name, tool_use_id, self._names)
        if self._lifecycle is not None:
            self._lifecycle.enter(tool)
        return run_counted(tool, self._lifecycle, input, tool_use_id, invocation_state, agent)

    async def ainvoke(
        self,
        name: str,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Async ``invoke``."""
        tool_use_id = tool_use_id or new_tool_use_id()
        tool = self.get(name)
        if tool is None:
            return _unknown(name, tool_use_id, self._names)
        if self._lifecycle is not None:
            self._lifecycle.enter(tool)
        return await arun_counted(tool, self._lifecycle, input, tool_use_id, invocation_state, agent)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._entry(name) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(self.tools())

    def __repr__(self) -> str:
        return f"<RegistrySnapshot generation={self._generation} tools={list(self._names)}>"


class RegistryBatch:
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

    def _find(self, name: str) -> _Entry | None:
        entry = self._entries.get(name)
        if entry is None:
            exact = self._aliases.get(normalise_tool_name(name))
            entry = None if exact is None else self._entries[exact]
        return entry

    def _put(self, entry: _Entry) -> None:
        self._entries = self._entries.set(entry.name, entry)
        self._aliases = self._aliases.set(normalise_tool_name(entry.name), entry.name)
        key = id(entry.tool)
        self._holders = self._holders.set(key, self._holders.get(key, 0) + 1)
        self._touched[entry.name] = None

    def _drop(self, entry: _Entry) -> None:
        self._entries = self._entries.delete(entry.name)
        self._aliases = self._aliases.delete(normalise_tool_name(entry.name))
        key = id(entry.tool)
        held = self._holders[key] - 1
        self._holders = self._holders.set(key, held) if held else self._holders.delete(key)
        self._touched[entry.name] = None

    def holds(self, tool: AgentTool) -> bool:
        """Whether ``tool`` (this very object) is staged under any name."""
        return id(tool) in self._holders

    def register(self, tool: AgentTool, *, source: str | None = None) -> None:
        """Stage adding ``tool``.

        Raises:
            DuplicateToolError: The name (or its '-'/'_' variant) is taken.
            InvalidToolNameError: The tool's name is outside ``^[A-Za-z0-9_-]{1,64}$``.
        """
        self._check_open()
        name = _tool_name(tool)
        existing = self._find(name)
        if existing is not None:
            raise DuplicateToolError(name, existing_name=existing.name, existing_source=existing.source)
        self._put(_Entry(name, tool, source))

    def replace(self, tool: AgentTool, *, source: str | None = None) -> AgentTool | None:
        """Stage adding or swapping ``tool``; returns the tool it displaces, if any."""
        self._check_open()
        name = _tool_name(tool)
        existing = self._find(name)
        if existing is not None:
            self._drop(existing)
        self._put(_Entry(name, tool, source))
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

    def _changes(self) -> tuple[RegistryChange, ...]:
        """The net effect on each touched name, in the order names were first touched."""
        base = self._base._entries
        changes: list[RegistryChange] = []
        for name in self._touched:
            old, new = base.get(name), self._entries.get(name)
            if old is None and new is not None:
                changes.append(RegistryChange(ChangeKind.ADDED, name, new.tool, None, new.source))
            elif old is not None and new is None:
                changes.append(RegistryChange(ChangeKind.REMOVED, name, None, old.tool, old.source))
            elif old is not None and new is not None and _differs(old, new):
                changes.append(RegistryChange(ChangeKind.REPLACED, name, new.tool, old.tool, new.source))
        return tuple(changes)


class ToolRegistry:
    """Named tools for agents and servers; thread-safe, with snapshots, generations and change events.

    After ``close()`` the registry is empty and every register, replace or
    unregister raises ``RuntimeError`` (so a late reload cannot leak tools whose
    cleanup would never run); reads, calls and empty batches still work.
    """

    def __init__(self, *, limits: CallLimits | None = None) -> None:
        """An empty registry; ``limits`` bound every call through it (default: ``CallLimits()``)."""
        # The first snapshot is empty, so it needs no lifecycle of its own to count calls.
        self._lifecycle: Lifecycle[RegistrySnapshot] = Lifecycle(RegistrySnapshot(), CallRunner(limits))
        self._write_lock = threading.Lock()
        self._writer: int | None = None
        self._closed = False
        self._listeners: tuple[tuple[object, Listener], ...] = ()
        self._listeners_lock = threading.Lock()
        self._pending: deque[RegistryChangeSet] = deque()
        self._delivery_lock = threading.Lock()
        self._delivering = threading.local()

    # -- reading: lock-free, from the current snapshot --------------------------------------------

    @property
    def generation(self) -> int:
        """How many commits the registry has seen."""
        return self._lifecycle.current.generation

    @property
    def limits(self) -> CallLimits:
        """The timeout and per-tool concurrency cap every call runs under."""
        return self._lifecycle.runner.limits

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._closed

    def snapshot(self) -> RegistrySnapshot:
        """The current immutable snapshot."""
        return self._lifecycle.current

    def get(self, name: str) -> AgentTool | None:
        """The tool of that name (exact, then '-'/'_' normalised), or None."""
        return self._lifecycle.current.get(name)

    def names(self) -> tuple[str, ...]:
        """The registered names, sorted."""
        return self._lifecycle.current.names()

    def list(self) -> builtins.list[AgentTool]:
        """The registered tools, in name order."""
        return list(self._lifecycle.current.tools())

    def specs(self) -> builtins.list[ToolSpec]:
        """The tool specs, in name order."""
        return self._lifecycle.current.specs()

    def tool_config(self, tool_choice: ToolChoice | None = None) -> ToolConfig:
        """The tools section of a model request (``{"auto": {}}`` unless told otherwise)."""
        return self._lifecycle.current.tool_config(tool_choice)

    def source_of(self, name: str) -> str | None:
        """Where the named tool came from, or None."""
        return self._lifecycle.current.source_of(name)

    def __contains__(self, name: object) -> bool:
        return name in self._lifecycle.current

    def __len__(self) -> int:
        return len(self._lifecycle.current)

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(self._lifecycle.current)

    def search(
        self, text: str | None = None, category: str | None = None, tags: Iterable[str] | None = None
    ) -> builtins.list[AgentTool]:
        """Tools matching every given filter, in name order.

        ``text`` is a case-insensitive substring of the name or description;
        ``category`` matches exactly, ignoring case; every one of ``tags`` must
        be present (ignoring case).
        """
        needle = text.lower() if text else None
        wanted_category = category.lower() if category else None
        wanted_tags = {tags.lower()} if isinstance(tags, str) else {tag.lower() for tag in tags or ()}
        found: builtins.list[AgentTool] = []
        for tool in self._lifecycle.current.tools():
            try:
                if needle is not None:
                    haystack = (tool.tool_name + "\n" + tool.tool_spec.get("description", "")).lower()
                    if needle not in haystack:
                        continue
                if wanted_category is not None and (tool.category or "").lower() != wanted_category:
                    continue
                if wanted_tags and not wanted_tags <= {tag.lower() for tag in tool.tags}:
                    continue
            except Exception:
                logger.exception("tool_name=<%s> | skipped in search: its metadata raised", safe_name(tool))
                continue
            found.append(tool)
        return found

    # -- calling ----------------------------------------------------------------------------------

    def invoke(
        self,
        name: str,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the named tool; never raises for the tool's or the input's fault."""
        tool_use_id = tool_use_id or new_tool_use_id()
        snapshot, tool = self._lifecycle.acquire(name)
        if tool is None:
            return _unknown(name, tool_use_id, snapshot.names())
        return run_counted(tool, self._lifecycle, input, tool_use_id, invocation_state, agent)

    async def ainvoke(
        self,
        name: str,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Async ``invoke``; a pending async cleanup runs on the caller's loop."""
        tool_use_id = tool_use_id or new_tool_use_id()
        snapshot, tool = self._lifecycle.acquire(name)
        if tool is None:
            return _unknown(name, tool_use_id, snapshot.names())
        return await arun_counted(tool, self._lifecycle, input, tool_use_id, invocation_state, agent)

    # -- writing ----------------------------------------------------------------------------------

    def register(self, tool: AgentTool, *, source: str | None = None) -> None:
        """Add ``tool`` under its name.

        Raises:
            DuplicateToolError: The name (or its '-'/'_' variant) is taken.
            InvalidToolNameError: The tool's name is outside ``^[A-Za-z0-9_-]{1,64}$``.
            RuntimeError: The registry is closed.
        """
        with self.batch() as staged:
            staged.register(tool, source=source)

    def replace(self, tool: AgentTool, *, source: str | None = None) -> AgentTool | None:
        """Add or swap ``tool``; returns the tool it displaced (cleaned up once idle), if any."""
        with self.batch() as staged:
            return staged.replace(tool, source=source)

    def unregister(self, name: str) -> AgentTool:
        """Remove the named tool and return it (cleaned up once idle).

        Raises:
            ToolNotFoundError: No tool of that name is registered.
        """
        with self.batch() as staged:
            return staged.unregister(name)

    @contextmanager
    def batch(self) -> Iterator[RegistryBatch]:
        """Stage several changes and commit them as one swap and one change set.

        The write lock is held for the whole block, so keep it short. If the
        block raises, nothing is applied; if it changes nothing, nothing is
        committed (no generation, no event).

        Raises:
            RuntimeError: The registry is closed, or this thread already holds
                an open batch (stage through that batch instead).
        """
        with self._transaction(closing=False) as staged:
            yield staged

    def close(self) -> None:
        """Remove every tool (one change set) and run their cleanups; later writes raise."""
        if self._closed:
            return
        with self._transaction(closing=True) as staged:
            for name in staged.names():
                staged.unregister(name)
        logger.debug("registry closed")

    @contextmanager
    def _transaction(self, *, closing: bool) -> Iterator[RegistryBatch]:
        if self._writer == threading.get_ident():
            raise RuntimeError("a registry batch is already open in this thread; stage changes through it")
        ready: builtins.list[AgentTool] = []
        with self._write_lock:
            staged = RegistryBatch(self._lifecycle.current)
            if self._closed:
                # Reads and an empty batch still work, so shutting down in any order is safe.
                staged._refusal = "the tool registry is closed"
                yield staged
                return
            self._writer = threading.get_ident()
            try:
                yield staged
                staged._refusal = _BATCH_OVER
                ready = self._commit(staged)
                if closing:
                    self._closed = True
            finally:
                staged._refusal = _BATCH_OVER
                self._writer = None
        for tool in ready:
            cleanup(tool)
        self._deliver()

    def _commit(self, staged: RegistryBatch) -> builtins.list[AgentTool]:
        """Swap in the staged state (write lock held); returns the tools to clean up now."""
        changes = staged._changes()
        if not changes:
            return []
        generation = staged._base.generation + 1
        snapshot = RegistrySnapshot._from_batch(generation, staged, changes, self._lifecycle)
        # A displaced tool may still be registered under another name: the holder counts say.
        retired = {
            id(c.previous): c.previous
            for c in changes
            if c.previous is not None and not staged.holds(c.previous)
        }
        revived = [change.tool for change in changes if change.tool is not None]
        ready = self._lifecycle.swap(snapshot, retired.values(), revived)
        change_set = RegistryChangeSet(generation, changes)
        staged._committed = change_set
        self._pending.append(change_set)
        logger.debug("generation=<%d>, changes=<%d> | committed", generation, len(changes))
        return ready

    # -- change events ----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every future change set; returns the function that unsubscribes."""
        token = object()
        with self._listeners_lock:
            self._listeners = (*self._listeners, (token, listener))

        def unsubscribe() -> None:
            with self._listeners_lock:
                self._listeners = tuple(item for item in self._listeners if item[0] is not token)

        return unsubscribe

    def _deliver(self) -> None:
        """Hand queued change sets to listeners, one deliverer at a time, in commit order.

        A commit made by a listener is queued and delivered by the loop already
        running in this thread, after the current change set reached everyone.
        """
        if getattr(self._delivering, "active", False):
            return
        with self._delivery_lock:
            self._delivering.active = True
            try:
                while True:
                    try:
                        change_set = self._pending.popleft()
                    except IndexError:
                        return
                    for _, listener in self._listeners:
                        try:
                            listener(change_set)
                        except Exception:
                            logger.exception(
                                "generation=<%d>, listener=<%r> | listener raised",
                                change_set.generation,
                                listener,
                            )
            finally:
                self._delivering.active = False
