"""The thread-safe tool registry: immutable snapshots swapped under a lock.

Readers take the current ``RegistrySnapshot`` (``loader.registry.snapshot``)
with a plain attribute read and never wait for writers. Writers stage changes
in a ``RegistryBatch`` (``loader.registry.snapshot``) while holding the write
lock, then swap in the next snapshot (one generation, one
``RegistryChangeSet``, ``loader.registry.changes``). Change sets are queued
under the write lock and delivered outside it by one thread at a time, so
listeners see them in commit order. Tools that leave the registry get
``cleanup()`` once the calls running through them have returned
(``loader.registry.lifecycle`` counts them).
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager

from ..calls.runner import CallLimits, CallRunner
from ..listeners import Listeners
from ..types import AgentTool, ToolChoice, ToolConfig, ToolSpec
from .changes import RegistryChangeSet
from .lifecycle import Lifecycle, cleanup, safe_name
from .snapshot import RegistryBatch, RegistrySnapshot, SearchHit, ToolCalls, ToolWrites

__all__ = ["ToolRegistry"]

logger = logging.getLogger(__name__)

Listener = Callable[[RegistryChangeSet], None]


class ToolRegistry(ToolCalls, ToolWrites):
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
        self._listeners: Listeners[RegistryChangeSet] = Listeners("change-set", logger)
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

    def search_tools(self, query: str, limit: int = 5) -> builtins.list[SearchHit]:
        """The ``limit`` tools best matching ``query``, best first; each is callable in the same snapshot."""
        return self._lifecycle.current.search_tools(query, limit)

    # -- calling ----------------------------------------------------------------------------------

    def _acquire(self, name: str) -> tuple[RegistrySnapshot, AgentTool | None]:
        return self._lifecycle.acquire(name)

    # -- writing ----------------------------------------------------------------------------------

    def _staging(self) -> AbstractContextManager[RegistryBatch]:
        return self.batch()

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
            for component in staged.base.components():
                staged.drop_component(component.kind, component.key)
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
                staged.refuse("the tool registry is closed")
                yield staged
                return
            self._writer = threading.get_ident()
            try:
                yield staged
                staged.refuse()
                ready = self._commit(staged)
                if closing:
                    self._closed = True
            finally:
                staged.refuse()
                self._writer = None
        for tool in ready:
            cleanup(tool)
        self._deliver()

    def _commit(self, staged: RegistryBatch) -> builtins.list[AgentTool]:
        """Swap in the staged state (write lock held); returns the tools to clean up now."""
        changes = staged.changes()
        if not changes and not staged.component_changes():
            return []
        snapshot = staged.successor(changes, self._lifecycle)
        change_set = staged.committed
        assert change_set is not None  # successor() records it
        # A displaced tool may still be registered under another name: the holder counts say.
        retired = {
            id(c.previous): c.previous
            for c in changes
            if c.previous is not None and not staged.holds(c.previous)
        }
        revived = [change.tool for change in changes if change.tool is not None]
        ready = self._lifecycle.swap(snapshot, retired.values(), revived)
        self._pending.append(change_set)
        logger.debug("generation=<%d>, changes=<%d> | committed", change_set.generation, len(changes))
        return ready

    # -- change events ----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every future change set; returns the function that unsubscribes."""
        return self._listeners.subscribe(listener)

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
                    self._listeners.tell(change_set)
            finally:
                self._delivering.active = False
