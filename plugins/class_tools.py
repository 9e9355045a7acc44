"""Discovers ``@tool`` classes defined in a tool module and instantiates them."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from loader.hookspecs import ClassArgs, hookimpl
from loader.tools.class_tool import ClassTool, get_tool_metadata
from loader.types import AgentTool


@hookimpl
def tool_loader_discover_tools(
    module: ModuleType, path: Path, class_args: ClassArgs
) -> Sequence[AgentTool] | None:
    """One ``ClassTool`` per decorated class defined here.

    Constructor arguments come from the ``tool_loader_class_tool_args`` hook
    (no arguments when no plugin answers).
    """
    found: list[AgentTool] = []
    for value in list(vars(module).values()):
        if (
            inspect.isclass(value)
            and value.__module__ == module.__name__
            and get_tool_metadata(value) is not None
            and not inspect.isabstract(value)
        ):
            args, kwargs = class_args(value, path)
            found.append(ClassTool.from_class(value, *args, **kwargs))
    return found
