"""The event log of ``watch``: loader events of one batch turned into the rows a person reads.

The loader reports one event per file; a person thinks in edits. So the rows
are derived from a whole gathered batch: a file removed and another added with
the same tools is one ``moved a.py → b.py``; a file re-run only because a
helper it imports changed (its own bytes did not) says so, and when that helper
failed, says the file keeps its last good version.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..importing.module_names import ModuleClash
from ..spec_diff.kinds import SpecChangeKind
from ..status import FileState, FileStatus, LoaderEvent, LoaderEventKind, ScanReport
from .component_words import KIND_WORDS, component_labels
from .render import (
    conflict_message,
    display_path,
    location,
    module_clash_phrase,
    module_clashes,
    note_words,
    plural,
    unreadable_phrase,
)

__all__ = [
    "EventDeriver",
    "EventLine",
    "breaking_verdict",
    "component_list_lines",
    "describe_event",
    "scan_lines",
    "tool_list_line",
]

_SHOWN_REASONS = 2
"""Breaking reasons spelled out on an event line; the rest are counted (``tool-loader history`` has all)."""


@dataclass(frozen=True, slots=True)
class EventLine:
    """One row of the event log."""

    time: float
    kind: str
    file: str
    tools: str
    detail: str
    duration_ms: float | None
    verdict: str = ""
    """``BREAKING: parameter 'a' removed`` when the version that went live breaks callers of the last one."""
    count: int = 1
    """How many identical consecutive ``updated`` rows this one stands for (the time is the newest's)."""

    def repeated_by(self, newer: EventLine) -> EventLine | None:
        """This row counting ``newer`` too, when both say the same ``updated`` thing; else None."""
        same = (self.kind, self.file, self.tools, self.detail, self.verdict) == (
            newer.kind,
            newer.file,
            newer.tools,
            newer.detail,
            newer.verdict,
        )
        if self.kind != str(LoaderEventKind.UPDATED) or not same:
            return None
        return replace(newer, count=self.count + newer.count)

    def repeats(self) -> str:
        """``(3 times)`` for a row standing for three identical updates; "" for one."""
        return f"({self.count} times)" if self.count > 1 else ""

    def plain(self) -> str:
        """The row as one plain line: ``12:00:01 updated tools/calc.py calculator (3.2 ms)``."""
        parts = [time.strftime("%H:%M:%S", time.localtime(self.time)), self.kind]
        parts.extend(part for part in (self.file, self.tools, self.detail, self.verdict) if part)
        if self.count > 1:
            parts.append(self.repeats())
        if self.duration_ms is not None:
            parts.append(f"({self.duration_ms:.1f} ms)")
        return " ".join(parts)


def describe_event(event: LoaderEvent, before: tuple[str, ...] | None = None) -> EventLine:
    """A loader event on its own as a log row: what happened to which file, what it serves (its tools,
    then its prompts, resources and skills), the reload time.

    ``before``, the component ids the file served until now (None: unknown), names what a removed
    file stopped serving and the prompts and resources an update added or dropped.
    """
    kind = str(event.kind)
    error = event.error
    file = display_path(event.path)
    served = component_labels(event.status.components)
    tools = ", ".join([*event.tools, *served])
    detail = ""
    if (
        event.kind in (LoaderEventKind.FAILED, LoaderEventKind.STUCK, LoaderEventKind.REJECTED)
        and error is not None
    ):
        file = location(error.file or str(event.path), error.line)
        detail = f"{error.exc_type}: {_first_line(error.message)}"
        tools = f"(still serving {tools})" if tools else ""
    elif event.kind is LoaderEventKind.CONFLICT:
        detail = "; ".join(conflict_message(name, owner) for name, owner in event.status.conflicts)
    elif event.kind is LoaderEventKind.REMOVED:
        tools = ", ".join([*event.removed, *component_labels(before or ())])
    changes = _changes(event, served, before)
    if changes and event.kind in (LoaderEventKind.UPDATED, LoaderEventKind.RECOVERED):
        detail = " ".join(filter(None, [detail, f"[{' '.join(changes)}]"]))
    if event.status.notes and event.kind is not LoaderEventKind.REMOVED:
        detail = "; ".join(filter(None, [detail, note_words(event.status)]))
    if event.kind is LoaderEventKind.ADDED:
        detail = "; ".join(
            filter(
                None, [detail, *(f"warning: {_clash_words(c)}" for _, c in module_clashes([event.path], ()))]
            )
        )
    duration = None if event.kind is LoaderEventKind.REMOVED else event.duration_ms
    verdict = breaking_verdict(event) if event.kind in _WENT_LIVE else ""
    return EventLine(event.time, kind, file, tools, detail, duration, verdict)


def _changes(event: LoaderEvent, served: list[str], before: tuple[str, ...] | None) -> list[str]:
    """``+name``/``-name`` for each tool, prompt, resource or skill the new version added or dropped."""
    old = component_labels(before or ())
    new = [label for label in served if label not in old] if before is not None else []
    gone = [label for label in old if label not in served]
    return [f"+{name}" for name in (*event.added, *new)] + [f"-{name}" for name in (*event.removed, *gone)]


_WENT_LIVE = (LoaderEventKind.UPDATED, LoaderEventKind.RECOVERED, LoaderEventKind.MOVED)
"""Events of a file whose new version replaced tools callers already knew."""


def _clash_words(clash: ModuleClash) -> str:
    return f"{module_clash_phrase(clash)}; rename the file"


def scan_lines(report: ScanReport, roots: Sequence[Path]) -> list[EventLine]:
    """Rows for the start of the log: each folder the scan could not read, each file named like a module."""
    now = time.time()
    rows = [
        EventLine(
            now,
            "error" if folder.root else "warning",
            display_path(folder.path),
            "",
            unreadable_phrase(folder),
            None,
        )
        for folder in report.unreadable
    ]
    rows.extend(
        EventLine(now, "warning", display_path(path), "", _clash_words(clash), None)
        for path, clash in module_clashes((status.path for status in report.files), roots)
    )
    return rows


def breaking_verdict(event: LoaderEvent) -> str:
    """``BREAKING: parameter 'a' removed``: what in the version that went live breaks callers of the
    version before it, as the loader classified it (the same verdict history records); "" when nothing does.

    Each reason names its tool unless the file serves that one tool alone.
    """
    breaking = event.status.breaking_changes
    if not breaking:
        return ""
    alone = len(breaking) == 1 and event.tools == (breaking[0][0],)
    reasons: list[str] = []
    for name, change in breaking:
        if name in event.removed:
            reasons.append(f"tool {name!r} removed")
            continue
        reasons.extend(
            reason if alone else f"{name}: {reason}" for reason in change.reasons_of(SpecChangeKind.BREAKING)
        )
    shown = "; ".join(reasons[:_SHOWN_REASONS])
    if len(reasons) > _SHOWN_REASONS:
        shown += f" (+{len(reasons) - _SHOWN_REASONS} more)"
    return f"BREAKING: {shown}"


def tool_list_line(before: set[str], after: set[str]) -> EventLine | None:
    """A ``tools changed: +a -b (9 tools)`` row when the set of names changed."""
    added = sorted(after - before)
    removed = sorted(before - after)
    if not added and not removed:
        return None
    change = " ".join([f"+{name}" for name in added] + [f"-{name}" for name in removed])
    return EventLine(time.time(), "tools changed:", "", change, f"({plural(len(after), 'tool')})", None)


def component_list_lines(before: set[str], after: set[str]) -> list[EventLine]:
    """A ``prompts changed: +review -draft (2 prompts)`` row per kind whose set (of component ids) changed."""
    rows: list[EventLine] = []
    for kind, word in KIND_WORDS.items():
        prefix = f"{kind.value}:"
        old = {i for i in before if i.startswith(prefix)}
        new = {i for i in after if i.startswith(prefix)}
        if old == new:
            continue
        change = " ".join(
            [f"+{i.removeprefix(prefix)}" for i in sorted(new - old)]
            + [f"-{i.removeprefix(prefix)}" for i in sorted(old - new)]
        )
        rows.append(
            EventLine(time.time(), f"{word}s changed:", "", change, f"({plural(len(new), word)})", None)
        )
    return rows


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


class EventDeriver:
    """Turns each gathered batch of loader events into log rows, remembering each file's content hash."""

    def __init__(self, statuses: Iterable[FileStatus]) -> None:
        statuses = list(statuses)
        self._hashes: dict[Path, str | None] = {s.path: s.content_hash for s in statuses}
        self._components: dict[Path, tuple[str, ...]] = {s.path: s.components for s in statuses}

    def rows(self, events: list[LoaderEvent]) -> list[EventLine]:
        """Log rows for one batch: moves paired, helper-driven reloads explained."""
        moves = _pair_moves(events)
        moved_away = set(moves.values())
        helpers = [
            e for e in events if not e.tools and e.path.suffix == ".py"
        ]  # a data file is nobody's helper
        failed_helpers = [e for e in helpers if e.kind in (LoaderEventKind.FAILED, LoaderEventKind.STUCK)]
        changed_helpers = [
            e
            for e in helpers
            if e.kind in (LoaderEventKind.UPDATED, LoaderEventKind.RECOVERED)
            and self._hashes.get(e.path) != e.status.content_hash
        ]
        rows: list[EventLine] = []
        dependents: list[EventLine] = []  # shown after the helper they follow
        for event in events:
            if event.path in moved_away:
                continue
            if event.path in moves:
                rows.append(_moved_line(moves[event.path], event))
            elif self._reran_for_helper(event):
                dependents.append(_helper_line(event, failed_helpers, changed_helpers))
            else:
                rows.append(describe_event(event, self._components.get(event.path, ())))
        rows.extend(dependents)
        for event in events:
            self._hashes[event.path] = (
                None if event.status.state is FileState.REMOVED else event.status.content_hash
            )
            self._components[event.path] = event.status.components
        return rows

    def _reran_for_helper(self, event: LoaderEvent) -> bool:
        """An update that changed neither the file's bytes nor its tools: a helper it imports changed."""
        return (
            event.kind is LoaderEventKind.UPDATED
            and not event.added
            and not event.removed
            and event.path in self._hashes
            and self._hashes[event.path] == event.status.content_hash
        )


def _pair_moves(events: list[LoaderEvent]) -> Mapping[Path, Path]:
    """``{new path: old path}``: the loader's MOVED events, and an added file with a removed one
    carrying the same tools (a move the loader saw as two batches)."""
    removed = {e.removed: e.path for e in events if e.kind is LoaderEventKind.REMOVED and e.removed}
    moves: dict[Path, Path] = {
        e.path: e.moved_from for e in events if e.kind is LoaderEventKind.MOVED and e.moved_from is not None
    }
    for event in events:
        if event.kind is LoaderEventKind.ADDED and event.tools:
            old = removed.pop(tuple(event.tools), None)
            if old is not None:
                moves[event.path] = old
    return moves


def _moved_line(old: Path, event: LoaderEvent) -> EventLine:
    return EventLine(
        event.time,
        "moved",
        f"{display_path(old)} → {display_path(event.path)}",
        ", ".join(event.tools),
        "",
        event.duration_ms,
        breaking_verdict(event),
    )


def _helper_line(
    event: LoaderEvent, failed_helpers: list[LoaderEvent], changed_helpers: list[LoaderEvent]
) -> EventLine:
    tools = ", ".join(event.tools)
    if failed_helpers:
        helpers = ", ".join(display_path(e.path) for e in failed_helpers)
        return EventLine(
            event.time,
            "kept",
            display_path(event.path),
            tools,
            f"(last good version: {helpers} failed)",
            event.duration_ms,
        )
    helpers = ", ".join(display_path(e.path) for e in changed_helpers) or "a helper"
    return EventLine(
        event.time,
        "reloaded",
        display_path(event.path),
        tools,
        f"({helpers} changed)",
        event.duration_ms,
        breaking_verdict(event),  # it ran again, so its tools went live again: the verdict is this run's
    )
