"""What the loader tells the world after a commit: file statuses, loader events, plugin hooks.

All of it is derived, never stored twice: a file's status from its record and
the name owners; a loader event from two statuses; the pluggy notifications
from the registry's own ``RegistryChangeSet``, so the hooks can never disagree
with what the registry did.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..importing.backend import LoadBackend
from ..listeners import Listeners
from ..names import normalise_tool_name
from ..registry.changes import ChangeKind, RegistryChangeSet
from ..spec_diff.kinds import SpecChange, SpecChangeKind
from ..spec_diff.specs import compare_specs
from ..status import FileNote, FileState, FileStatus, LoaderEvent, LoaderEventKind
from .file_state import FileRecord, Phase
from .path_order import path_key
from .tracing import trace_reloads, tracing_reloads

__all__ = [
    "Announcer",
    "FileOutcome",
    "derive_events",
    "event_for",
    "failing_helpers",
    "file_status",
    "note_spec_changes",
    "notify_registry_changes",
    "spec_changes_by_file",
]

logger = logging.getLogger(__name__)

Notify = Callable[..., None]
"""Calls a pluggy notification hook by name, logging (never raising) a plugin's failure."""
PathOf = Callable[[str], Path]
"""Turns a registry change's ``source`` back into the file's path."""

_STATE_OF_PHASE = {
    Phase.LOADED: FileState.LOADED,
    Phase.FAILED: FileState.FAILED,
    Phase.STUCK: FileState.STUCK,
    Phase.REJECTED: FileState.REJECTED,
    Phase.REMOVED: FileState.REMOVED,
}

_EVENT_OF_STATE = {
    FileState.REMOVED: LoaderEventKind.REMOVED,
    FileState.FAILED: LoaderEventKind.FAILED,
    FileState.STUCK: LoaderEventKind.STUCK,
    FileState.CONFLICT: LoaderEventKind.CONFLICT,
    FileState.REJECTED: LoaderEventKind.REJECTED,
}

_TROUBLED = (FileState.FAILED, FileState.STUCK, FileState.CONFLICT, FileState.REJECTED)


@dataclass(slots=True)
class FileOutcome:
    """One file's part in a batch: its status before, how long it loaded, where it moved from."""

    before: FileStatus | None
    duration: float = 0.0
    moved_from: Path | None = None


def derive_events(
    outcomes: Mapping[Path, FileOutcome],
    records: Mapping[Path, FileRecord],
    owner_of: Callable[[str], Path | None],
    failing_of: Callable[[FileRecord], tuple[Path, ...]] = lambda record: (),
    *,
    with_events: bool = True,
) -> tuple[dict[Path, FileStatus], list[LoaderEvent]]:
    """The new status of every file of a batch whose status changed, and its event.

    A move is one ``MOVED`` event for the new path; the old path's status
    becomes ``removed`` without an event of its own. Without ``with_events``
    (nobody would hear them) only the statuses are worked out.
    """
    statuses: dict[Path, FileStatus] = {}
    events: list[LoaderEvent] = []
    moved_away = {o.moved_from for o in outcomes.values() if o.moved_from is not None}
    # Events go out in path order; statuses alone need none (a scan of thousands skips the sort).
    items = outcomes.items()
    ordered = sorted(items, key=lambda item: path_key(item[0])) if with_events else list(items)
    for path, outcome in ordered:
        status = file_status(records[path], owner_of, failing_of(records[path]))
        if status == outcome.before:
            continue
        statuses[path] = status
        if path in moved_away or not with_events:
            continue
        event = event_for(status, outcome.before, outcome.duration)
        if outcome.moved_from is not None and event.kind is LoaderEventKind.ADDED:
            event = replace(event, kind=LoaderEventKind.MOVED, moved_from=outcome.moved_from)
        events.append(event)
    return statuses, events


def failing_helpers(
    backend: LoadBackend, modules: Mapping[str, Path], records: Mapping[Path, FileRecord], record: FileRecord
) -> tuple[Path, ...]:
    """The helpers ``record`` imports, at any depth, whose latest load failed or is stuck."""
    if not backend.dependencies(record.module_name):
        return ()  # most tool files import no helper
    seen: set[str] = set()
    stack = [record.module_name]
    failing: list[Path] = []
    while stack:
        for name in backend.dependencies(stack.pop()):
            path = modules.get(name)
            helper = records.get(path) if path is not None else None
            if name not in seen and helper is not None:
                seen.add(name)
                stack.append(name)
                if helper.phase in (Phase.FAILED, Phase.STUCK):
                    failing.append(helper.path)
    return tuple(sorted(failing))


