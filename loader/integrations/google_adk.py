"""The loader's live tools in a Google ADK agent, as a toolset.

``LlmAgent(name="a", model=model, tools=[LiveToolset(loader)])``

* ADK resolves an agent's toolsets before every model request and runs that
  request's function calls with the very tool objects it resolved
  (``llm_request.tools_dict``). ``get_tools`` answers from one registry
  snapshot, each tool bound to it: a request's calls run the versions its
  declarations showed.
* ``BaseToolset`` caches ``get_tools`` per invocation by default, which would
  freeze the tools for a whole ``run_async``; ``LiveToolset`` turns that cache
  off (as ADK's own ``SkillToolset`` does), so every model request sees the
  registry as it is.
* An agent's own tool keeps its name when it comes first in ``tools=[...]``:
  a live tool of the same name is then left out of the request (put the
  ``LiveToolset`` last).
* Declarations carry the tools' JSON Schemas as is (``parameters_json_schema``,
  ADK's default for function declarations). A result is ``{"result": text}``
  and an error result ``{"error": text}``, ADK's convention for tool
  failures, which the model reads and the run survives. Images and binary
  documents become a short text placeholder (function responses are JSON).

Google ADK is an optional extra: ``google-adk``.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

from ..distribution import missing_extra

try:
    from google.adk.agents.readonly_context import ReadonlyContext
    from google.adk.models.llm_request import LlmRequest
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.base_toolset import BaseToolset, ToolPredicate
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "Google ADK", "google-adk", exc) from exc

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..types import AgentTool
from .discovery import DiscoveryMode
from .live import ToolSource, failed, input_schema, registry_of, result_text
from .offer import ToolOffer
from .skills import SkillRun, SkillsMode

__all__ = ["LiveTool", "LiveToolset"]

logger = logging.getLogger(__name__)

LIVE_TOOL_ERROR = "LIVE_TOOL_ERROR"
"""The error type ADK's telemetry records for a live tool's error result."""

MAX_SKILL_RUNS = 256
"""How many invocations keep the skills they activated (oldest forgotten first)."""


class LiveTool(BaseTool):
    """One registry tool, bound to the snapshot it came from, as an ADK ``BaseTool``."""

    def __init__(self, snapshot: RegistrySnapshot, tool: AgentTool) -> None:
        spec = tool.tool_spec
        super().__init__(name=spec["name"], description=spec.get("description", ""))
        self._snapshot = snapshot
        self._tool_name = spec["name"]  # ``name`` gets the toolset's prefix, the registry knows this one
        self._schema = input_schema(tool)

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self._schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        result = await self._snapshot.ainvoke(
            self._tool_name, args, tool_use_id=tool_context.function_call_id
        )
        return {"error" if failed(result) else "result": result_text(result)}

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        """Declare the tool, unless the agent already gave the request a tool of this name."""
        if self.name in llm_request.tools_dict:
            logger.debug("tool_name=<%s> | the agent has its own tool of this name", self.name)
            return
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)

    def _detect_error_in_response(self, response: Any) -> str | None:
        """ADK's telemetry hook: our error results are ``{"error": ...}``."""
        return LIVE_TOOL_ERROR if isinstance(response, dict) and "error" in response else None


class LiveToolset(BaseToolset):
    """The loader's tools for an ADK agent: one registry snapshot per model request.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = LlmAgent(name="assistant", model="gemini-2.5-flash", tools=[LiveToolset(loader)])
    """

    def __init__(
        self,
        source: ToolSource,
        *,
        tool_filter: ToolPredicate | list[str] | None = None,
        tool_name_prefix: str | None = None,
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        Args:
            source: Where the tools come from; it keeps loading and reloading on its own.
            tool_filter: ADK's filter: a predicate, or the names to offer.
            tool_name_prefix: ADK's prefix for the offered names (``prefix_name``).
            discovery: ``"search"`` offers ``search_tools`` and ``call_tool`` instead of every tool
                (``loader.integrations.discovery``).
            skills: ``"on-activation"`` offers a skill's tools only once the invocation called
                ``activate_skill`` for it (``loader.integrations.skills``).
        """
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self._use_invocation_cache = False  # the per-invocation cache would hide changes for a whole run
        self._registry = registry_of(source)
        self._offer = ToolOffer(self._registry, discovery=discovery, skills=skills)
        self._skill_runs: OrderedDict[str, SkillRun] = OrderedDict()
        self._lock = threading.Lock()
        self._cached: tuple[RegistrySnapshot | None, list[LiveTool]] = (None, [])

    @property
    def registry(self) -> ToolRegistry:
        """The registry the tools come from."""
        return self._registry

    def live_tools(self, snapshot: RegistrySnapshot | None = None) -> list[LiveTool]:
        """The tools of ``snapshot`` (default: this request's), each bound to it."""
        snapshot = snapshot or self._offer.step()
        cached, tools = self._cached
        if cached is not snapshot:  # two requests racing here build the same list twice
            tools = [LiveTool(snapshot, tool) for tool in snapshot.tools()]
            self._cached = (snapshot, tools)
        return tools

    def _skill_run(self, readonly_context: ReadonlyContext | None) -> SkillRun | None:
        """The skills the invocation asking activated (None unless ``skills="on-activation"``)."""
        if not self._offer.per_run or readonly_context is None:
            return None
        invocation = readonly_context.invocation_id
        with self._lock:
            run = self._skill_runs.get(invocation)
            if run is None:
                run = self._skill_runs[invocation] = SkillRun(self._registry)
                while len(self._skill_runs) > MAX_SKILL_RUNS:
                    self._skill_runs.popitem(last=False)
            return run

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """This request's snapshot's tools that pass the filter."""
        snapshot = self._offer.step(self._skill_run(readonly_context))
        live = self.live_tools(snapshot)
        return [tool for tool in live if self._is_tool_selected(tool, readonly_context)]
