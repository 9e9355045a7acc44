"""The pluggy side of loading: the plugin manager, which files are tool sources, and discovery.

Everything the loader asks its plugins goes through here: whether a path is a
tool source (remembered, because rescans ask about every file every time) and
which tools an imported module defines (merged across plugins, with bad and
duplicate names refused as typed errors).
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from ..errors import DuplicateToolInFileError, InvalidToolNameError, ToolDefinitionError
from ..hookspecs import ENTRY_POINT_GROUP, PROJECT_NAME, ToolLoaderHookSpecs
from ..names import is_valid_tool_name, normalise_tool_name
from ..reload.config import LoaderConfig
from ..reload.sources import is_default_source_name, is_default_tool_source, is_ignored_dir
from ..types import AgentTool

__all__ = [
    "SourceFinder",
    "class_tool_args",
    "discover_tools",
    "has_implementations",
    "make_plugin_manager",
    "notify_hook",
]

logger = logging.getLogger(__name__)

_VERDICT_CACHE_LIMIT = 200_000
_BUILTIN_SOURCE_RULE = "loader.plugins.sources"
"""The built-in plugin whose ``tool_loader_is_tool_source`` is ``is_default_tool_source``."""


def make_plugin_manager(
    config: LoaderConfig, plugins: Sequence[object], *, loader: Any
) -> pluggy.PluginManager:
    """A plugin manager with the built-in plugins, entry-point plugins and ``plugins``, configured."""
    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(ToolLoaderHookSpecs)
    if config.builtin_plugins:
        names: tuple[str, ...] = importlib.import_module("loader.plugins").BUILTIN_PLUGINS
        for module_name in names:
            manager.register(importlib.import_module(module_name), name=module_name)
    if config.entry_point_plugins:
        try:
            manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
        except Exception:
            logger.exception("group=<%s> | could not load plugin entry points", ENTRY_POINT_GROUP)
    for plugin in plugins:
        manager.register(plugin)
    manager.hook.tool_loader_configure.call_historic(kwargs={"loader": loader})
    return manager


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
    manager: pluggy.PluginManager, module: ModuleType, path: Path, loader: Any
) -> list[AgentTool]:
    """Merge every plugin's tools for ``module``.

    Raises:
        ToolDefinitionError: A plugin returned something that is not an ``AgentTool``.
        InvalidToolNameError: A tool's name is outside the allowed pattern.
        DuplicateToolInFileError: The file defines one name twice.
    """
    results = manager.hook.tool_loader_discover_tools(module=module, path=path, loader=loader)
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


class SourceFinder:
    """Lists tool sources under a folder, asking the plugins once per path."""

    def __init__(self, manager: pluggy.PluginManager, *, recursive: bool) -> None:
        self._manager = manager
        self._recursive = recursive
        self._verdicts: dict[Path, bool] = {}

    def forget_verdicts(self) -> None:
        """Plugins changed: ask again about every path."""
        self._verdicts.clear()

    def matters(self, path: Path, root: Path) -> bool:
        """Whether a change at ``path`` can change the tool set: a package marker or a tool source."""
        return path.name == "__init__.py" or self.is_source(path, root)

    def is_source(self, path: Path, root: Path) -> bool:
        """The plugins' verdict on ``path`` (remembered)."""
        known = self._verdicts.get(path)  # not try/except: a scan asks about every new path once
        if known is not None:
            return known
        if self._builtin_rule_only():
            verdict = is_default_tool_source(path, root)  # the built-in rule alone: no dispatch per file
        else:
            verdict = bool(self._manager.hook.tool_loader_is_tool_source(path=path, root=root))
        return self._remember(path, verdict)

    def _builtin_rule_only(self) -> bool:
        implementations = self._manager.hook.tool_loader_is_tool_source.get_hookimpls()
        return len(implementations) == 1 and implementations[0].plugin_name == _BUILTIN_SOURCE_RULE

    def _remember(self, path: Path, verdict: bool) -> bool:
        if len(self._verdicts) < _VERDICT_CACHE_LIMIT:
            self._verdicts[path] = verdict
        return verdict

    def list_sources(self, root: Path, under: Path | None = None) -> list[Path]:
        """Every tool source and package ``__init__`` below ``under`` (default ``root``)."""
        found: list[Path] = []
        start = under or root
        if not start.is_dir():
            return found
        # Under a start that is no ignored folder, the walk skips ignored ones: with the built-in
        # rule alone, a file's name is then the whole verdict (no path arithmetic per file).
        by_name = self._builtin_rule_only() and is_default_tool_source(start / "x.py", root)
        for directory, dirnames, filenames in os.walk(start, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not is_ignored_dir(d))
            if not self._recursive:
                dirnames[:] = []
            here = Path(directory)
            for name in filenames:
                if name.endswith(".py"):
                    path = here / name
                    if name == "__init__.py":
                        found.append(path)
                    elif by_name:
                        verdict = self._verdicts.get(path)
                        if verdict is None:
                            verdict = self._remember(path, is_default_source_name(name))
                        if verdict:
                            found.append(path)
                    elif self.is_source(path, root):
                        found.append(path)
        return found
