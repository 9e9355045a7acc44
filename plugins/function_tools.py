"""Discovers ``@tool`` functions defined in a tool module."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from loader.hookspecs import hookimpl
from loader.tools.function_tool import FunctionTool
from loader.types import AgentTool


@hookimpl
def tool_loader_discover_tools(module: ModuleType, path: Path) -> Sequence[AgentTool] | None:
    """Every ``FunctionTool`` whose function was defined in this module (imports are not re-exported)."""
    found: list[AgentTool] = []
    for value in list(vars(module).values()):
        if isinstance(value, FunctionTool) and value.original_function.__module__ == module.__name__:
            found.append(value)
    return found
