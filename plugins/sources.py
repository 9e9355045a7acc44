"""The default answer to "is this file a tool source?" (runs after every other plugin)."""

from __future__ import annotations

from pathlib import Path

from loader.hookspecs import hookimpl
from loader.reload.sources import is_default_tool_source


@hookimpl(trylast=True)
def tool_loader_is_tool_source(path: Path, root: Path) -> bool | None:
    """Visible ``.py`` files that are not editor temporaries or backups."""
    return is_default_tool_source(path, root)
