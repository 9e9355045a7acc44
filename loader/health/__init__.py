"""Health: which of the loader's own threads are alive, so a dead one can fail ``/healthz``."""

from __future__ import annotations

from .threads import ThreadDeath, ThreadHealth

__all__ = ["ThreadDeath", "ThreadHealth"]
