"""Running one call: the runner (deadlines, lanes of threads), its lanes, and which failures are whose."""

from __future__ import annotations

from .containment import belongs_to_caller
from .runner import DEFAULT_CALL_TIMEOUT, CallLimits, CallRunner

__all__ = ["DEFAULT_CALL_TIMEOUT", "CallLimits", "CallRunner", "belongs_to_caller"]
