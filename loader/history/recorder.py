"""A plugin that records every tool and component version a ``ToolLoader`` puts live into a ``HistoryStore``.

It listens to the loader's notification hooks (``tool_loader_tool_*`` and
``tool_loader_component_*``: added, replaced, removed), so the loader itself
knows nothing about history. A skill is recorded again whenever one of its
files changes, under its new manifest digest (``component_facts``). The hooks run on the thread
that applies saves, so they only work out what went live and queue it; a
``HistoryWriter`` thread writes it (a busy or broken database never holds up
a reload). The file content recorded is
the bytes that were loaded: the file is read again and its sha256 checked
against the loader's status record for that path; if the file has already
changed on disk, the source the importer compiled (kept in ``linecache``) is
tried; failing both, the version is recorded without content and a note says why.
"""

from __future__ import annotations

import hashlib
import linecache
import logging
import os
import time
from pathlib import Path
from typing import Any

from ..health import ThreadHealth
from ..hookspecs import hookimpl
from ..types import AgentTool, Component, ComponentKind
from .component_facts import component_facts, manifest_digest, skill_manifest, skills_holding
from .component_store import CONTENT_KEPT_BYTES, NewComponentVersion
from .provenance import provenance_of
from .store import DEFAULT_KEEP, HistoryError, HistoryStore, NewVersion, database_path
from .writer import DEFAULT_QUEUE_LIMIT, ComponentRemoval, HistoryWriter, Record, Removal

__all__ = ["NOTE_CONTENT_MISMATCH", "UNCONFIGURE_FLUSH", "HistoryRecorder"]

logger = logging.getLogger(__name__)

NOTE_CONTENT_MISMATCH = "file changed on disk before it could be recorded; content not kept"
"""The note of a version whose loaded bytes could not be recovered."""

UNCONFIGURE_FLUSH = 10.0
"""Seconds a closing loader waits for its queued versions (a database locked longer drops them)."""


