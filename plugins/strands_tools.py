"""Discovers Strands ``@tool`` functions (``from strands import tool``) defined in a tool module.

Silent without Strands: a module can only hold a Strands tool if it imported
Strands' decorator, so when ``strands.tools.decorator`` was never imported
there is nothing to look for and Strands is not imported here either.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from loader.hookspecs import hookimpl
from loader.types import AgentTool

logger = logging.getLogger(__name__)


@hookimpl
def tool_loader_discover_tools(module: ModuleType, path: Path) -> Sequence[AgentTool] | None:
    """Every Strands ``DecoratedFunctionTool`` whose function was defined in this module (not imported)."""
    decorator_module = sys.modules.get("strands.tools.decorator")
    tool_class = getattr(decorator_module, "DecoratedFunctionTool", None)
    if tool_class is None:
        return []
    found = [
        value
        for value in list(vars(module).values())
        if isinstance(value, tool_class) and getattr(value, "__module__", None) == module.__name__
    ]
    if not found:
        return []
    try:
        from loader.tools.strands_function import StrandsFunctionTool
    except ImportError:
        logger.debug("path=<%s> | strands tools found but the strands tool kind cannot load", path)
        return []
    return [StrandsFunctionTool(value, source_file=str(path)) for value in found]
