"""The lines ``serve`` prints: worded by the console from the registry's and the loader's typed facts."""

from __future__ import annotations

from loader.console.serve_status import StatusLine, change_set_line, reporting
from loader.registry.changes import RegistryChangeSet
from loader.registry.tool_registry import ToolRegistry
from loader.tools.function_tool import FunctionTool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_change_sets_read_as_one_line() -> None:
    registry = ToolRegistry()
    seen: list[RegistryChangeSet] = []
    registry.subscribe(seen.append)
    registry.register(FunctionTool(add))
    registry.register(FunctionTool(greet))
    with registry.batch() as batch:
        batch.register(FunctionTool(mul))
        batch.replace(FunctionTool(add))
        batch.unregister("greet")
    assert [change_set_line(change_set).text for change_set in seen] == [
        "tools changed (generation 1): +add",
        "tools changed (generation 2): +greet",
        "tools changed (generation 3): +mul ~add -greet",
    ]


def test_status_lines_follow_the_registry_while_reporting() -> None:
    registry = ToolRegistry()
    for function in (add, greet):
        registry.register(FunctionTool(function))
    lines: list[StatusLine] = []
    with reporting(registry, None, lines.append):
        registry.unregister("greet")
    registry.unregister("add")
    assert lines == [StatusLine("tools changed (generation 3): -greet", "cyan")]
