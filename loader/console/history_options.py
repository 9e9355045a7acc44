"""What the history commands share: ``--state-dir``/``--no-history`` and opening a folder's history."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..history.recorder import HistoryRecorder
from ..history.store import HistoryError, HistoryStore, database_path
from ..reload.loader import ToolLoader
from ..types import ComponentKind
from .common import UsageError, resolve_dirs
from .component_words import kind_of_word, kind_word
from .render import did_you_mean

__all__ = [
    "TOOL_WORD",
    "Recorded",
    "add_history_arguments",
    "attach_history",
    "find_recorded",
    "open_history",
    "store_with_tool",
]

TOOL_WORD = "tool"
"""``--kind tool``: the name is a tool's."""


def add_history_arguments(parser: argparse.ArgumentParser, *, recording: bool = False) -> None:
    """``--state-dir S`` always; ``--no-history`` for commands that record while they watch."""
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        metavar="S",
        help="where tool history is kept (default: $TOOL_LOADER_STATE_DIR, else the user state directory)",
    )
    if recording:
        parser.add_argument(
            "--no-history", action="store_true", help="do not record the tool versions that go live"
        )


def attach_history(loader: ToolLoader, args: argparse.Namespace) -> HistoryRecorder | None:
    """Record every version that goes live from now on, starting with what the first scan loaded.

    Raises:
        UsageError: The history database cannot be opened (a state directory that is not writable).
    """
    if getattr(args, "no_history", False):
        return None
    recorder = HistoryRecorder(args.state_dir)
    loader.register_plugin(recorder, name="tool-loader-history")
    try:
        recorder.check_state_dir()
    except HistoryError as exc:
        loader.plugin_manager.unregister(recorder)
        raise UsageError(f"{exc} (pass --state-dir, or --no-history to run without it)") from exc
    recorder.record_serving()
    return recorder


def open_history(dirs: Sequence[Path] | None, state_dir: Path | None) -> list[HistoryStore]:
    """The history of each folder (``--dir``, default ./tools) that has one.

    Raises:
        UsageError: None of the folders has any recorded history.
    """
    folders = resolve_dirs(dirs)
    stores: list[HistoryStore] = []
    for folder in folders:
        if database_path(folder, state_dir).is_file():
            try:
                stores.append(HistoryStore(folder, state_dir))
            except HistoryError as exc:
                raise UsageError(str(exc)) from exc
    if not stores:
        where = ", ".join(str(database_path(folder, state_dir)) for folder in folders)
        raise UsageError(
            f"no tool history for {', '.join(map(str, folders))} (looked in {where}); "
            "history is recorded while `tool-loader watch` or `tool-loader serve` runs"
        )
    return stores


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a name given to ``history`` names: a tool (``kind`` None) or a component, and its store."""

    store: HistoryStore
    kind: ComponentKind | None
    key: str


def _component_named(
    stores: Sequence[HistoryStore], name: str, wanted: ComponentKind | None
) -> Recorded | None:
    """The component keyed ``name`` (a prompt's name, a resource's URI, a skill's path), else the one
    whose newest version is called ``name`` (a resource file's path)."""
    by_name: Recorded | None = None
    for store in stores:
        for value, key in store.components():
            kind = ComponentKind(value)
            if wanted not in (None, kind):
                continue
            if key == name:
                return Recorded(store, kind, key)
            newest = store.component_versions(value, key)[:1]
            if by_name is None and newest and newest[0].facts.get("name") == name:
                by_name = Recorded(store, kind, key)
    return by_name


def find_recorded(stores: Sequence[HistoryStore], name: str, kind: str | None = None) -> Recorded:
    """The tool called ``name`` (first), else the prompt, resource, template, skill or skill file;
    ``kind`` (``tool``, ``prompt``, ...) narrows the search.

    Raises:
        UsageError: Nothing of that name has versions (the message lists what has).
    """
    if kind in (None, TOOL_WORD):
        for store in stores:
            if store.versions(name):
                return Recorded(store, None, name)
    if kind != TOOL_WORD:
        found = _component_named(stores, name, None if kind is None else kind_of_word(kind))
        if found is not None:
            return found
    tools = sorted({tool for store in stores for tool in store.tools()})
    components = sorted({(kind, key) for store in stores for kind, key in store.components()})
    wanted = None if kind in (None, TOOL_WORD) else kind_of_word(kind)
    close = [] if wanted is not None else tools
    close += [
        key for value, key in components if wanted in (None, ComponentKind(value)) and kind != TOOL_WORD
    ]
    message = (
        f"no recorded versions of {kind if wanted is not None else 'tool'} {name!r}; "
        f"{did_you_mean(name, close)}tools with history: {', '.join(tools) or 'none'}"
    )
    if components:
        listed = ", ".join(f"{kind_word(ComponentKind(value))} {key}" for value, key in components)
        message += f"; prompts, resources and skills with history: {listed}"
    raise UsageError(message)


def store_with_tool(stores: Sequence[HistoryStore], name: str) -> HistoryStore:
    """The first store that has versions of ``name``.

    Raises:
        UsageError: No folder has a version of ``name`` (the message lists the tools that have one).
    """
    for store in stores:
        if store.versions(name):
            return store
    known = sorted({tool for store in stores for tool in store.tools()})
    raise UsageError(
        f"no recorded versions of tool {name!r}; {did_you_mean(name, known)}"
        f"tools with history: {', '.join(known) or 'none'}"
    )
