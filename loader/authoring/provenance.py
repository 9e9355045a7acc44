"""Where a promoted file came from: ``DIR/.tool-loader/provenance.json``, keyed by the live file.

An entry holds while the live file still has the promoted bytes (its sha256); a later edit by
hand ends it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from .area import ProposalRecord, write_atomic

__all__ = ["PROVENANCE_FILE", "provenance_of", "read_provenance", "record_provenance"]

PROVENANCE_FILE: Final = Path(".tool-loader") / "provenance.json"


def read_provenance(tools_dir: Path) -> dict[str, dict[str, Any]]:
    """Every recorded promotion of ``tools_dir``, by live file (relative, posix)."""
    try:
        data = json.loads((tools_dir / PROVENANCE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_provenance(
    tools_dir: Path, record: ProposalRecord, contents: Mapping[str, bytes]
) -> dict[str, Any]:
    """Record the provenance of each file about to be promoted; the entries written."""
    replaced = {
        entry["tool"]: entry.get("replaced_digest")
        for entry in record.report.get("spec_diff", {}).get("tools", [])
    }
    entries = {
        name: {
            "author": record.author,
            "proposal": record.id,
            "gate_report_digest": record.report_digest,
            "sha256": hashlib.sha256(data).hexdigest(),
            "replaced": replaced,
        }
        for name, data in contents.items()
    }
    known = read_provenance(tools_dir)
    known.update(entries)
    write_atomic(tools_dir / PROVENANCE_FILE, (json.dumps(known, indent=2, sort_keys=True) + "\n").encode())
    return entries


def provenance_of(path: Path, roots: tuple[Path, ...]) -> dict[str, Any] | None:
    """The provenance of the live file ``path`` while it still holds the promoted bytes, else None."""
    for root in roots:
        if root not in path.parents:
            continue
        entry = read_provenance(root).get(path.relative_to(root).as_posix())
        if entry is None:
            return None
        try:
            current = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            return None
        return entry if current == entry.get("sha256") else None
    return None
