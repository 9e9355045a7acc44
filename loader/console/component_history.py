"""``tool-loader history`` of prompts, resources, templates, skills and skill files, and of everything."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..components.skills import skill_uri
from ..history.component_store import ComponentVersion
from ..history.store import HistoryStore
from ..types import ComponentKind
from .component_words import KIND_WORDS, kind_word
from .history_options import TOOL_WORD, Recorded
from .render import display_path, format_duration, titled_table

__all__ = [
    "KIND_CHOICES",
    "component_change",
    "component_document",
    "component_table",
    "overview_document",
    "overview_table",
]

KIND_CHOICES = (TOOL_WORD, *KIND_WORDS.values(), ComponentKind.SKILL_FILE.value)
"""What ``history --kind`` takes."""

_SHOWN_FILES = 4
"""Files of a skill named in its change column; the rest are counted."""


def _relative(uri: str, version: ComponentVersion) -> str:
    """A skill file's URI below its skill's folder: ``references/FORMS.md``."""
    folder = skill_uri(PurePosixPath(version.key)) + "/"
    return uri[len(folder) :] if uri.startswith(folder) else uri


def component_change(version: ComponentVersion, previous: ComponentVersion | None) -> str:
    """``first``; for a skill, the files its manifest added (+), changed (~), lost (-); else ``changed``."""
    if previous is None:
        return "first"
    if version.kind != ComponentKind.SKILL.value:
        return "changed" if version.content_hash != previous.content_hash else "back"
    old = {entry["uri"]: entry["digest"] for entry in previous.facts.get("manifest", ())}
    new = {entry["uri"]: entry["digest"] for entry in version.facts.get("manifest", ())}
    marks = [f"+{_relative(uri, version)}" for uri in sorted(new.keys() - old.keys())]
    marks += [
        f"~{_relative(uri, version)}" for uri in sorted(new.keys() & old.keys()) if new[uri] != old[uri]
    ]
    marks += [f"-{_relative(uri, version)}" for uri in sorted(old.keys() - new.keys())]
    if not marks:
        return "back"
    shown = " ".join(marks[:_SHOWN_FILES])
    return shown + (f" (+{len(marks) - _SHOWN_FILES} more)" if len(marks) > _SHOWN_FILES else "")


def component_table(found: Recorded) -> Table:
    """The versions of one component, newest first: hash, digest, when, for how long, change, file."""
    assert found.kind is not None
    store = found.store
    versions = store.component_versions(found.kind.value, found.key)
    now = time.time()
    title = f"History of {kind_word(found.kind)} {found.key} ({display_path(store.folder)})"
    table = Table(title=escape(title), title_justify="left")
    for column in ("hash", "digest", "went live", "live for", "change", "file", "details"):
        table.add_column(
            column, overflow="fold", no_wrap=column in ("hash", "digest", "went live", "live for")
        )
    for index, version in enumerate(versions):
        previous = versions[index + 1] if index + 1 < len(versions) else None
        ended = version.replaced_at
        served = format_duration((ended if ended is not None else now) - version.went_live_at)
        details = "; ".join(
            part for part in (str(version.facts.get("description") or "").strip(), version.note) if part
        )
        table.add_row(
            version.short_hash,
            version.digest.removeprefix("sha256:")[:12],
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(version.went_live_at)),
            served + (" (live)" if version.live else ""),
            escape(component_change(version, previous)),
            escape(display_path(version.file_path)),
            escape(details),
        )
    return table


def component_document(found: Recorded) -> dict[str, Any]:
    """The versions of one component as ``history --json`` prints them."""
    assert found.kind is not None
    store = found.store
    return {
        "kind": found.kind.value,
        "key": found.key,
        "folder": str(store.folder),
        "database": str(store.path),
        "versions": [v.to_json() for v in store.component_versions(found.kind.value, found.key)],
    }


def _row(kind: str, name: str, store: HistoryStore, count: int, newest: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "folder": str(store.folder),
        "versions": count,
        "live": newest.live,
        "digest": newest.digest,
        "went_live_at": newest.went_live_at,
    }


def _rows(stores: Sequence[HistoryStore]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for store in stores:
        for tool in store.tools():
            tools = store.versions(tool)
            rows.append(_row(TOOL_WORD, tool, store, len(tools), tools[0]))
        for value, key in store.components():
            found = store.component_versions(value, key)
            rows.append(_row(kind_word(ComponentKind(value)), key, store, len(found), found[0]))
    return rows


def overview_table(stores: Sequence[HistoryStore]) -> Table:
    """One row per tool and component with history: kind, name, versions, the newest's digest and time."""
    where = ", ".join(display_path(store.folder) for store in stores)
    table = titled_table(f"Recorded in {where}", collapse_padding=True)
    for column in ("kind", "name", "versions", "newest", "went live"):
        table.add_column(column, no_wrap=column != "name", overflow="fold")
    for row in _rows(stores):
        table.add_row(
            row["kind"],
            escape(row["name"]),
            str(row["versions"]),
            str(row["digest"]).removeprefix("sha256:")[:12] + ("" if row["live"] else " (gone)"),
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["went_live_at"])),
        )
    return table


def overview_document(stores: Sequence[HistoryStore]) -> dict[str, Any]:
    """Everything with history, as ``history --json`` prints it without a name."""
    return {"folders": [str(store.folder) for store in stores], "recorded": _rows(stores)}
