"""The pluggy side of importing: the plugin manager and discovery, shared by every isolation mode.

Which tools an imported module defines is asked here, of every plugin, merged,
with bad and duplicate names refused as typed errors; the in-process loader
and a worker process call the same code, so the same file fails the same way.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from ..errors import DuplicateToolInFileError, InvalidToolNameError, ToolDefinitionError
from ..hookspecs import ENTRY_POINT_GROUP, PROJECT_NAME, ToolLoaderHookSpecs
from ..names import is_valid_tool_name, normalise_tool_name
from ..types import AgentTool, Component

__all__ = [
    "class_tool_args",
    "configure_plugins",
    "discover",
    "discover_components",
    "discover_tools",
    "has_implementations",
    "make_plugin_manager",
    "notify_hook",
]

logger = logging.getLogger(__name__)


def make_plugin_manager(
    plugins: Sequence[object], *, builtin: bool = True, entry_points: bool = True
) -> pluggy.PluginManager:
    """A plugin manager with the built-in plugins, entry-point plugins and ``plugins``.

    ``configure_plugins`` then hands the plugins their loader, once it is built.
    """
    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(ToolLoaderHookSpecs)
    if builtin:
        names: tuple[str, ...] = importlib.import_module("loader.plugins").BUILTIN_PLUGINS
        for module_name in names:
            manager.register(importlib.import_module(module_name), name=module_name)
    if entry_points:
        try:
            manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
        except Exception:
            logger.exception("group=<%s> | could not load plugin entry points", ENTRY_POINT_GROUP)
    for plugin in plugins:
        manager.register(plugin)
    return manager


def configure_plugins(manager: pluggy.PluginManager, loader: Any) -> None:
    """Call ``tool_loader_configure`` with ``loader`` (historic: plugins registered later get it too)."""
    manager.hook.tool_loader_configure.call_historic(kwargs={"loader": loader})


def has_implementations(manager: pluggy.PluginManager, hook_name: str) -> bool:
    """Whether any plugin implements ``hook_name`` (if none does, callers skip building its arguments)."""
    return bool(getattr(manager.hook, hook_name).get_hookimpls())


def notify_hook(manager: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> None:
    """Call a notification hook; a plugin's failure is logged, never raised into the loader."""
    if not has_implementations(manager, hook_name):
        return  # nobody listens: a batch of thousands of files skips thousands of empty calls
    try:
        getattr(manager.hook, hook_name)(**kwargs)
    except Exception:
        logger.exception("hook=<%s> | plugin raised", hook_name)


def class_tool_args(
    manager: pluggy.PluginManager, cls: type, path: Path
) -> tuple[Sequence[Any], dict[str, Any]]:
    """Constructor arguments for a ``@tool`` class, from the ``tool_loader_class_tool_args`` hook."""
    answer = manager.hook.tool_loader_class_tool_args(cls=cls, path=path)
    if answer is None:
        return (), {}
    args, kwargs = answer
    return tuple(args), dict(kwargs)


def discover_tools(
    manager: pluggy.PluginManager, module: ModuleType, path: Path, loader: Any = None
) -> list[AgentTool]:
    """Merge every plugin's tools for ``module``; ``loader`` is for plugins still asking for it.

    Raises:
        ToolDefinitionError: A plugin returned something that is not an ``AgentTool``.
        InvalidToolNameError: A tool's name is outside the allowed pattern.
        DuplicateToolInFileError: The file defines one name twice.
    """
    class_args = functools.partial(class_tool_args, manager)
    results = manager.hook.tool_loader_discover_tools(
        module=module, path=path, class_args=class_args, loader=loader
    )
    seen_ids: set[int] = set()
    by_name: dict[str, AgentTool] = {}
    for result in results:
        for tool in result or ():
            if id(tool) in seen_ids:
                continue
            seen_ids.add(id(tool))
            if not isinstance(tool, AgentTool):
                raise ToolDefinitionError(
                    f"{path}: a discovery plugin returned {tool!r}, which is not an AgentTool"
                )
            name = tool.tool_name
            if not is_valid_tool_name(name):
                raise InvalidToolNameError(name)
            key = normalise_tool_name(name)
            first = by_name.get(key)
            if first is not None:
                lines = (getattr(first, "source_line", None), getattr(tool, "source_line", None))
                raise DuplicateToolInFileError(path, name, lines)
            by_name[key] = tool
    return list(by_name.values())


def discover_components(manager: pluggy.PluginManager, module: ModuleType, path: Path) -> list[Component]:
    """Merge every plugin's prompts, resources and resource templates for ``module``.

    Raises:
        ToolDefinitionError: Not a component, or two of one kind with one key in the file.
    """
    found: dict[str, Component] = {}
    for result in manager.hook.tool_loader_discover_components(module=module, path=path):
        for component in result or ():
            if not isinstance(component, Component):
                raise ToolDefinitionError(
                    f"{path}: a discovery plugin returned {component!r}, which is not a prompt or resource"
                )
            first = found.get(component.component_id)
            if first is not None and first is not component:
                raise ToolDefinitionError(
                    f"{path}: the {component.kind.value} {component.key!r} is defined twice"
                )
            component.source_file = str(path)
            found[component.component_id] = component
    return list(found.values())


def discover(
    manager: pluggy.PluginManager, module: ModuleType, path: Path, loader: Any = None
) -> list[AgentTool | Component]:
    """Everything ``module`` serves: its tools, then its prompts and resources (``discover_tools``,
    ``discover_components``)."""
    tools: list[AgentTool | Component] = list(discover_tools(manager, module, path, loader))
    return tools + discover_components(manager, module, path)
