"""Quarantine: live tools taken out of listings, their calls refused, until unquarantined.

The names are kept in ``DIR/.tool-loader/quarantine.json``, so they outlast a restart and
reach every process serving ``DIR``; ``QuarantineFollower`` (a loader plugin) applies the file's
names when the loader is configured and again within ``interval`` of each change, each time as
one registry commit (``ToolLoader.quarantine``).
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, Final

from ..hookspecs import hookimpl
from ..names import normalise_tool_name
from .area import write_atomic

__all__ = ["QUARANTINE_FILE", "QuarantineFollower", "read_quarantine", "set_quarantined"]

logger = logging.getLogger(__name__)

QUARANTINE_FILE: Final = Path(".tool-loader") / "quarantine.json"


def read_quarantine(tools_dir: Path) -> frozenset[str]:
    """The quarantined tool names of ``tools_dir`` (none when the file is missing or unreadable)."""
    try:
        data = json.loads((tools_dir / QUARANTINE_FILE).read_text())
    except FileNotFoundError:
        return frozenset()
    except (OSError, ValueError) as exc:
        logger.warning(
            "folder=<%s>, error=<%s> | quarantine file unreadable; nothing quarantined", tools_dir, exc
        )
        return frozenset()
    names = data.get("quarantined") if isinstance(data, dict) else None
    return frozenset(str(name) for name in names) if isinstance(names, list) else frozenset()


def set_quarantined(tools_dir: Path, name: str, quarantined: bool) -> bool:
    """Quarantine ``name`` in ``tools_dir`` (or release it); False when it already was (or was not)."""
    names = set(read_quarantine(tools_dir))
    key = normalise_tool_name(name)
    present = {normalise_tool_name(n) for n in names}
    if (key in present) == quarantined:
        return False
    names = names | {name} if quarantined else {n for n in names if normalise_tool_name(n) != key}
    text = json.dumps({"quarantined": sorted(names)}, indent=2) + "\n"
    write_atomic(tools_dir / QUARANTINE_FILE, text.encode())
    return True


class QuarantineFollower:
    """A loader plugin that keeps the loader's quarantine equal to its folders' quarantine files."""

    def __init__(self, interval: float = 0.05) -> None:
        self._interval = interval
        self._stop = threading.Event()
        self._loader: Any = None
        self._seen: tuple[tuple[int, int] | None, ...] = ()
        self._thread: threading.Thread | None = None

    @hookimpl
    def tool_loader_configure(self, loader: Any) -> None:
        """Apply the quarantine before the first scan, then follow the files on a thread of its own."""
        self._loader = loader
        self._check()
        self._thread = threading.Thread(target=self._follow, name="tool-loader-quarantine", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop following (the quarantine in force stays)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _stamps(self) -> tuple[tuple[int, int] | None, ...]:
        stamps: list[tuple[int, int] | None] = []
        for root in self._loader.paths:
            try:
                info = (root / QUARANTINE_FILE).stat()
                stamps.append((info.st_mtime_ns, info.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def _check(self) -> None:
        stamps = self._stamps()
        if stamps == self._seen:
            return
        self._seen = stamps
        names = frozenset().union(*(read_quarantine(root) for root in self._loader.paths))
        self._loader.quarantine(names)

    def _follow(self) -> None:
        while not self._stop.wait(self._interval):
            if self._loader.closed or self._loader.registry.closed:
                return
            try:
                self._check()
            except Exception:  # a loader that is closing; the next check tries again
                logger.exception("quarantine check failed")
