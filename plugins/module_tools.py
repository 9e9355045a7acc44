"""Discovers Strands-style module tools: ``TOOL_SPEC`` plus a function named like the file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from loader.errors import ToolDefinitionError
from loader.hookspecs import hookimpl
from loader.tools.module_tool import ModuleTool, validate_tool_spec
from loader.types import AgentTool


@hookimpl
def tool_loader_discover_tools(module: ModuleType, path: Path) -> Sequence[AgentTool] | None:
    """The module tool, if the module defines ``TOOL_SPEC``.

    The function is the one named like the file (as Strands requires), or else
    the one named like ``TOOL_SPEC["name"]``.
    """
    raw_spec = vars(module).get("TOOL_SPEC")
    if raw_spec is None:
        return None
    spec = validate_tool_spec(raw_spec, where=str(path))
    for candidate in (path.stem, spec["name"]):
        function = vars(module).get(candidate)
        if callable(function):
            return [ModuleTool(spec, function, source_file=str(path))]
    raise ToolDefinitionError(
        f"{path}: TOOL_SPEC is defined but there is no function named {path.stem!r}"
        f" (or {spec['name']!r}) taking (tool_use, **kwargs)"
    )
