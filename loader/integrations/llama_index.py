"""The loader's live tools in a LlamaIndex workflow agent (``FunctionAgent`` and kin), as a tool retriever.

``FunctionAgent(llm=llm, tool_retriever=LiveToolRetriever(loader))``

* A workflow agent asks its ``tool_retriever`` for tools at every step (with
  the user's message as the query) and then again for every tool call (with
  the called tool's name). A step's query takes a new registry snapshot and
  offers its tools, each bound to it; a query naming a tool of the snapshot
  last offered answers from that snapshot. A step's calls so run the versions
  the step offered.
* Tools carry the tools' JSON Schemas as is: ``metadata.get_parameters_dict()``
  (what ``to_openai_tool()`` and the LLM integrations send) returns the
  schema; ``metadata.fn_schema`` is a permissive placeholder model, since
  LlamaIndex's own pydantic schemas cannot say everything JSON Schema can.
* An error result is a ``ToolOutput`` with ``is_error=True``, LlamaIndex's own
  tool-failure path; the run goes on. Text, images and documents come back
  as LlamaIndex content blocks.

The last offer is one per retriever, so give each concurrently running agent
its own ``LiveToolRetriever``. A step that calls a name it was not offered,
alongside other calls, counts as a new offer for the calls that follow it.

LlamaIndex is an optional extra: ``llama-index``.
"""

from __future__ import annotations

import threading
from typing import Any

from ..distribution import missing_extra

try:
    from llama_index.core.base.llms.types import ContentBlock, DocumentBlock, ImageBlock, TextBlock
    from llama_index.core.objects.base import ObjectRetriever
    from llama_index.core.schema import QueryBundle, QueryType
    from llama_index.core.tools import AsyncBaseTool, BaseTool, ToolMetadata, ToolOutput
    from pydantic import BaseModel, ConfigDict
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "LlamaIndex", "llama-index", exc) from exc

from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..types import AgentTool, JSONSchema, ToolResult
from .discovery import DiscoveryMode
from .live import ResultPart, ToolSource, failed, input_schema, mime_type, registry_of, result_parts
from .offer import ToolOffer
from .skills import SkillsMode

__all__ = ["LiveTool", "LiveToolRetriever"]


class _AnyArguments(BaseModel):
    """Stands in for ``fn_schema``: the tool's JSON Schema is served by ``get_parameters_dict``."""

    model_config = ConfigDict(extra="allow")


class _SchemaMetadata(ToolMetadata):
    """``ToolMetadata`` that answers with the tool's own JSON Schema."""

    def __init__(self, name: str, description: str, schema: JSONSchema) -> None:
        super().__init__(description=description, name=name, fn_schema=_AnyArguments)
        self.schema = schema

    def get_parameters_dict(self) -> dict[str, Any]:
        return self.schema


def _block(part: ResultPart) -> ContentBlock:
    if part.kind == "text":
        return TextBlock(text=part.text)
    if part.kind == "image":
        return ImageBlock(image=part.data, image_mimetype=mime_type(part))
    return DocumentBlock(data=part.data, document_mimetype=mime_type(part), title=part.name)


class LiveTool(AsyncBaseTool):
    """One registry tool, bound to the snapshot it came from, as a LlamaIndex tool."""

    def __init__(self, snapshot: RegistrySnapshot, tool: AgentTool) -> None:
        spec = tool.tool_spec
        self._snapshot = snapshot
        self._name = spec["name"]
        self._metadata = _SchemaMetadata(spec["name"], spec.get("description", ""), input_schema(tool))

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    def _output(self, arguments: dict[str, Any], result: ToolResult) -> ToolOutput:
        return ToolOutput(
            tool_name=self._name,
            blocks=[_block(part) for part in result_parts(result)],
            raw_input=arguments,
            raw_output=result,
            is_error=failed(result),
        )

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        arguments = _arguments(args, kwargs)
        return self._output(arguments, self._snapshot.invoke(self._name, arguments))

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        arguments = _arguments(args, kwargs)
        return self._output(arguments, await self._snapshot.ainvoke(self._name, arguments))


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Agents call with keyword arguments; a lone dict (``tool.call({...})``) is taken as them."""
    if len(args) == 1 and not kwargs and isinstance(args[0], dict):
        return dict(args[0])
    return dict(kwargs)


class LiveToolRetriever(ObjectRetriever[BaseTool]):
    """The loader's tools for a LlamaIndex workflow agent: one registry snapshot per step.

    Example:
        >>> loader = ToolLoader(["./tools"]); loader.scan(); loader.start()
        >>> agent = FunctionAgent(llm=llm, tool_retriever=LiveToolRetriever(loader))
    """

    def __init__(
        self, source: ToolSource, *, discovery: DiscoveryMode = "all", skills: SkillsMode = "listed"
    ) -> None:
        """Serve the tools of ``source``: a ``ToolRegistry``, or anything with a ``registry`` (a loader).

        The base class wraps an index retriever and a node mapping; this one
        answers from the registry, so neither is set up. ``discovery="search"``
        offers ``search_tools`` and ``call_tool`` instead of every tool
        (``loader.integrations.discovery``).

        Raises:
            ValueError: ``skills="on-activation"``: a retriever is never told which run asks, so
                it cannot keep a run's activated skills to that run.
        """
        self._registry = registry_of(source)
        self._offer = ToolOffer(self._registry, discovery=discovery, skills=skills)
        if self._offer.per_run:
            raise ValueError(
                'LiveToolRetriever cannot take skills="on-activation": LlamaIndex asks a tool retriever '
                "for tools without saying which run asks, so a skill activated in one run could not be "
                'kept to that run; use skills="listed" (the skill\'s tools offered like any other)'
            )
        self._node_postprocessors = []
        self._lock = threading.Lock()
        self._offered: tuple[RegistrySnapshot, dict[str, LiveTool]] | None = None

    @property
    def registry(self) -> ToolRegistry:
        """The registry the tools come from."""
        return self._registry

    def _answer(self, query: QueryType) -> list[BaseTool]:
        text = query.query_str if isinstance(query, QueryBundle) else str(query)
        with self._lock:
            offered = self._offered
            if offered is not None and text in offered[1]:
                return list(offered[1].values())  # a call, looking its tool up by name
            snapshot = self._offer.step()
            if offered is None or offered[0] is not snapshot:
                offered = self._offered = (
                    snapshot,
                    {t.tool_name: LiveTool(snapshot, t) for t in snapshot.tools()},
                )
            return list(offered[1].values())

    def retrieve(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        """A step's tools (a new snapshot), or, for a tool's name, the tools last offered."""
        return self._answer(str_or_query_bundle)

    async def aretrieve(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        """Async ``retrieve``."""
        return self._answer(str_or_query_bundle)
