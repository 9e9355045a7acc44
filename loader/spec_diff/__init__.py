"""Comparing two versions of a tool spec: what changed, and whether it breaks a caller (pure functions)."""

from __future__ import annotations

from .kinds import SpecChange, SpecChangeKind
from .specs import ToolSetChange, compare_specs, compare_tool_sets, describe_change

__all__ = [
    "SpecChange",
    "SpecChangeKind",
    "ToolSetChange",
    "compare_specs",
    "compare_tool_sets",
    "describe_change",
]
