"""What the history commands share: ``--state-dir``/``--no-history`` and opening a folder's history."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..history.recorder import HistoryRecorder
from ..history.store import HistoryError, HistoryStore, database_path
from ..reload.loader import ToolLoader
from .common import UsageError, resolve_dirs
from .render import did_you_mean

__all__ = ["add_history_arguments", "attach_history", "open_history", "store_with_tool"]


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
