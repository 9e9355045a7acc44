"""Records of what the loader did: per-file status, load errors, events and scan reports.

They are frozen: the loader builds a new record for every change, so readers
(the console, the MCP server) can hold one without locking.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

__all__ = [
    "FileState",
    "FileStatus",
    "LoadErrorInfo",
    "LoaderEvent",
    "LoaderEventKind",
    "ScanReport",
    "error_info_from_exception",
]


class FileState(StrEnum):
    """Where a tool file stands."""

    LOADED = "loaded"
    FAILED = "failed"
    CONFLICT = "conflict"
    REMOVED = "removed"
    STUCK = "stuck"


@dataclass(frozen=True, slots=True)
class LoadErrorInfo:
    """Why a file failed to load, pointing at the line to fix."""

    exc_type: str
    message: str
    file: str | None
    line: int | None
    traceback: str = ""

    def location(self) -> str:
        """``file:line`` (or just the file) of the error."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "?"

    def one_line(self) -> str:
        """``ExcType: message (file:line)`` for event logs."""
        return f"{self.exc_type}: {self.message} ({self.location()})"


@dataclass(frozen=True, slots=True)
class FileStatus:
    """One record per tool source file.

    ``failing_dependencies`` lists the helpers this file imports (directly or
    through other helpers) whose latest save failed or is stuck: the file runs
    against their last good version.
    """

    path: Path
    module_name: str
    state: FileState
    tools: tuple[str, ...] = ()
    content_hash: str | None = None
    loaded_at: float | None = None
    load_seconds: float | None = None
    error: LoadErrorInfo | None = None
    conflicts: tuple[tuple[str, Path], ...] = ()
    failing_dependencies: tuple[Path, ...] = ()


class LoaderEventKind(StrEnum):
    """What happened to a file in one applied batch."""

    ADDED = "added"
    UPDATED = "updated"
    REMOVED = "removed"
    FAILED = "failed"
    CONFLICT = "conflict"
    RECOVERED = "recovered"
    STUCK = "stuck"


@dataclass(frozen=True, slots=True)
class LoaderEvent:
    """One file's outcome in an applied batch, for consoles and logs."""

    kind: LoaderEventKind
    path: Path
    tools: tuple[str, ...]
    duration_ms: float
    time: float
    status: FileStatus
    error: LoadErrorInfo | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScanReport:
    """The outcome of ``ToolLoader.scan()``."""

    files: tuple[FileStatus, ...] = field(default_factory=tuple)
    seconds: float = 0.0

    @property
    def loaded(self) -> tuple[FileStatus, ...]:
        """Files that loaded (including files that define no tools)."""
        return tuple(s for s in self.files if s.state is FileState.LOADED)

    @property
    def failed(self) -> tuple[FileStatus, ...]:
        """Files that failed, got stuck or conflict with another file."""
        return tuple(
            s for s in self.files if s.state in (FileState.FAILED, FileState.STUCK, FileState.CONFLICT)
        )

    @property
    def tool_count(self) -> int:
        """How many tools the scan registered."""
        return sum(len(s.tools) for s in self.files)


def error_info_from_exception(exc: BaseException, path: Path, roots: tuple[Path, ...] = ()) -> LoadErrorInfo:
    """Describe ``exc`` with the most useful file and line.

    A syntax error names its own location; otherwise the innermost traceback
    frame inside the tool file wins, then the innermost frame inside a watched
    folder (a helper module the tool imported), then the tool file itself.
    """
    text = "".join(traceback.format_exception(exc)).rstrip()
    message = str(exc) or type(exc).__name__
    if isinstance(exc, SyntaxError):
        return LoadErrorInfo(
            type(exc).__name__, exc.msg or message, exc.filename or str(path), exc.lineno, text
        )
    target = str(path)
    root_prefixes = tuple(str(root) + "/" for root in roots)
    in_file: tuple[str, int | None] | None = None
    in_roots: tuple[str, int | None] | None = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if filename == target:
            in_file = (filename, lineno)
        elif root_prefixes and filename.startswith(root_prefixes):
            in_roots = (filename, lineno)
    file, line = in_file or in_roots or (target, None)
    return LoadErrorInfo(type(exc).__name__, message, file, line, text)
