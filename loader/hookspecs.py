"""The pluggy hooks through which tools are discovered and loader events are announced.

Third-party plugins implement these with ``@hookimpl`` and are registered from
the ``tool_loader.plugins`` entry-point group or passed to
``ToolLoader(plugins=[...])``. Every hook name starts with ``tool_loader_``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from .types import AgentTool, Component

if TYPE_CHECKING:
    from .status import FileStatus, LoadErrorInfo

__all__ = ["ENTRY_POINT_GROUP", "PROJECT_NAME", "ClassArgs", "ToolLoaderHookSpecs", "hookimpl", "hookspec"]

PROJECT_NAME = "tool_loader"
"""The pluggy project name: the marker name of every hook."""

ENTRY_POINT_GROUP = "tool_loader.plugins"
"""Entry-point group scanned for third-party plugins."""

ClassArgs = Callable[[type, Path], tuple[Sequence[Any], dict[str, Any]]]
"""What discovery hooks get as ``class_args``: a ``@tool`` class's constructor ``(args, kwargs)``."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class ToolLoaderHookSpecs:
    """Hook specifications of the tool loader."""

    @hookspec(historic=True)
    def tool_loader_configure(self, loader: Any) -> None:
        """Called once with the ``ToolLoader`` a plugin is registered with.

        Historic: a plugin registered after the loader was created is still called.
        """

    @hookspec
    def tool_loader_unconfigure(self, loader: Any) -> None:
        """The ``ToolLoader`` is closing: its tools have left the registry; finish what you owe it.

        Called once, from ``close()`` (and leaving ``with``); closing announces no removals.
        """

    @hookspec(firstresult=True)
    def tool_loader_is_tool_source(self, path: Path, root: Path) -> bool | None:
        """Decide whether ``path`` (inside the watched folder ``root``) is a tool source file.

        The first plugin that returns True or False decides; return None to abstain.
        The built-in rule (``.py`` files that are not hidden, backups or editor
        temporaries) runs last.
        """

    @hookspec(
        warn_on_impl_args={
            "loader": DeprecationWarning(
                "tool_loader_discover_tools(loader=...) is deprecated: take class_args instead"
            )
        }
    )
    def tool_loader_discover_tools(
        self, module: ModuleType, path: Path, class_args: ClassArgs, loader: Any
    ) -> Sequence[AgentTool] | None:
        """Return the tools defined in a freshly imported tool module.

        Every plugin's results are merged; the same object found by two plugins counts once.
        ``class_args(cls, path)`` gives a ``@tool`` class's constructor ``(args, kwargs)``
        (the ``tool_loader_class_tool_args`` hook); a plugin may take only the arguments it
        needs. ``loader`` (deprecated, the ``ToolLoader``, None in a worker process) goes
        in a later release. Raise ``loader.ToolDefinitionError`` for a tool that is defined
        wrongly: the file's load fails and its last good version keeps serving.
        """

    @hookspec
    def tool_loader_discover_components(self, module: ModuleType, path: Path) -> Sequence[Component] | None:
        """Return the prompts, resources and resource templates a freshly imported tool module defines.

        Every plugin's results are merged; they go live in the same registry commit as
        the file's tools. Raise ``loader.ToolDefinitionError`` for one defined wrongly.
        """

    @hookspec(firstresult=True)
    def tool_loader_class_tool_args(
        self, cls: type, path: Path
    ) -> tuple[Sequence[Any], dict[str, Any]] | None:
        """Supply ``(args, kwargs)`` to instantiate a ``@tool`` class; None means no arguments."""

    @hookspec
    def tool_loader_tool_added(self, tool: AgentTool, path: Path) -> None:
        """A tool from ``path`` entered the registry."""

    @hookspec
    def tool_loader_tool_replaced(self, tool: AgentTool, previous: AgentTool, path: Path) -> None:
        """A new version of a tool from ``path`` replaced the previous one."""

    @hookspec
    def tool_loader_tool_removed(self, name: str, tool: AgentTool, path: Path) -> None:
        """A tool from ``path`` left the registry."""

    @hookspec
    def tool_loader_component_added(self, component: Component, path: Path) -> None:
        """A prompt, resource, resource template, skill or skill file from ``path`` entered the registry."""

    @hookspec
    def tool_loader_component_replaced(self, component: Component, previous: Component, path: Path) -> None:
        """A new version of a component from ``path`` replaced the previous one (same kind and key)."""

    @hookspec
    def tool_loader_component_removed(self, component: Component, path: Path) -> None:
        """A component from ``path`` left the registry; ``component`` is the version that served last."""

    @hookspec
    def tool_loader_load_failed(self, path: Path, error: LoadErrorInfo) -> None:
        """Loading ``path`` failed; its last good version (if any) keeps serving."""

    @hookspec
    def tool_loader_file_status_changed(self, status: FileStatus, previous: FileStatus | None) -> None:
        """The status record of a tool file changed (loaded, failed, conflict, removed, stuck)."""
