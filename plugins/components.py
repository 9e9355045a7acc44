"""Discovers ``@prompt`` and ``@resource`` functions defined in a tool module."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from loader.hookspecs import hookimpl
from loader.types import Component


@hookimpl
def tool_loader_discover_components(module: ModuleType, path: Path) -> Sequence[Component] | None:
    """Every prompt, resource and resource template whose function was defined in this module."""
    return [
        value
        for value in list(vars(module).values())
        if isinstance(value, Component) and value.module == module.__name__
    ]
