"""The operations on proposals: propose, list, promote (the Python API the console and MCP use)."""

from __future__ import annotations

import ast
import getpass
import hashlib
import os
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
    write_all_atomic,
    write_atomic,
    write_record,
)
from .gate import GateOptions, gate_digest, run_gate, spec_verdict

__all__ = ["PromoteRefused", "Promotion", "list_proposals", "promote", "propose", "propose_files", "withdraw"]


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
    """``propose`` with files read from disk: a file under its own name, a folder (a tool with its
    helpers) as every ``.py`` file below it, under the folder's name (``pdf_tools/helpers.py``).

    Links are refused, as the loader refuses links out of its folders.
    """
    try:
        files: dict[str, bytes] = {}
        for path in paths:
            for name, source in _sources_of(path):
                files[name] = source.read_bytes()
    except OSError as exc:
        raise ProposalError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    return propose(tools_dir, files, author=author, options=options)


def _sources_of(path: Path) -> list[tuple[str, Path]]:
    """``(name in the proposal, file)`` for a file, or for each ``.py`` file below a folder."""
    if path.is_symlink():
        raise ProposalError(f"{path} is a link: propose the file itself")
    if not path.is_dir():
        return [(path.name, path)]
    found: list[tuple[str, Path]] = []
    for folder, folders, names in os.walk(path):  # never into a linked folder
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            source = Path(folder, name)
            if source.is_symlink():
                raise ProposalError(f"{source} is a link: propose the file itself")
            found.append(((Path(path.name) / source.relative_to(path)).as_posix(), source))
    if not found:
        raise ProposalError(f"{path} holds no .py file to propose")
    return found


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


def withdraw(tools_dir: Path, proposal_id: str) -> ProposalRecord:
    """Mark a proposal ``withdrawn``: it is never promoted; its files and report stay for the record.

    Raises:
        PromoteRefused: The proposal was promoted already (its bytes are live: edit or roll back).
    """
    record = read_record(tools_dir, proposal_id)
    if record.state is ProposalState.PROMOTED:
        raise PromoteRefused(f"proposal {proposal_id} is promoted already: its bytes are live")
    if record.state is not ProposalState.WITHDRAWN:
        record = record.with_state(ProposalState.WITHDRAWN)
        write_record(tools_dir, record)
    return record


def _imported(contents: Mapping[str, bytes]) -> set[str]:
    """The proposal's files that another of its files imports (its helpers), by their names.

    Promotion renames them first, so a watching loader never imports a tool before its helper.
    """
    modules: set[str] = set()
    for data in contents.values():
        try:
            tree = ast.parse(data)
        except SyntaxError:  # the gate passed it, so it parses; nothing to learn otherwise
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    return {name for name in contents if Path(name).stem in modules}


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
    ordered = sorted(contents, key=lambda name: name not in _imported(contents))
    written = [tools_dir / name for name in ordered]
    write_all_atomic({tools_dir / name: contents[name] for name in ordered})
    promoted = record.with_state(ProposalState.PROMOTED, {"at": time.time(), "files": sorted(record.files)})
    write_record(tools_dir, promoted)
    return Promotion(promoted, tuple(written), provenance)