def file_status(
    record: FileRecord, owner_of: Callable[[str], Path | None], failing_dependencies: tuple[Path, ...] = ()
) -> FileStatus:
    """The public status of one file: its phase, with CONFLICT where another file owns its names."""
    owned: list[str] = []
    components: list[str] = []
    conflicts: list[tuple[str, Path]] = []
    for name in record.discovered:
        owner = owner_of(normalise_tool_name(name))
        if owner == record.path:
            owned.append(name)
        elif owner is not None:
            conflicts.append((name, owner))
    for key in record.components:
        owner = owner_of(key)
        if owner == record.path:
            components.append(key)
        elif owner is not None:
            conflicts.append((key, owner))
    state = _STATE_OF_PHASE[record.phase]
    if state is FileState.LOADED and conflicts:
        state = FileState.CONFLICT
    return FileStatus(
        path=record.path,
        module_name=record.module_name,
        state=state,
        tools=tuple(sorted(owned)),
        content_hash=record.content_hash[:12] if record.content_hash else None,
        loaded_at=record.loaded_at,
        load_seconds=record.load_seconds,
        error=record.error,
        conflicts=tuple(sorted(conflicts)),
        spec_changes=record.spec_changes,
        failing_dependencies=failing_dependencies,
        notes=(FileNote.REWRITES_ITSELF,) if record.rewrites_itself else (),
        components=tuple(sorted(components)),
    )


def event_for(status: FileStatus, before: FileStatus | None, duration: float) -> LoaderEvent:
    """The loader event for a file whose status changed from ``before`` to ``status``."""
    was_there = before is not None and before.state is not FileState.REMOVED
    old_tools = set(before.tools) if before is not None and was_there else set()
    new_tools = set(status.tools)
    kind = _EVENT_OF_STATE.get(status.state)
    if kind is None:
        if not was_there:
            kind = LoaderEventKind.ADDED
        elif before is not None and before.state in _TROUBLED:
            kind = LoaderEventKind.RECOVERED
        else:
            kind = LoaderEventKind.UPDATED
    return LoaderEvent(
        kind=kind,
        path=status.path,
        tools=status.tools,
        duration_ms=duration * 1000,
        time=time.time(),
        status=status,
        error=status.error,
        added=tuple(sorted(new_tools - old_tools)),
        removed=tuple(sorted(old_tools - new_tools)),
    )


_TOOL_REMOVED = SpecChange(SpecChangeKind.BREAKING, ("tool removed",), (SpecChangeKind.BREAKING,))
_UNCHANGED = SpecChange()
_TOOL_ADDED = SpecChange(SpecChangeKind.ADDITIVE, ("tool added",), (SpecChangeKind.ADDITIVE,))


def note_spec_changes(
    records: Mapping[Path, FileRecord], committed: RegistryChangeSet | None, path_of: PathOf = Path
) -> None:
    """Keep on each file's record how its tools' specs changed in this commit (until its next one)."""
    for source, spec_changes in spec_changes_by_file(committed, path_of).items():
        record = records.get(source)
        if record is not None:
            record.spec_changes = (
                tuple(spec_changes)
                if len(spec_changes) == 1
                else tuple(sorted(spec_changes, key=lambda item: item[0]))
            )


def spec_changes_by_file(
    committed: RegistryChangeSet | None, path_of: PathOf = Path
) -> dict[Path, list[tuple[str, SpecChange]]]:
    """How each committed tool's spec changed, grouped by the file it comes from (or came from).

    ``path_of`` turns a change's ``source`` back into its path (the loader passes the
    paths it already holds: parsing thousands of ``Path`` s costs more than the rest).
    """
    by_file: dict[Path, list[tuple[str, SpecChange]]] = {}
    for change in committed.changes if committed is not None else ():
        if change.source is None:
            continue
        if change.kind is ChangeKind.REPLACED:
            assert change.tool is not None and change.previous is not None
            old_spec, new_spec = change.previous.tool_spec, change.tool.tool_spec
            # Most saves change a body, not the spec: equal specs need no walk through their schemas.
            spec_change = _UNCHANGED if old_spec == new_spec else compare_specs(old_spec, new_spec)
        else:
            spec_change = _TOOL_ADDED if change.kind is ChangeKind.ADDED else _TOOL_REMOVED
        by_file.setdefault(path_of(change.source), []).append((change.name, spec_change))
    return by_file


