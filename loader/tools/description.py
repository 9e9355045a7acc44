"""One description of a tool's identity, and the base class that answers from it.

Every tool kind fills a ``ToolDescription`` (its name, spec, kind, source and
display facts) and inherits ``DescribedTool``, whose ``AgentTool`` properties
read it; a process-mode proxy is handed the description its worker made. The
wire form of a description lives with the worker protocol (``loader.isolation``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ..types import AgentTool, ToolExample, ToolSpec
from .metadata import ToolMetadata
from .schema import copy_json

__all__ = ["DescribedTool", "ToolDescription", "description_of"]


@dataclass(frozen=True, slots=True)
class ToolDescription:
    """What a listing or a model request needs to know of one tool, without calling it."""

    name: str
    spec: ToolSpec
    tool_type: str
    is_async: bool = False
    streaming: bool = False
    source_file: str | None = None
    source_line: int | None = None
    version: str | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    display: dict[str, str] = field(default_factory=dict)
    hot_reload: bool = False
    metadata: ToolMetadata | None = None
    examples: tuple[ToolExample, ...] = ()
    search_hint: str | None = None
    always_load: bool = False


class DescribedTool(AgentTool):
    """An ``AgentTool`` whose identity properties read one ``ToolDescription``.

    A kind implements ``_describe``; it runs once, on first read, so facts that
    cost something to find (a class's source line) are found only when asked.
    """

    @functools.cached_property
    def description(self) -> ToolDescription:
        """Everything this tool says about itself."""
        return self._describe()

    def _describe(self) -> ToolDescription:
        raise NotImplementedError(f"{type(self).__name__} must implement _describe or set description")

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self.description.name

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec; each access returns a fresh copy the caller may change freely."""
        return copy_json(self.description.spec)  # type: ignore[no-any-return]

    @property
    def tool_type(self) -> str:
        """The tool's kind: ``function``, ``class`` or ``module``."""
        return self.description.tool_type

    @property
    def supports_hot_reload(self) -> bool:
        """Whether a new version may replace this one at any time."""
        return self.description.hot_reload

    @property
    def is_async(self) -> bool:
        """Whether the tool runs on the caller's event loop (its body is ``async``)."""
        return self.description.is_async

    @property
    def is_generator(self) -> bool:
        """Whether the tool streams events (a sync or async generator)."""
        return self.description.streaming

    @property
    def source_file(self) -> str | None:
        """The file that defines the tool, if known."""
        return self.description.source_file

    @property
    def source_line(self) -> int | None:
        """The line where the definition starts, if known."""
        return self.description.source_line

    @property
    def version(self) -> str | None:
        """The version a class tool declares (None for other kinds)."""
        return self.description.version

    @property
    def metadata(self) -> ToolMetadata | None:
        """A class tool's ``ToolMetadata`` (None for other kinds)."""
        return self.description.metadata

    @property
    def category(self) -> str | None:
        """The tool's declared category."""
        return self.description.category

    @property
    def tags(self) -> tuple[str, ...]:
        """The tool's declared tags."""
        return self.description.tags

    @property
    def examples(self) -> tuple[ToolExample, ...]:
        """The tool's runnable examples."""
        return self.description.examples

    @property
    def search_hint(self) -> str | None:
        """Extra words ``search_tools`` finds the tool by."""
        return self.description.search_hint

    @property
    def always_load(self) -> bool:
        """Whether a search-mode listing still lists the tool itself."""
        return self.description.always_load

    def get_display_properties(self) -> dict[str, str]:
        """What a listing shows of the tool (a fresh copy)."""
        return dict(self.description.display)


def description_of(tool: AgentTool) -> ToolDescription:
    """The description of any ``AgentTool``: its own, or one read from its properties."""
    if isinstance(tool, DescribedTool):
        return tool.description
    metadata = getattr(tool, "metadata", None)
    version = getattr(tool, "version", None)
    line = getattr(tool, "source_line", None)
    source = getattr(tool, "source_file", None)
    return ToolDescription(
        name=tool.tool_name,
        spec=tool.tool_spec,
        tool_type=tool.tool_type,
        is_async=getattr(tool, "is_async", None) is True,
        streaming=getattr(tool, "is_generator", None) is True,
        source_file=source if isinstance(source, str) else None,
        source_line=line if isinstance(line, int) else None,
        version=None if version is None else str(version),
        category=tool.category,
        tags=tuple(tool.tags),
        display=tool.get_display_properties(),
        hot_reload=bool(tool.supports_hot_reload),
        metadata=metadata if isinstance(metadata, ToolMetadata) else None,
        examples=tuple(tool.examples),
        search_hint=tool.search_hint,
        always_load=tool.always_load,
    )
