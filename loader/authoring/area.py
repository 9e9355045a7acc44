"""The proposals area of a tool folder and the record each proposal keeps there.

A proposal lives in ``DIR/.tool-loader/proposals/<id>/``: its files under ``files/`` and its
record in ``proposal.json``. The folder is hidden, so the loader never scans, watches or
imports it (``loader.reload.sources``: hidden folders are never tool sources).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from ..errors import ToolLoaderError

__all__ = [
    "AREA",
    "ProposalError",
    "ProposalRecord",
    "ProposalState",
    "file_digest",
    "proposal_ids",
    "proposals_dir",
    "read_record",
    "write_all_atomic",
    "write_atomic",
    "write_record",
]

AREA: Final = Path(".tool-loader") / "proposals"
"""Where proposals live, relative to the tool folder."""
_RECORD: Final = "proposal.json"
_FILES: Final = "files"


class ProposalError(ToolLoaderError):
    """A proposal cannot be made, read or promoted; the message says which and why."""


class ProposalState(StrEnum):
    """Where a proposal stands: gated (``passed`` or ``failed``), then ``promoted`` or ``withdrawn``."""

    PASSED = "passed"
    FAILED = "failed"
    PROMOTED = "promoted"
    WITHDRAWN = "withdrawn"


@dataclass(frozen=True, slots=True)
class ProposalRecord:
    """What ``proposal.json`` holds: who proposed which bytes, and what the gate said of them."""

    id: str
    author: str
    created: float
    state: ProposalState
    files: Mapping[str, str]
    """Each file's name (relative to the proposal) and the sha256 of the bytes the gate ran on."""
    report: Mapping[str, Any] = field(default_factory=dict)
    report_digest: str = ""
    promoted: Mapping[str, Any] | None = None

    def folder(self, tools_dir: Path) -> Path:
        """The proposal's folder under ``tools_dir``."""
        return proposals_dir(tools_dir) / self.id

    def files_dir(self, tools_dir: Path) -> Path:
        """Where the proposal's files are kept."""
        return self.folder(tools_dir) / _FILES

    def with_state(self, state: ProposalState, promoted: Mapping[str, Any] | None = None) -> ProposalRecord:
        return replace(self, state=state, promoted=promoted)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "author": self.author,
            "created": self.created,
            "state": self.state.value,
            "files": dict(self.files),
            "report": dict(self.report),
            "report_digest": self.report_digest,
            "promoted": None if self.promoted is None else dict(self.promoted),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProposalRecord:
        return cls(
            id=str(data["id"]),
            author=str(data["author"]),
            created=float(data["created"]),
            state=ProposalState(data["state"]),
            files={str(k): str(v) for k, v in dict(data["files"]).items()},
            report=dict(data.get("report") or {}),
            report_digest=str(data.get("report_digest") or ""),
            promoted=data.get("promoted"),
        )


def proposals_dir(tools_dir: Path) -> Path:
    """``tools_dir/.tool-loader/proposals``."""
    return tools_dir / AREA


def new_id() -> str:
    """A proposal id: the creation time, then random hex (sortable by age, never reused)."""
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def file_digest(path: Path) -> str:
    """The sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a hidden temporary file and one rename."""
    write_all_atomic({path: data})


def write_all_atomic(files: Mapping[Path, bytes]) -> None:
    """Write every file through a hidden temporary file first, then rename them all at once.

    The renames follow each other within microseconds, so a watching loader
    sees them in one batch: a tool never loads before the helper beside it.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((temporary, path))
            with os.fdopen(handle, "wb") as out:
                out.write(data)
        for temporary, path in staged:
            os.replace(temporary, path)
    finally:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)


def write_record(tools_dir: Path, record: ProposalRecord) -> None:
    """Save ``record`` as its proposal's ``proposal.json``."""
    text = json.dumps(record.to_json(), indent=2, sort_keys=True) + "\n"
    write_atomic(record.folder(tools_dir) / _RECORD, text.encode())


def read_record(tools_dir: Path, proposal_id: str) -> ProposalRecord:
    """The record of ``proposal_id``.

    Raises:
        ProposalError: There is no such proposal, or its record cannot be read.
    """
    path = proposals_dir(tools_dir) / proposal_id / _RECORD
    if not proposal_id or "/" in proposal_id or proposal_id.startswith("."):
        raise ProposalError(f"invalid proposal id {proposal_id!r}")
    try:
        return ProposalRecord.from_json(json.loads(path.read_text()))
    except FileNotFoundError:
        known = ", ".join(proposal_ids(tools_dir)) or "none"
        raise ProposalError(f"no proposal {proposal_id!r} in {tools_dir} (proposals: {known})") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ProposalError(f"cannot read {path}: {exc}") from exc


def proposal_ids(tools_dir: Path) -> list[str]:
    """Every proposal's id, oldest first."""
    area = proposals_dir(tools_dir)
    if not area.is_dir():
        return []
    return sorted(entry.name for entry in area.iterdir() if (entry / _RECORD).is_file())
