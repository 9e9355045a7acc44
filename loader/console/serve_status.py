"""The lines ``serve`` prints while serving: registry changes and the load problems a user must see.

The server and the loader hand typed facts (change sets, loader events); the
wording and the colours live here, once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..registry.changes import ChangeKind, RegistryChangeSet
from ..registry.tool_registry import ToolRegistry
from ..reload.loader import ToolLoader
from ..status import LoaderEvent, LoaderEventKind
from .render import conflict_message

__all__ = ["StatusLine", "change_set_line", "loader_event_line", "reporting"]

_MARKS = {ChangeKind.ADDED: "+", ChangeKind.REPLACED: "~", ChangeKind.REMOVED: "-"}
_ORDER = list(_MARKS)


@dataclass(frozen=True, slots=True)
class StatusLine:
    """One line for the operator, with the style it is shown in."""

    text: str
    style: str | None = None


def change_set_line(change_set: RegistryChangeSet) -> StatusLine:
    """One line per registry commit, by kind then name: ``tools changed (generation 7): +new ~old -gone``."""
    changes = sorted(change_set.changes, key=lambda change: (_ORDER.index(change.kind), change.name))
    parts = [f"{_MARKS[change.kind]}{change.name}" for change in changes]
    return StatusLine(
        f"tools changed (generation {change_set.generation}): {' '.join(parts) or '(nothing)'}", "cyan"
    )


def loader_event_line(event: LoaderEvent) -> StatusLine | None:
    """A line for the loader events a user must see (a broken save, a conflict, a recovery), else None.

    Additions, updates and removals are already told by ``change_set_line``.
    """
    if event.kind in (LoaderEventKind.FAILED, LoaderEventKind.STUCK):
        error = event.error or event.status.error
        what = error.one_line() if error is not None else "unknown error"
        serving = ", ".join(event.status.tools)
        still = f"; still serving the last good version ({serving})" if serving else ""
        verb = "load failed" if event.kind is LoaderEventKind.FAILED else "load stuck"
        return StatusLine(f"{verb}: {event.path}: {what}{still}", "bold red")
    if event.kind is LoaderEventKind.CONFLICT:
        clashes = "; ".join(conflict_message(name, owner) for name, owner in event.status.conflicts)
        return StatusLine(f"conflict: {event.path}: {clashes or 'a tool name is already taken'}", "yellow")
    if event.kind is LoaderEventKind.RECOVERED:
        return StatusLine(
            f"recovered: {event.path} loads again ({', '.join(event.tools) or 'no tools'})", "green"
        )
    return None


@contextmanager
def reporting(
    registry: ToolRegistry, loader: ToolLoader | None, show: Callable[[StatusLine], None]
) -> Iterator[None]:
    """While active, ``show`` a line per registry change and per load problem."""

    def on_event(event: LoaderEvent) -> None:
        line = loader_event_line(event)
        if line is not None:
            show(line)

    unsubscribers = [registry.subscribe(lambda change_set: show(change_set_line(change_set)))]
    if loader is not None:
        unsubscribers.append(loader.subscribe(on_event))
    try:
        yield
    finally:
        for unsubscribe in unsubscribers:
            unsubscribe()
