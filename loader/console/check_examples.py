"""``tool-loader check --examples``: run every tool's examples once, for CI, as check findings."""

from __future__ import annotations

from ..reload.gate import run_example
from ..reload.loader import ToolLoader
from .check import ERROR, Finding
from .render import tool_source

__all__ = ["EXAMPLE_TIMEOUT", "example_findings"]

EXAMPLE_TIMEOUT = 10.0
"""Seconds each example may take under ``check --examples``."""


def example_findings(loader: ToolLoader, timeout: float = EXAMPLE_TIMEOUT) -> list[Finding]:
    """One error finding per failing example of every tool the loader serves (all examples run)."""
    found: list[Finding] = []
    for tool in loader.registry.snapshot().tools():
        for index, example in enumerate(tool.examples):
            failure = run_example(tool, example, index, timeout)
            if failure is None:
                continue
            file, line = tool_source(tool, loader)
            found.append(
                Finding(ERROR, f"example-{failure.kind}", file, line, failure.message(), tool.tool_name)
            )
    return found
