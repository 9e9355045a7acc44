"""Helpers shared by the tests (imported as ``support``; ``tests/`` is on pytest's pythonpath)."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loader.loader import LoaderConfig, ToolLoader
from loader.watcher import WatchTimings

__all__ = ["FAST", "call_text", "eventually", "function_tool_source", "write"]

FAST = LoaderConfig(
    timings=WatchTimings(settle=0.004, debounce=0.05, disappear_grace=0.05),
    empty_grace=0.3,
    import_timeout=5.0,
    rescan_interval=2.0,
    supervise_interval=0.1,
    entry_point_plugins=False,
)


def eventually(predicate: Callable[[], Any], timeout: float = 15.0, message: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s: {message or predicate}")
        time.sleep(0.005)


def write(path: Path, source: str) -> Path:
    """Write a tool file the ordinary way (open, write, close)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def function_tool_source(name: str, body: str = "return 'v1'", params: str = "") -> str:
    """A file defining one ``@tool`` function."""
    return (
        "from loader import tool\n\n"
        "@tool\n"
        f"def {name}({params}) -> str:\n"
        f'    """Tool {name}."""\n'
        f"    {body}\n"
    )


def call_text(loader: ToolLoader, name: str, input: dict[str, Any] | None = None) -> str:
    """Invoke a tool through the registry and return its first text block."""
    result = loader.registry.invoke(name, input or {})
    content = result["content"][0]
    return str(content.get("text", content.get("json")))
