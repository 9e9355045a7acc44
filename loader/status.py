"""Records of what the loader did: per-file status, load errors, events and scan reports.

They are frozen: the loader builds a new record for every change, so readers
(the console, the MCP server) can hold one without locking.
"""

from __future__ import annotations

import textwrap
import traceback
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from .errors import DuplicateToolInFileError, InvalidToolNameError, ToolLoadError
from .spec_diff.kinds import SpecChange, SpecChangeKind

__all__ = [
    "FileNote",
    "FileState",
    "FileStatus",
    "ImportInProgress",
    "LoadErrorInfo",
    "LoadErrorKind",
    "LoaderEvent",
    "LoaderEventKind",
    "RemoteLoadError",
    "ScanReport",
    "UnreadableFolder",
    "error_info_from_exception",
]


class FileState(StrEnum):
    """Where a tool file stands."""

    LOADED = "loaded"
    FAILED = "failed"
    CONFLICT = "conflict"
    REMOVED = "removed"
    STUCK = "stuck"
    REJECTED = "rejected"  # loaded, but its examples failed (LoaderConfig.gate): the last good version serves


class FileNote(StrEnum):
    """Something about a file the loader acts on, besides its state (the console words it)."""

    REWRITES_ITSELF = "rewrites-itself"
    """Its imports keep writing the file (a counter, a timestamp): its reloads are slowed down."""


class LoadErrorKind(StrEnum):
    """Why a file is not serving its newest content, as a type the console can switch on."""

    EXCEPTION = "exception"
    """The file's code raised while it was imported or its tools were built."""
    IMPORT_TIMEOUT = "import-timeout"
    """The import did not finish within the deadline (the file is stuck)."""
    INVALID_TOOL_NAME = "invalid-tool-name"
    """A tool's name is outside ``^[A-Za-z0-9_-]{1,64}$``."""
    DUPLICATE_IN_FILE = "duplicate-in-file"
    """The file defines the same tool name twice."""
    LINK_REFUSED = "link-refused"
    """The file is a link leading out of the watched folder."""
    UNREADABLE = "unreadable"
    """The file exists but cannot be read (permissions, a folder named ``x.py``...)."""
    EXAMPLE_FAILED = "example-failed"
    """The file loaded, but one of its tools' examples failed (``LoaderConfig.gate``)."""


@dataclass(frozen=True, slots=True)
class LoadErrorInfo:
    """Why a file failed to load, pointing at the line to fix."""

    exc_type: str
    message: str
    file: str | None
    line: int | None
    traceback: str = ""
    kind: LoadErrorKind = LoadErrorKind.EXCEPTION
    source: str = ""
    """For a syntax error, the offending line and a caret under the error, as Python prints them."""

    def location(self) -> str:
        """``file:line`` (or just the file) of the error."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "?"

    def one_line(self) -> str:
        """``ExcType: message (file:line)`` for event logs."""
        return f"{self.exc_type}: {self.message} ({self.location()})"


class RemoteLoadError(Exception):
    """A load that failed in another process (``isolation="process"``), already described there."""

    def __init__(self, info: LoadErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


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
    """(tool name or component id, owning file) for each one another file owns."""
    failing_dependencies: tuple[Path, ...] = ()
    spec_changes: tuple[tuple[str, SpecChange], ...] = ()
    """How each tool's spec changed when this file's current version went live (kept until the next one)."""
    notes: tuple[FileNote, ...] = ()
    """What else the loader knows of the file and acts on (e.g. ``REWRITES_ITSELF``)."""
    components: tuple[str, ...] = ()
    """The prompts, resources and templates served from this file, by ``component_id`` (``prompt:x``)."""

    @property
    def breaking_changes(self) -> tuple[tuple[str, SpecChange], ...]:
        """The tools whose last change would break a caller (a parameter removed, a tool gone...)."""
        return tuple((name, c) for name, c in self.spec_changes if c.kind is SpecChangeKind.BREAKING)


@dataclass(frozen=True, slots=True)
class ImportInProgress:
    """An import still running after the loader stopped waiting for it (slow or stuck)."""

    path: Path
    since: float
    """When it started (``time.time()``)."""


class LoaderEventKind(StrEnum):
    """What happened to a file in one applied batch."""

    ADDED = "added"
    UPDATED = "updated"
    REMOVED = "removed"
    FAILED = "failed"
    CONFLICT = "conflict"
    RECOVERED = "recovered"
    STUCK = "stuck"
    MOVED = "moved"
    REJECTED = "rejected"


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
    moved_from: Path | None = None
    """For ``MOVED``: the path the file had before (its tools went with it)."""


@dataclass(frozen=True, slots=True)
class UnreadableFolder:
    """A folder a scan could not list (permissions...): whatever tool files it holds were not seen."""

    path: Path
    reason: str
    """The system's words (``Permission denied``)."""
    root: bool
    """It is a watched folder itself: nothing in it was seen."""