class HistoryRecorder:
    """Register with ``ToolLoader(plugins=[HistoryRecorder()])`` or ``loader.register_plugin(...)``.

    One ``HistoryStore`` is opened per watched folder, lazily, under
    ``state_dir`` (default: the platform's user state directory). Versions are
    written in the background: ``flush`` waits for them, ``close`` writes what
    is queued and closes the stores.
    """

    def __init__(
        self,
        state_dir: str | os.PathLike[str] | None = None,
        *,
        keep: int = DEFAULT_KEEP,
        queue_limit: int = DEFAULT_QUEUE_LIMIT,
    ) -> None:
        self.state_dir = state_dir
        self.keep = keep
        self._loader: Any = None
        self._writer = HistoryWriter(state_dir, keep=keep, limit=queue_limit)
        self._content: dict[Path, tuple[str | None, bytes | None, str, str | None, bool]] = {}
        self._manifests: dict[tuple[Path, str], str] = {}  # (root, skill) -> the manifest digest last queued

    # ------------------------------------------------------------ hooks
    @hookimpl
    def tool_loader_configure(self, loader: Any) -> None:
        """Remember the loader: its folders and file status records are needed later."""
        self._loader = loader
        threads = getattr(loader, "threads", None)
        if isinstance(threads, ThreadHealth):
            self._writer.threads = threads

    @hookimpl
    def tool_loader_unconfigure(self, loader: Any) -> None:
        """The loader closes: write what it queued, so its history is whole once ``close()`` returns."""
        if loader is self._loader and not self._writer.flush(UNCONFIGURE_FLUSH):
            logger.warning("tool history: versions still queued %.0f s after close()", UNCONFIGURE_FLUSH)

    @hookimpl
    def tool_loader_tool_added(self, tool: AgentTool, path: Path) -> None:
        """A tool went live for the first time in this process."""
        self._record(tool, path)

    @hookimpl
    def tool_loader_tool_replaced(self, tool: AgentTool, previous: AgentTool, path: Path) -> None:
        """A new version of a tool went live."""
        self._record(tool, path)

    @hookimpl
    def tool_loader_tool_removed(self, name: str, tool: AgentTool, path: Path) -> None:
        """A tool left the registry: its live version ends now."""
        root = self._root_of(Path(path))
        if root is not None:
            self._writer.submit(Removal(root, name, time.time()))

    @hookimpl
    def tool_loader_component_added(self, component: Component, path: Path) -> None:
        """A prompt, resource, template, skill or skill file went live for the first time in this process."""
        self._record_component(component, Path(path))

    @hookimpl
    def tool_loader_component_replaced(self, component: Component, previous: Component, path: Path) -> None:
        """A new version of a component went live."""
        self._record_component(component, Path(path))

    @hookimpl
    def tool_loader_component_removed(self, component: Component, path: Path) -> None:
        """A component left the registry: its live version ends now (and its skill's manifest changed)."""
        root = self._root_of(Path(path))
        if root is None:
            return
        self._writer.submit(ComponentRemoval(root, component.kind.value, component.key, time.time()))
        if component.kind is ComponentKind.SKILL:
            self._manifests.pop((root, component.key), None)
        elif component.kind is ComponentKind.SKILL_FILE:
            self._record_skills_holding(component, root)

    # ------------------------------------------------------------ public
    @property
    def dropped(self) -> int:
        """Versions not recorded because the queue was full (the database stayed busy) or history was off."""
        return self._writer.dropped

    def store_for(self, path: Path) -> HistoryStore | None:
        """The store of the watched folder holding ``path`` (None outside every folder, or history off).

        Raises:
            HistoryError: The store cannot be opened.
        """
        root = self._root_of(Path(path))
        if root is None:
            return None
        return self._writer.store(root)

    def check_state_dir(self) -> None:
        """Make sure each folder's history has a directory to live in (the database opens in the background).

        Raises:
            HistoryError: The state directory cannot be made (a file in its place, no permission).
        """
        for root in tuple(getattr(self._loader, "paths", ())):
            path = database_path(root, self.state_dir)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HistoryError(f"cannot open the tool history {path} for {root}: {exc}") from exc

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every version announced so far is written; False on timeout.

        A version is announced to the recorder just after it goes live, so a caller that has
        just seen a new version answer may flush before it is announced.
        """
        return self._writer.flush(timeout)

    def record_serving(self) -> None:
        """Record every tool and component the loader serves now: for a recorder registered after the
        first scan."""
        loader = self._loader
        if loader is None:
            return
        for status in loader.status(include_removed=False):
            for name in status.tools:
                tool = loader.registry.get(name)
                if tool is not None:
                    self._record(tool, status.path)
        for component in loader.registry.snapshot().components():
            if component.source_file is not None:
                self._record_component(component, Path(component.source_file))

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (for up to ``timeout`` seconds), then close every store opened so far."""
        self._writer.close(timeout)

    # ------------------------------------------------------------ internals
    def _root_of(self, path: Path) -> Path | None:
        roots: tuple[Path, ...] = tuple(getattr(self._loader, "paths", ()))
        inside = [root for root in roots if path == root or root in path.parents]
        return max(inside, key=lambda root: len(root.parts)) if inside else None

    def _record(self, tool: AgentTool, path: Path) -> None:
        root = self._root_of(Path(path))
        if root is None:
            return
        content, digest, note, stale = self._loaded_content(Path(path))
        version = NewVersion(
            tool=tool.tool_name,
            spec=dict(tool.tool_spec),
            file_path=Path(path),
            content=content,
            content_hash=digest,
            went_live_at=time.time(),
            note=note,
            provenance=provenance_of(Path(path), (root,)),
        )
        self._writer.submit(Record(root, version, stale))

    def _record_component(self, component: Component, path: Path) -> None:
        root = self._root_of(path)
        if root is None:
            return
        if component.kind is ComponentKind.SKILL:
            self._record_skill(component, root)
            return
        own = getattr(component, "digest", None)  # a skill file's, as its manifest lists it
        self._submit(root, component, path, None if own is None else str(own), component_facts(component))
        if component.kind is ComponentKind.SKILL_FILE:
            self._record_skills_holding(component, root)

    def _record_skill(self, skill: Component, root: Path) -> None:
        """A version of ``skill`` named by its manifest in the current snapshot (once per manifest digest)."""
        files = self._loader.registry.snapshot().components(ComponentKind.SKILL_FILE)
        manifest = skill_manifest(skill, files)
        digest = manifest_digest(manifest)
        if self._manifests.get((root, skill.key)) == digest or skill.source_file is None:
            return
        self._manifests[(root, skill.key)] = digest
        facts = {**component_facts(skill), "manifest": manifest}
        self._submit(root, skill, Path(skill.source_file), digest, facts)

    def _submit(
        self, root: Path, component: Component, path: Path, digest: str | None, facts: dict[str, Any]
    ) -> None:
        """Queue a version of ``component`` from the file at ``path`` (``digest`` None: its sha256)."""
        content, content_hash, note, stale = self._kept_content(path)
        version = NewComponentVersion(
            kind=component.kind.value,
            key=component.key,
            file_path=path,
            content=content,
            content_hash=content_hash,
            digest=digest if digest is not None else f"sha256:{content_hash}",
            went_live_at=time.time(),
            facts=facts,
            note=note,
        )
        self._writer.submit(Record(root, version, stale))

    def _record_skills_holding(self, file: Component, root: Path) -> None:
        """A skill file changed: each skill that lists it has a new manifest."""
        skills = self._loader.registry.snapshot().components(ComponentKind.SKILL)
        for skill in skills_holding(file, skills):
            self._record_skill(skill, root)

    def _kept_content(self, path: Path) -> tuple[bytes | None, str, str | None, bool]:
        """``_loaded_content``, without the bytes of a file larger than ``CONTENT_KEPT_BYTES``."""
        content, digest, note, stale = self._loaded_content(path)
        if content is not None and len(content) > CONTENT_KEPT_BYTES:
            note = f"{len(content)} bytes: content not kept (over {CONTENT_KEPT_BYTES}), only its sha256"
            content = None
            cached = self._content.get(path)
            if cached is not None:  # nor held in memory for the next component of the file
                self._content[path] = (cached[0], None, digest, note, stale)
        return content, digest, note, stale

    def _loaded_content(self, path: Path) -> tuple[bytes | None, str, str | None, bool]:
        """The bytes the loader loaded for ``path``, their sha256, a note when they are lost,
        and whether the file on disk has moved on since."""
        status = self._loader.file_status(path) if self._loader is not None else None
        expected: str | None = getattr(status, "content_hash", None)
        cached = self._content.get(path)
        if cached is not None and cached[0] == expected and expected is not None:
            return cached[1], cached[2], cached[3], cached[4]
        for stale, candidate in ((False, _read(path)), (True, _compiled_source(path))):
            if candidate is None:
                continue
            digest = hashlib.sha256(candidate).hexdigest()
            if expected is None or digest.startswith(expected):
                self._content[path] = (expected, candidate, digest, None, stale)
                return candidate, digest, None, stale
        logger.warning(
            "path=<%s>, expected=<%s> | loaded bytes not recoverable; recording without content",
            path,
            expected,
        )
        return None, expected or "unknown", NOTE_CONTENT_MISMATCH, True


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _compiled_source(path: Path) -> bytes | None:
    """The source the importer compiled for ``path``, as it left it in ``linecache``."""
    entry = linecache.cache.get(str(path))
    if entry is None or len(entry) != 4 or entry[1] is not None:
        return None
    return "".join(entry[2]).encode("utf-8")
