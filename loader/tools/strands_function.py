"""A Strands ``@tool`` function served by the loader: the tool kind the Strands discovery plugin makes.

Imported only when a tool file has imported Strands' decorator (the plugin
checks ``sys.modules`` first), so Strands stays an optional extra.
"""

from __future__ import annotations

import logging
from typing import Any, cast

try:
    from strands.tools.decorator import DecoratedFunctionTool
    from strands.types._events import ToolInterruptEvent, ToolResultEvent, ToolStreamEvent
    from strands.types.tools import ToolUse as StrandsToolUse
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "loader.tools.strands_function needs Strands Agents: pip install strands-agents"
    ) from exc

from ..calls.containment import belongs_to_caller, failure_log_level
from ..results import error_result, exception_result
from ..types import ToolGenerator, ToolResult, ToolSpec, ToolUse, new_tool_use_id
from .description import DescribedTool, ToolDescription

__all__ = ["StrandsFunctionTool"]

logger = logging.getLogger(__name__)


class StrandsFunctionTool(DescribedTool):
    """A Strands ``@tool`` function served by the loader (Strands to us).

    Delegates to the Strands tool's own ``stream``, so its validation,
    special parameters and result formatting stay exactly Strands'; the
    Strands events are unwrapped into ours (progress data, then the
    ``ToolResult`` dict last).
    """

    def __init__(
        self, strands_tool: DecoratedFunctionTool[..., Any], *, source_file: str | None = None
    ) -> None:
        super().__init__()
        self._tool = strands_tool
        self._source_file = source_file

    @property
    def strands_tool(self) -> DecoratedFunctionTool[..., Any]:
        """The wrapped Strands tool."""
        return self._tool

    def _describe(self) -> ToolDescription:
        name = self._tool.tool_name
        display = {"Name": name, "Type": "function", "Framework": "Strands @tool"}
        display["Function"] = getattr(self._tool, "__name__", name)
        if self._source_file:
            display["Source"] = self._source_file
        return ToolDescription(
            name=name,
            spec=cast(ToolSpec, self._tool.tool_spec),
            tool_type="function",  # as Strands itself reports; the display names Strands
            # Strands runs a sync body in a worker thread itself, so the stream never blocks a loop.
            is_async=True,
            source_file=self._source_file,
            display=display,
            hot_reload=True,
        )

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        tool_use_id = tool_use.get("toolUseId") or new_tool_use_id()
        strands_use = cast(StrandsToolUse, {**tool_use, "toolUseId": tool_use_id})
        events = self._tool.stream(strands_use, invocation_state, **kwargs)
        try:
            while True:
                try:
                    event = await events.__anext__()
                except StopAsyncIteration:
                    return
                except BaseException as exc:  # Strands contains Exception only; a sys.exit() must not escape
                    if belongs_to_caller(exc):
                        raise
                    logger.log(
                        failure_log_level(exc),
                        "tool_name=<%s> | strands tool raised",
                        self.tool_name,
                        exc_info=exc,
                    )
                    yield exception_result(tool_use_id, exc)
                    return
                if isinstance(event, ToolResultEvent):
                    yield cast(ToolResult, event.tool_result)
                    return
                if isinstance(event, ToolInterruptEvent):
                    yield error_result(
                        tool_use_id,
                        f"Error: tool {self.tool_name!r} asked for an interrupt, which "
                        "needs a Strands agent to answer it",
                    )
                    return
                if isinstance(event, ToolStreamEvent):
                    yield event["tool_stream_event"]["data"]
                    continue
                yield event
        finally:
            await events.aclose()
