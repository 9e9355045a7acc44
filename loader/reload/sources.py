"""Which files in a watched folder are tool sources: ``.py`` files that no editor is in the middle of.

The built-in rule is here; ``SourceFinder`` asks the plugins (remembering each
verdict, because rescans ask about every file every time) and walks folders.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

import pluggy

from ..components.files import PROMPTS_FOLDER, RESOURCES_FOLDER, file_component_kind
from ..components.skills import SKILLS_FOLDER
from .walk import MAX_FOLDER_DEPTH, folder_depth, walk_folders

__all__ = [
    "SourceFinder",
    "data_file_path",
    "is_default_source_name",
    "is_default_tool_source",
    "is_ignored_dir",
]

_DATA_FOLDERS = (PROMPTS_FOLDER, RESOURCES_FOLDER, SKILLS_FOLDER)

_VERDICT_CACHE_LIMIT = 200_000
_BUILTIN_SOURCE_RULE = "loader.plugins.sources"
"""The built-in plugin whose ``tool_loader_is_tool_source`` is ``is_default_tool_source``."""

_EDITOR_MARKERS = ("___jb_tmp___", "___jb_old___", ".~", "~")


def is_ignored_dir(name: str) -> bool:
    """Hidden folders, ``__pycache__`` and the like are never scanned."""
    return name.startswith(".") or name == "__pycache__" or name.endswith(".egg-info")


def is_default_tool_source(path: Path, root: Path) -> bool:
    """The built-in rule: a visible ``.py`` file that is not a package ``__init__`` or an editor temporary.

    Editors save through temporaries and backups (``.#x.py``, ``x.py~``,
    ``.x.py.swp``, ``x.py.tmp``, JetBrains ``x.py___jb_tmp___``, Emacs ``#x.py#``);
    only the final name is a tool source. ``__init__.py`` is importable as a
    package but not scanned for tools.
    """
    if not is_default_source_name(path.name):
        return data_file_path(path, root) is not None
    # ``path.relative_to(root)``, as strings: this runs for every file of every scan.
    text, base = str(path), str(root)
    if os.path.normcase(text) == os.path.normcase(base):
        return True
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not os.path.normcase(text).startswith(os.path.normcase(prefix)):
        return False
    folders = text[len(prefix) :].split(os.sep)[:-1]
    return not folders or not any(is_ignored_dir(part) for part in folders)


def data_file_path(path: Path, root: Path) -> PurePosixPath | None:
    """``path`` relative to ``root`` for a data file: ``prompts/**/*.md``, ``resources/**``, ``skills/**``.

    Editor temporaries and hidden files are not; the loader reads these files itself, no code runs.
    """
    name = path.name
    if name.startswith((".", "#", "~")) or _has_editor_marker(name):
        return None
    try:
        relative = PurePosixPath(*path.relative_to(root).parts)
    except ValueError:
        return None
    if any(is_ignored_dir(part) for part in relative.parts[:-1]):
        return None
    return relative if file_component_kind(relative) is not None else None


def is_default_source_name(name: str) -> bool:
    """The built-in rule's verdict on a file name alone (for a file in a folder that is not ignored)."""
    if not name.endswith(".py") or name == "__init__.py":
        return False
    return not (name.startswith((".", "#", "~")) or _has_editor_marker(name))


def _has_editor_marker(name: str) -> bool:
    for marker in _EDITOR_MARKERS:
        if marker in name:
            return True
    return False


def _in_data_folder(folder: Path, root: Path) -> bool:
    """Whether ``folder`` is ``prompts/``, ``resources/`` or ``skills/`` of ``root``, or below one."""
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and parts[0] in _DATA_FOLDERS


def _too_deep(path: Path, root: Path) -> bool:
    """Whether the file ``path`` lies in a folder deeper below ``root`` than any walk descends."""
    return folder_depth(os.path.dirname(path), str(root)) > MAX_FOLDER_DEPTH


class SourceFinder:
    """Lists tool sources under a folder, asking the plugins once per path."""

    def __init__(self, manager: pluggy.PluginManager, *, recursive: bool) -> None:
        self._manager = manager
        self._recursive = recursive
        self._verdicts: dict[Path, bool] = {}

    def forget_verdicts(self) -> None:
        """Plugins changed: ask again about every path."""
        self._verdicts.clear()

    def matters(self, path: Path, root: Path) -> bool:
        """Whether a change at ``path`` can change the tool set: a package marker or a tool source."""
        if path.name == "__init__.py":
            return not _too_deep(path, root)
        return self.is_source(path, root)

    def is_source(self, path: Path, root: Path) -> bool:
        """The plugins' verdict on ``path`` (remembered); never a file in a folder the walks skip."""
        known = self._verdicts.get(path)  # not try/except: a scan asks about every new path once
        if known is not None:
            return known
        if _too_deep(path, root):
            verdict = False  # an event from a folder no scan lists: the same file, the same answer
        elif self._builtin_rule_only():
            verdict = is_default_tool_source(path, root)  # the built-in rule alone: no dispatch per file
        else:
            verdict = bool(self._manager.hook.tool_loader_is_tool_source(path=path, root=root))
        return self._remember(path, verdict)

    def _builtin_rule_only(self) -> bool:
        implementations = self._manager.hook.tool_loader_is_tool_source.get_hookimpls()
        return len(implementations) == 1 and implementations[0].plugin_name == _BUILTIN_SOURCE_RULE

    def _remember(self, path: Path, verdict: bool) -> bool:
        if len(self._verdicts) < _VERDICT_CACHE_LIMIT:
            self._verdicts[path] = verdict
        return verdict

    def list_sources(
        self, root: Path, under: Path | None = None, *, unreadable: list[tuple[Path, str]] | None = None
    ) -> list[Path]:
        """Every tool source and package ``__init__`` below ``under`` (default ``root``).

        Folders that cannot be listed (or reached) are added to ``unreadable`` with the system's reason.
        """
        found: list[Path] = []
        start = under or root

        def refused(exc: OSError) -> None:
            if unreadable is not None:
                unreadable.append((Path(exc.filename or start), exc.strerror or str(exc)))

        try:
            if not stat.S_ISDIR(os.stat(start).st_mode):
                return found
        except PermissionError as exc:
            refused(exc)
            return found
        except (OSError, ValueError):
            return found
        # Under a start that is no ignored folder, the walk skips ignored ones: with the built-in
        # rule alone, a file's name is then the whole verdict (no path arithmetic per file).
        by_name = self._builtin_rule_only() and is_default_tool_source(start / "x.py", root)
        top_depth = folder_depth(str(start), str(root))
        if top_depth > MAX_FOLDER_DEPTH:
            return found  # below what the walk of ``root`` lists (and says it skips)
        for directory, dirnames, filenames in walk_folders(str(start), top_depth=top_depth, on_error=refused):
            dirnames[:] = sorted(d for d in dirnames if not is_ignored_dir(d))
            if not self._recursive:
                dirnames[:] = []
            here = Path(directory)
            if _in_data_folder(here, root):  # prompts/, resources/, skills/: every file is asked about
                found.extend(
                    here / n for n in filenames if not n.endswith(".py") and self.is_source(here / n, root)
                )
            self._python_sources(here, filenames, root, by_name, found)
        return found

    def _python_sources(
        self, here: Path, filenames: list[str], root: Path, by_name: bool, found: list[Path]
    ) -> None:
        """Add the ``.py`` sources and package markers among ``filenames`` (in ``here``) to ``found``."""
        for name in filenames:
            if not name.endswith(".py"):
                continue
            path = here / name
            if name == "__init__.py":
                found.append(path)
            elif by_name:
                verdict = self._verdicts.get(path)
                if verdict is None:
                    verdict = self._remember(path, is_default_source_name(name))
                if verdict:
                    found.append(path)
            elif self.is_source(path, root):
                found.append(path)