def notify_registry_changes(
    notify: Callable[..., None],
    change_set: RegistryChangeSet | None,
    path_of: PathOf = Path,
    *,
    tools: bool = True,
    components: bool = True,
) -> None:
    """Call the ``tool_loader_tool_*`` and ``tool_loader_component_*`` hooks for what the registry
    actually committed (``tools``/``components`` False skips a kind nobody listens to)."""
    if change_set is None:
        return
    for change in change_set.changes if tools else ():
        hook, kwargs = _change_hook("tool", change.kind, change.tool, change.previous)
        if change.kind is ChangeKind.REMOVED:
            kwargs["name"] = change.name
        notify(hook, path=_where(change.source, path_of), **kwargs)
    for item in change_set.components if components else ():
        hook, kwargs = _change_hook("component", item.kind, item.component, item.previous)
        notify(hook, path=_where(item.source, path_of), **kwargs)


def _change_hook(noun: str, kind: ChangeKind, new: object, previous: object) -> tuple[str, dict[str, Any]]:
    """The hook one change of a ``noun`` (tool, component) calls, and what it is handed: an added one
    the new version, a replaced one the new and the previous, a removed one the version that served last."""
    if kind is ChangeKind.ADDED:
        kwargs = {noun: new}
    elif kind is ChangeKind.REPLACED:
        kwargs = {noun: new, "previous": previous}
    else:
        kwargs = {noun: previous}
    return _hook_name(noun, kind), kwargs


def _hook_name(noun: str, kind: ChangeKind) -> str:
    return f"tool_loader_{noun}_{kind.value}"


def _where(source: str | None, path_of: PathOf) -> Path:
    return path_of(source) if source is not None else Path("?")


_EVENT_HOOKS = ("tool_loader_file_status_changed", "tool_loader_load_failed")
"""The hooks ``Announcer.announce`` calls with file events."""
_TOOL_HOOKS = tuple(_hook_name("tool", kind) for kind in ChangeKind)
_COMPONENT_HOOKS = tuple(_hook_name("component", kind) for kind in ChangeKind)
"""The hooks ``notify_registry_changes`` calls: a scan of thousands of files with none of them
implemented skips a loop over every change."""


class Announcer:
    """Hands a batch's outcome to plugins and subscribers, in one order: registry hooks, then file events."""

    def __init__(self, notify: Notify, hooked: Callable[[str], bool] = lambda hook: True) -> None:
        self._notify = notify
        self._hooked = hooked
        self._listeners: Listeners[LoaderEvent] = Listeners("loader", logger)

    def wants_events(self) -> bool:
        """Whether a file event would reach anyone: a subscriber, a plugin's file hook, or a tracer."""
        return bool(self._listeners) or any(self._hooked(hook) for hook in _EVENT_HOOKS) or tracing_reloads()

    def subscribe(self, listener: Callable[[LoaderEvent], None]) -> Callable[[], None]:
        """Call ``listener`` with every file event; returns a function that unsubscribes."""
        return self._listeners.subscribe(listener)

    def announce(
        self,
        committed: RegistryChangeSet | None,
        events: list[LoaderEvent],
        outcomes: Mapping[Path, FileOutcome],
        path_of: PathOf = Path,
    ) -> None:
        """Registry hooks from the committed change set, then each event to hooks and listeners."""
        if committed is not None:
            tools = any(self._hooked(hook) for hook in _TOOL_HOOKS)
            components = bool(committed.components) and any(self._hooked(hook) for hook in _COMPONENT_HOOKS)
            if tools or components:
                notify_registry_changes(self._notify, committed, path_of, tools=tools, components=components)
        if events:
            trace_reloads(events, committed, path_of)
        for event in events:
            if event.error is not None and event.kind in (LoaderEventKind.FAILED, LoaderEventKind.STUCK):
                self._notify("tool_loader_load_failed", path=event.path, error=event.error)
            before = outcomes[event.path].before
            self._notify("tool_loader_file_status_changed", status=event.status, previous=before)
            self._listeners.tell(event)
