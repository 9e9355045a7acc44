"""Module-based tools as Strands defines them: a ``TOOL_SPEC`` dict plus a function named like the file.

The function takes ``(tool_use, **kwargs)`` (the invocation state as keyword
arguments) and returns a ``ToolResult``; it may be async.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

from ..calls.containment import belongs_to_caller, failure_log_level
from ..context.handlers import without_handlers
from ..context.tool_context import ToolContext
from ..errors import ToolDefinitionError
from ..names import check_tool_name
from ..results import exception_result, to_tool_result
from ..types import ToolGenerator, ToolResult, ToolSpec, ToolUse, call_frame, new_tool_use_id
from .description import DescribedTool, ToolDescription
from .validation import invalid_input_result, schema_problems, schema_validator

__all__ = ["ModuleTool", "validate_tool_spec"]

logger = logging.getLogger(__name__)


def validate_tool_spec(spec: Any, *, where: str) -> ToolSpec:
    """Check a ``TOOL_SPEC`` dict and return it with ``inputSchema`` in ``{"json": ...}`` form.

    Raises:
        ToolDefinitionError: naming ``where`` and the missing or malformed key.
    """
    if not isinstance(spec, Mapping):
        raise ToolDefinitionError(f"{where}: TOOL_SPEC must be a dict, not {type(spec).__name__}")
    for key in ("name", "description", "inputSchema"):
        if key not in spec:
            raise ToolDefinitionError(f"{where}: TOOL_SPEC is missing {key!r}")
    check_tool_name(spec["name"])
    if not isinstance(spec["description"], str):
        raise ToolDefinitionError(f"{where}: TOOL_SPEC 'description' must be a string")
    schema = spec["inputSchema"]
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(f"{where}: TOOL_SPEC 'inputSchema' must be a dict")
    json_schema = schema.get("json", schema)
    if not isinstance(json_schema, Mapping):
        raise ToolDefinitionError(f"{where}: TOOL_SPEC inputSchema 'json' must be a dict")
    result: dict[str, Any] = dict(spec)
    result["inputSchema"] = {"json": dict(json_schema)}
    return result  # type: ignore[return-value]


class ModuleTool(DescribedTool):
    """A Strands-style module tool: the spec comes from ``TOOL_SPEC``, the body from a function."""

    def __init__(
        self, spec: ToolSpec, function: Callable[..., Any], *, source_file: str | None = None
    ) -> None:
        super().__init__()
        self._spec = spec
        self._function = function
        self._is_async = inspect.iscoroutinefunction(function)
        self._wants_context = _takes_context(function)
        self._validator = _validator_for(spec)
        self._source_file = source_file

    @property
    def function(self) -> Callable[..., Any]:
        """The module function that implements the tool."""
        return self._function

    def _describe(self) -> ToolDescription:
        code = getattr(self._function, "__code__", None)
        line: int | None = code.co_firstlineno if code is not None else None
        display = {"Name": self._spec["name"], "Type": "module"}
        display["Function"] = getattr(self._function, "__name__", "?")
        if self._source_file:
            display["Source"] = f"{self._source_file}:{line or 1}"
        return ToolDescription(
            name=self._spec["name"],
            spec=self._spec,
            tool_type="module",
            is_async=self._is_async,
            source_file=self._source_file,
            source_line=line,
            display=display,
            hot_reload=True,
        )

    def _keywords(self, tool_use: ToolUse, state: dict[str, Any]) -> dict[str, Any]:
        """The invocation state as keyword arguments (the context handlers never among them), plus
        ``tool_context`` for a function that declares it."""
        keywords = without_handlers(state)
        if self._wants_context:
            keywords["tool_context"] = ToolContext.for_call(tool_use, state)
        return keywords

    def _finish(self, value: Any, tool_use_id: str) -> ToolResult:
        return to_tool_result(value, tool_use_id)

    def _failure(self, exc: BaseException, tool_use_id: str) -> ToolResult:
        """The error result for anything the tool raised; the caller's cancellation or Ctrl-C propagates."""
        if belongs_to_caller(exc):
            raise exc
        logger.log(
            failure_log_level(exc), "tool_name=<%s> | module tool raised", self.tool_name, exc_info=exc
        )
        return exception_result(tool_use_id, exc)

    def _invalid(self, input: Any, tool_use_id: str) -> ToolResult | None:
        """An error result if the input breaks the spec's schema (Strands would pass it on unchecked)."""
        if self._validator is None:
            return None
        problems = schema_problems({} if input is None else input, self._validator)
        if not problems:
            return None
        return invalid_input_result(tool_use_id, self.tool_name, problems)

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        tool_use_id = tool_use.get("toolUseId") or new_tool_use_id()
        invalid = self._invalid(tool_use.get("input"), tool_use_id)
        if invalid is not None:
            yield invalid
            return
        try:
            keywords = self._keywords(tool_use, invocation_state)
            if self._is_async:
                value = await self._function(tool_use, **keywords)
            else:
                value = self._function(tool_use, **keywords)
            result = self._finish(value, tool_use_id)
        except BaseException as exc:
            result = self._failure(exc, tool_use_id)
        yield result  # outside the try: a consumer closing the stream here is not the tool's fault

    def _invoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        if self._is_async:
            return super()._invoke(input, tool_use_id, invocation_state, agent)
        use_id = tool_use_id or new_tool_use_id()
        invalid = self._invalid(input, use_id)
        if invalid is not None:
            return invalid
        tool_use, state = call_frame(self.tool_name, input, use_id, invocation_state, agent)
        try:
            return self._finish(self._function(tool_use, **self._keywords(tool_use, state)), use_id)
        except BaseException as exc:
            return self._failure(exc, use_id)


def _takes_context(function: Callable[..., Any]) -> bool:
    """Whether the module function declares a ``tool_context`` parameter (then it gets the context)."""
    try:
        found = inspect.signature(function).parameters.get("tool_context")
    except (TypeError, ValueError):
        return False
    return found is not None and found.kind is not inspect.Parameter.VAR_POSITIONAL


def _validator_for(spec: ToolSpec) -> Any:
    """The spec's compiled input schema, or None when the schema itself is not valid JSON Schema."""
    try:
        return schema_validator(spec["inputSchema"]["json"])
    except SchemaError as exc:
        logger.warning(
            "tool_name=<%s> | input schema is not valid JSON Schema, input is not checked: %s",
            spec["name"],
            exc.message,
        )
        return None
