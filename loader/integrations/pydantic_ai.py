"""The loader's live tools in a pydantic-ai ``Agent``, as a toolset.

``Agent(model, toolsets=[LiveToolset(loader)])``

* pydantic-ai gives every run its own copy of a toolset (``for_run``) and
  marks each run step (``for_run_step``): there the copy takes one registry
  snapshot, and lists its tools (``get_tools``) from it for the whole step.
* Each listed tool carries that snapshot, and ``call_tool`` runs through it:
  a step's calls run the versions the model was shown in that step.
* A name the agent's own function tools use (``tools=``, ``@agent.tool``) is
  left out: pydantic-ai refuses two tools of one name and would end the run.
  A clash with another toolset (an MCP server's, say) still gets pydantic-ai's
  own error; wrap one of them in ``.prefixed(...)``.
* Schemas are the tools' JSON Schemas, as is (``parameters_json_schema``); the
  registry validates arguments. A tool's error result raises ``ToolFailed``:
  the model sees a failed tool return, no retry budget is spent, the run goes
  on. Text comes back as ``str``, images and documents as ``BinaryContent``.

pydantic-ai is an optional extra: ``pydantic-ai``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Generic

from ..distribution import missing_extra

try:
    from pydantic_ai import RunContext, ToolDefinition
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.messages import BinaryContent
    from pydantic_ai.tools import AgentDepsT
    from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "pydantic-ai", "pydantic-ai", exc) from exc

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..types import AgentTool, ToolResult
from .discovery import DiscoveryMode
from .live import ToolSource, failed, input_schema, mime_type, registry_of, result_parts
from .offer import ToolOffer
from .skills import SkillRun, SkillsMode

__all__ = ["LiveToolset"]

_ANY_ARGS = SchemaValidator(core_schema.any_schema())
"""Arguments pass through as the model sent them: the registry validates them against the tool's schema."""


@dataclass(kw_only=True)
class _SnapshotTool(ToolsetTool[AgentDepsT], Generic[AgentDepsT]):
    """A listed tool together with the snapshot that listed it."""

    snapshot: RegistrySnapshot


def _output(result: ToolResult) -> Any:
    """A result as pydantic-ai tool output: a string, with ``BinaryContent`` for images and documents."""
    parts = result_parts(result)
    if failed(result):
        raise ToolFailed("\n".join(part.text for part in parts if part.kind == "text") or "the tool failed")
    if all(part.kind == "text" for part in parts):
        return "\n".join(part.text for part in parts)
    return [
        part.text if part.kind == "text" else BinaryContent(part.data, media_type=mime_type(part))
        for part in parts
    ]


def _own_names(ctx: RunContext[Any]) -> set[str]:
    """The names of the agent's own function tools (``tools=``, ``@agent.tool``): a clash ends a run."""
    names: set[str] = set()
    if ctx.agent is None:
        return names

    def visit(toolset: AbstractToolset[Any]) -> None:
        if isinstance(toolset, FunctionToolset):
            names.update(toolset.tools)

    for toolset in ctx.agent.toolsets:
        toolset.apply(visit)
    return names


class LiveToolset(AbstractToolset[AgentDepsT]):
    """The loader's tools for a pydantic-ai agent: one registry snapshot per run step.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = Agent(model, toolsets=[LiveToolset(loader)])
    """

    def __init__(
        self,
        source: ToolSource,
        *,
        id: str | None = None,
        max_retries: int = 1,
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        Args:
            source: Where the tools come from; it keeps loading and reloading on its own.
            id: The toolset's id (pydantic-ai wants one for durable execution).
            max_retries: Retries pydantic-ai allows a call whose arguments are not valid JSON.
            discovery: ``"search"`` offers ``search_tools`` and ``call_tool`` instead of every tool
                (``loader.integrations.discovery``).
            skills: ``"on-activation"`` offers a skill's tools only once the run called
                ``activate_skill`` for it (``loader.integrations.skills``).
        """
        self._registry = registry_of(source)
        self._offer = ToolOffer(self._registry, discovery=discovery, skills=skills)
        self._skill_run: SkillRun | None = None
        self._id = id
        self._max_retries = max_retries
        self._snapshot: RegistrySnapshot | None = None

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def registry(self) -> ToolRegistry:
        """The registry the tools come from."""
        return self._registry

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """A copy for this run, so concurrent runs keep their own step snapshot and activated skills."""
        run = copy.copy(self)
        run._snapshot = None
        run._skill_run = self._offer.run()
        return run

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """Take this step's snapshot: the step lists and calls tools from it."""
        self._snapshot = self._offer.step(self._skill_run)
        return self

    def _step_snapshot(self) -> RegistrySnapshot:
        return self._snapshot if self._snapshot is not None else self._offer.step(self._skill_run)

    def _listed(self, snapshot: RegistrySnapshot, tool: AgentTool) -> _SnapshotTool[AgentDepsT]:
        spec = tool.tool_spec
        definition = ToolDefinition(
            name=spec["name"], description=spec.get("description"), parameters_json_schema=input_schema(tool)
        )
        return _SnapshotTool(
            toolset=self,
            tool_def=definition,
            max_retries=self._max_retries,
            args_validator=_ANY_ARGS,
            snapshot=snapshot,
        )

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The step snapshot's tools, but for the names the agent's own function tools use."""
        snapshot = self._step_snapshot()
        own = _own_names(ctx)
        return {
            tool.tool_name: self._listed(snapshot, tool)
            for tool in snapshot.tools()
            if tool.tool_name not in own
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Run the call through the snapshot that listed ``tool``."""
        snapshot = tool.snapshot if isinstance(tool, _SnapshotTool) else self._step_snapshot()
        return _output(await snapshot.ainvoke(name, tool_args, tool_use_id=ctx.tool_call_id))
