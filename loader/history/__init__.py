"""History: every version that went live, kept in SQLite, recorded by a plugin, and rolled back to."""

from __future__ import annotations

from .recorder import HistoryRecorder
from .store import HistoryStore, ToolVersion

__all__ = ["HistoryRecorder", "HistoryStore", "ToolVersion"]
