"""Where a promoted file came from: ``DIR/.tool-loader/provenance.json``, keyed by the live file.

``loader.authoring`` writes an entry when it promotes a proposal (its author, the proposal id,
the digest of its gate report, the digests of the versions it replaced); the recorder stores it
with each version that goes live from that file, and the MCP listing shows it. An entry holds
while the live file still has the promoted bytes (its sha256): a later edit by hand ends it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["PROVENANCE_FILE", "provenance_of", "read_provenance", "write_provenance"]

PROVENANCE_FILE: Final = Path(".tool-loader") / "provenance.json"


def read_provenance(tools_dir: Path) -> dict[str, dict[str, Any]]:
    """Every recorded promotion of ``tools_dir``, by live file (relative, posix)."""
    try:
        data = json.loads((tools_dir / PROVENANCE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_provenance(tools_dir: Path, entries: Mapping[str, Mapping[str, Any]]) -> None:
    """Add ``entries`` (live file, relative -> provenance) to the folder's record, with one rename."""
    known = read_provenance(tools_dir)
    known.update({name: dict(entry) for name, entry in entries.items()})
    target = tools_dir / PROVENANCE_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".provenance.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w") as out:
            out.write(json.dumps(known, indent=2, sort_keys=True) + "\n")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
