"""The registry's immutable view at one generation, on persistent maps readers share.

A ``RegistrySnapshot`` is what readers see: a plain attribute read of the
registry's current one, with no lock. Its ``immutables.Map`` s are shared with
the next snapshot but for the changed paths, which ``loader.registry.batch``
stages and ``RegistrySnapshot._from_batch`` adopts, so a commit costs what it
changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from immutables import Map

from ..names import normalise_tool_name
from ..results import error_result
from ..types import AgentTool, ToolChoice, ToolChoiceAuto, ToolConfig, ToolResult, ToolSpec, new_tool_use_id
from .changes import ChangeKind, RegistryChange
from .lifecycle import Lifecycle, arun_counted, run_counted
from .name_listing import NameListing

if TYPE_CHECKING:
    from .batch import RegistryBatch

__all__ = ["RegistryEntry", "RegistrySnapshot", "unknown_tool"]


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    """One registered name: its tool and where it came from (e.g. a file path)."""

    name: str
    tool: AgentTool
    source: str | None


def unknown_tool(name: str, tool_use_id: str, available: tuple[str, ...]) -> ToolResult:
    """The error result for a call to a name nobody registered, listing what is there."""
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

    def _entry(self, name: str) -> RegistryEntry | None:
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
            return unknown_tool(name, tool_use_id, self._names)
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
            return unknown_tool(name, tool_use_id, self._names)
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
