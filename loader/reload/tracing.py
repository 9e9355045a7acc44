"""A span and a duration per file reload, for OpenTelemetry (``loader.calls.tracing`` holds the instruments).

Each file event of a batch becomes a ``reload {file name}`` span, ended when
the batch was committed and as long as the file's load took, with the file
(``code.file.path``), the outcome (``tool_loader.reload.outcome``: the event
kind), the tools it added, changed (replaced by a new version) and removed,
the registry generation it went live in, and ``error.type`` when it failed.
A reload is no part of a request: its span starts a trace of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..calls.tracing import Instruments, instruments
from ..registry.changes import ChangeKind, RegistryChangeSet
from ..status import LoaderEvent, LoaderEventKind

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

__all__ = ["trace_reloads", "tracing_reloads"]

_FAILED = (LoaderEventKind.FAILED, LoaderEventKind.STUCK, LoaderEventKind.REJECTED, LoaderEventKind.CONFLICT)


def tracing_reloads() -> bool:
    """Whether a reload may be recorded (then the loader works out file events even with no listener)."""
    return instruments() is not None


def trace_reloads(
    events: Iterable[LoaderEvent], committed: RegistryChangeSet | None, path_of: Callable[[str], Path]
) -> None:
    """One span (and one duration) per file event of a batch; nothing when no provider is set."""
    found = instruments()
    if found is None:
        return
    changed: dict[Path, list[str]] = {}
    for change in committed.changes if committed is not None else ():
        if change.kind is ChangeKind.REPLACED and change.source is not None:
            changed.setdefault(path_of(change.source), []).append(change.name)
    generation = committed.generation if committed is not None else None
    for event in events:
        _record(found, event, tuple(sorted(changed.get(event.path, ()))), generation)


def _record(found: Instruments, event: LoaderEvent, changed: tuple[str, ...], generation: int | None) -> None:
    seconds = event.duration_ms / 1000
    error_type: str | None = None
    if event.kind in _FAILED:
        error_type = event.error.exc_type if event.error is not None else str(event.kind)
    ended = int(event.time * 1e9)
    span = found.tracer.start_span(
        f"reload {event.path.name}",
        context=found.context.Context(),  # a root span: no request asked for this reload
        start_time=ended - int(seconds * 1e9),
    )
    if span.is_recording():
        attributes: dict[str, AttributeValue] = {
            "code.file.path": str(event.path),
            "tool_loader.reload.outcome": str(event.kind),
            "tool_loader.tools.added": list(event.added),
            "tool_loader.tools.changed": list(changed),
            "tool_loader.tools.removed": list(event.removed),
        }
        if generation is not None:
            attributes["tool_loader.registry.generation"] = generation
        if error_type is not None:
            attributes["error.type"] = error_type
            span.set_status(found.trace.StatusCode.ERROR)
        span.set_attributes(attributes)
        span.end(end_time=ended)
    labels: dict[str, AttributeValue] = {"tool_loader.reload.outcome": str(event.kind)}
    if error_type is not None:
        labels["error.type"] = error_type
    found.reload_duration.record(seconds, labels)
