"""The loader's live tools in the OpenAI Agents SDK: ``LiveAgent``, an ``agents.Agent`` with a tool source.

``LiveAgent(name="a", model=model, tool_source=loader)``

* The runner asks ``agent.get_all_tools()`` once per turn, before the model
  call, and runs that turn's tool calls with the ``FunctionTool`` objects it
  got. ``LiveAgent`` overrides ``get_all_tools`` to add one registry
  snapshot's tools, each a ``FunctionTool`` bound to that snapshot: a turn's
  calls run the versions its model call was shown.
* ``agent.tools`` is never touched: the SDK refuses a tools list that changes
  during a run, and the agent's own tools keep their names (a live tool of
  the same name is left out).
* Schemas are the tools' JSON Schemas, non-strict (``strict_json_schema=False``,
  as the SDK does for MCP tools). An error result becomes the call's output
  text, as the SDK does for MCP error results; set ``tool_error_function`` to
  word it yourself (it gets a ``LiveToolError``). Text comes back as a string,
  images and documents as the SDK's image and file outputs.

The OpenAI Agents SDK is an optional extra: ``openai-agents``.
"""

from __future__ import annotations

import base64
import inspect
import json
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic

from ..distribution import missing_extra

try:
    from agents import (
        Agent,
        FunctionTool,
        RunContextWrapper,
        Tool,
        ToolOutputFileContentDict,
        ToolOutputImageDict,
        ToolOutputTextDict,
    )
    from agents.run_context import TContext
    from agents.tool import ToolErrorFunction
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "the OpenAI Agents SDK", "openai-agents", exc) from exc

from ..registry.snapshot import RegistrySnapshot
from ..types import AgentTool, ToolResult
from .discovery import DiscoveryMode
from .live import ResultPart, ToolSource, failed, input_schema, mime_type, registry_of, result_parts
from .offer import ToolOffer
from .skills import SkillRun, SkillsMode

__all__ = ["LiveAgent", "LiveToolError"]


class LiveToolError(Exception):
    """A live tool's error result, as handed to ``LiveAgent.tool_error_function``."""


_Output = str | list[ToolOutputTextDict | ToolOutputImageDict | ToolOutputFileContentDict]


def _item(part: ResultPart) -> ToolOutputTextDict | ToolOutputImageDict | ToolOutputFileContentDict:
    if part.kind == "text":
        return ToolOutputTextDict(type="text", text=part.text)
    url = f"data:{mime_type(part)};base64,{base64.b64encode(part.data).decode('ascii')}"
    if part.kind == "image":
        return ToolOutputImageDict(type="image", image_url=url)
    return ToolOutputFileContentDict(type="file", file_data=url, filename=f"{part.name}.{part.format}")


def _output(result: ToolResult) -> _Output:
    parts = result_parts(result)
    if all(part.kind == "text" for part in parts):
        return "\n".join(part.text for part in parts)
    return [_item(part) for part in parts]


async def _error_output(error_function: ToolErrorFunction, ctx: ToolContext[Any], text: str) -> str:
    worded = error_function(ctx, LiveToolError(text))
    return str(await worded) if inspect.isawaitable(worded) else str(worded)


async def _invoke(
    snapshot: RegistrySnapshot,
    name: str,
    error_function: ToolErrorFunction | None,
    ctx: ToolContext[Any],
    arguments: str,
) -> _Output:
    try:
        tool_input = json.loads(arguments) if arguments.strip() else {}
    except ValueError as exc:
        text = f"Tool {name}: the arguments are not valid JSON: {exc}"
        return await _error_output(error_function, ctx, text) if error_function else text
    result = await snapshot.ainvoke(name, tool_input, tool_use_id=ctx.tool_call_id)
    output = _output(result)
    if failed(result) and error_function is not None:
        text = output if isinstance(output, str) else "\n".join(p.text for p in result_parts(result))
        return await _error_output(error_function, ctx, text)
    return output


def _function_tool(
    snapshot: RegistrySnapshot, tool: AgentTool, error_function: ToolErrorFunction | None
) -> Tool:
    spec = tool.tool_spec
    return FunctionTool(
        name=spec["name"],
        description=spec.get("description", ""),
        params_json_schema=input_schema(tool),
        on_invoke_tool=partial(_invoke, snapshot, spec["name"], error_function),
        strict_json_schema=False,
    )


@dataclass
class LiveAgent(Agent[TContext], Generic[TContext]):
    """An ``agents.Agent`` whose tools also include the loader's, one registry snapshot per turn.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = LiveAgent(name="assistant", model=model, tool_source=loader)
        >>> result = await Runner.run(agent, "hello")
    """

    tool_source: ToolSource | None = None
    """Where the live tools come from: a ``ToolRegistry``, or anything with a ``registry`` (a loader)."""

    tool_error_function: ToolErrorFunction | None = None
    """How a live tool's error reaches the model; None: the error result's own text."""

    discovery: DiscoveryMode = "all"
    """``"search"``: offer ``search_tools`` and ``call_tool`` instead of every tool."""

    skills: SkillsMode = "listed"
    """``"on-activation"``: offer a skill's tools once the run called ``activate_skill`` for it."""

    _live_cache: tuple[RegistrySnapshot | None, list[Tool]] = field(
        default=(None, []), init=False, repr=False, compare=False
    )
    _tool_offer: ToolOffer | None = field(default=None, init=False, repr=False, compare=False)
    _skill_runs: weakref.WeakKeyDictionary[RunContextWrapper[Any], SkillRun] = field(
        default_factory=weakref.WeakKeyDictionary, init=False, repr=False, compare=False
    )

    def _offer(self, source: ToolSource) -> ToolOffer:
        """The offer for ``source`` and the options as they are now (fields may be reassigned)."""
        registry = registry_of(source)
        offer = self._tool_offer
        if (
            offer is None
            or offer.registry is not registry
            or (offer.discovery, offer.skills) != (self.discovery, self.skills)
        ):
            offer = self._tool_offer = ToolOffer(registry, discovery=self.discovery, skills=self.skills)
        return offer

    def live_tools(
        self, snapshot: RegistrySnapshot | None = None, run_context: RunContextWrapper[Any] | None = None
    ) -> list[Tool]:
        """The tools of ``snapshot`` (default: this turn's of the run of ``run_context``) bound to it."""
        if self.tool_source is None:
            return []
        if snapshot is None:
            offer = self._offer(self.tool_source)
            run = None
            if offer.per_run and run_context is not None:  # the runner passes one context per run
                run = self._skill_runs.setdefault(run_context, SkillRun(offer.registry))
            snapshot = offer.step(run)
        cached, tools = self._live_cache
        if cached is not snapshot:  # two turns racing here build the same list twice
            error_function = self.tool_error_function
            tools = [_function_tool(snapshot, tool, error_function) for tool in snapshot.tools()]
            self._live_cache = (snapshot, tools)
        return tools

    async def get_all_tools(self, run_context: RunContextWrapper[TContext]) -> list[Tool]:
        """The agent's own tools (and MCP tools), then this turn's snapshot of the live ones."""
        own = await super().get_all_tools(run_context)
        taken = {tool.name for tool in own}
        live = self.live_tools(run_context=run_context)
        return [*own, *(tool for tool in live if tool.name not in taken)]