@dataclass(frozen=True, slots=True)
class ScanReport:
    """The outcome of ``ToolLoader.scan()``."""

    files: tuple[FileStatus, ...] = field(default_factory=tuple)
    seconds: float = 0.0
    unreadable: tuple[UnreadableFolder, ...] = ()
    """Folders the scan could not list, watched folders first."""

    @property
    def loaded(self) -> tuple[FileStatus, ...]:
        """Files that loaded (including files that define no tools)."""
        return tuple(s for s in self.files if s.state is FileState.LOADED)

    @property
    def failed(self) -> tuple[FileStatus, ...]:
        """Files that failed, got stuck, were rejected by their examples or conflict with another file."""
        return tuple(
            s
            for s in self.files
            if s.state in (FileState.FAILED, FileState.STUCK, FileState.CONFLICT, FileState.REJECTED)
        )

    @property
    def tool_count(self) -> int:
        """How many tools the scan registered."""
        return sum(len(s.tools) for s in self.files)

    def raise_for_failures(self) -> None:
        """Raise ``ToolLoadError`` for the first file that failed or got stuck (for strict scripts)."""
        for status in self.files:
            if status.state in (FileState.FAILED, FileState.STUCK, FileState.REJECTED) and status.error:
                error = status.error
                raise ToolLoadError(
                    error.file or status.path,
                    error.message,
                    line=error.line,
                    exc_type=error.exc_type,
                    details=error,
                )


def error_info_from_exception(exc: BaseException, path: Path, roots: tuple[Path, ...] = ()) -> LoadErrorInfo:
    """Describe ``exc`` with the most useful file and line.

    A syntax error names its own location; otherwise the innermost traceback
    frame inside the tool file wins, then the innermost frame inside a watched
    folder (a helper module the tool imported), then the tool file itself.
    """
    if isinstance(exc, RemoteLoadError):
        return exc.info
    text = "".join(traceback.format_exception(exc)).rstrip()
    message = str(exc) or type(exc).__name__
    if isinstance(exc, SyntaxError):
        return LoadErrorInfo(
            type(exc).__name__,
            exc.msg or message,
            exc.filename or str(path),
            exc.lineno,
            text,
            source=_source_excerpt(exc),
        )
    kind = _ERROR_KINDS.get(type(exc), LoadErrorKind.EXCEPTION)
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
    if isinstance(exc, DuplicateToolInFileError) and exc.line is not None:
        line = exc.line  # the second definition is the one to fix
    return LoadErrorInfo(type(exc).__name__, message, file, line, text, kind)


def _source_excerpt(exc: SyntaxError) -> str:
    """The source line and caret lines Python's traceback shows for ``exc``, dedented together."""
    lines = "".join(traceback.format_exception_only(exc)).splitlines()
    shown = [line for line in lines[1:-1] if line.strip()]
    return textwrap.dedent("\n".join(shown))


_ERROR_KINDS: dict[type[BaseException], LoadErrorKind] = {
    InvalidToolNameError: LoadErrorKind.INVALID_TOOL_NAME,
    DuplicateToolInFileError: LoadErrorKind.DUPLICATE_IN_FILE,
}
