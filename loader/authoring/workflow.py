"""The operations on proposals: propose, list, promote (the Python API the console and MCP use)."""

from __future__ import annotations

import getpass
import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..history.provenance import write_provenance
from .area import (
    ProposalError,
    ProposalRecord,
    ProposalState,
    file_digest,
    new_id,
    proposal_ids,
    read_record,
    write_atomic,
    write_record,
)
from .gate import GateOptions, gate_digest, run_gate, spec_verdict

__all__ = ["PromoteRefused", "Promotion", "list_proposals", "promote", "propose", "propose_files"]


class PromoteRefused(ProposalError):
    """``promote`` refused: the bytes changed since the gate, the gate failed, or it breaks callers."""


@dataclass(frozen=True, slots=True)
class Promotion:
    """What a promotion wrote: each live file and the provenance it carries."""

    record: ProposalRecord
    written: tuple[Path, ...]
    provenance: Mapping[str, Any]


def _check_name(name: str) -> str:
    path = Path(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0].startswith("."):
        raise ProposalError(f"invalid proposal file name {name!r}: a relative path inside the tool folder")
    if path.suffix != ".py":
        raise ProposalError(f"invalid proposal file name {name!r}: a Python file (.py)")
    return path.as_posix()


def propose(
    tools_dir: Path,
    files: Mapping[str, bytes],
    *,
    author: str | None = None,
    options: GateOptions | None = None,
) -> ProposalRecord:
    """Keep ``files`` (name relative to the live folder -> bytes) as a new proposal and gate them."""
    if not files:
        raise ProposalError("a proposal needs at least one file")
    named = {_check_name(name): data for name, data in files.items()}
    record = ProposalRecord(
        id=new_id(),
        author=author or getpass.getuser(),
        created=time.time(),
        state=ProposalState.FAILED,
        files={},
    )
    folder = record.files_dir(tools_dir)
    for name, data in named.items():
        write_atomic(folder / name, data)
    digests = {name: file_digest(folder / name) for name in named}
    report = run_gate({name: (folder / name).read_bytes() for name in named}, tools_dir, options)
    state = ProposalState.PASSED if report["passed"] else ProposalState.FAILED
    record = ProposalRecord(
        record.id, record.author, record.created, state, digests, report, gate_digest(report)
    )
    write_record(tools_dir, record)
    return record


def propose_files(
    tools_dir: Path, paths: Sequence[Path], *, author: str | None = None, options: GateOptions | None = None
) -> ProposalRecord:
    """``propose`` with files read from disk, each kept under its own name."""
    try:
        files = {path.name: path.read_bytes() for path in paths}
    except OSError as exc:
        raise ProposalError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    return propose(tools_dir, files, author=author, options=options)


def list_proposals(tools_dir: Path) -> list[ProposalRecord]:
    """Every proposal of ``tools_dir``, oldest first."""
    return [read_record(tools_dir, proposal_id) for proposal_id in proposal_ids(tools_dir)]


def _changed_files(tools_dir: Path, record: ProposalRecord) -> list[str]:
    folder = record.files_dir(tools_dir)
    changed = []
    for name, digest in record.files.items():
        try:
            if file_digest(folder / name) != digest:
                changed.append(name)
        except OSError:
            changed.append(name)
    return changed


def _provenance(record: ProposalRecord, contents: Mapping[str, bytes]) -> dict[str, dict[str, Any]]:
    """Each promoted file's provenance: who, which proposal, which gate report, what it replaced."""
    replaced = {entry["tool"]: entry.get("replaced_digest") for entry in record.report["spec_diff"]["tools"]}
    return {
        name: {
            "author": record.author,
            "proposal": record.id,
            "gate_report_digest": record.report_digest,
            "sha256": hashlib.sha256(data).hexdigest(),
            "replaced": replaced,
        }
        for name, data in contents.items()
    }


def promote(tools_dir: Path, proposal_id: str, *, allow_breaking: bool = False) -> Promotion:
    """Write a passed proposal's gated bytes into ``tools_dir``, with their provenance.

    Raises:
        PromoteRefused: The proposal is not ``passed``, its bytes changed since the gate ran,
            or it breaks a live tool's callers and ``allow_breaking`` is not set.
    """
    record = read_record(tools_dir, proposal_id)
    if record.state is not ProposalState.PASSED:
        raise PromoteRefused(
            f"proposal {proposal_id} is {record.state.value}: only a passed proposal is promoted"
        )
    changed = _changed_files(tools_dir, record)
    if changed:
        raise PromoteRefused(
            f"proposal {proposal_id}: {', '.join(changed)} changed since the gate ran; propose it again"
        )
    if spec_verdict(record.report) == "breaking" and not allow_breaking:
        breaking = ", ".join(record.report["spec_diff"]["breaking"])
        raise PromoteRefused(
            f"proposal {proposal_id} breaks the callers of {breaking}; pass --allow-breaking"
        )
    folder = record.files_dir(tools_dir)
    contents = {name: (folder / name).read_bytes() for name in record.files}
    provenance = _provenance(record, contents)
    write_provenance(tools_dir, provenance)
    written = []
    for name, data in contents.items():
        write_atomic(tools_dir / name, data)
        written.append(tools_dir / name)
    promoted = record.with_state(ProposalState.PROMOTED, {"at": time.time(), "files": sorted(record.files)})
    write_record(tools_dir, promoted)
    return Promotion(promoted, tuple(written), provenance)
