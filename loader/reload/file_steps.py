"""One batch's work on each file: its record through the state machine, its import, its claims.

``ToolLoader._apply`` plans a batch (``batch.py``) and commits it
(``commit.py``); in between, every file the plan names takes one step here:
a file missing within its grace is held, a refused or unreadable file fails
without running anything, a gone file is removed, and a present file's
content goes through ``FileRecord.plan`` and, when that says so, its import.
The outcome of a step is a change to the file's record and to the names it
claims; nothing here touches the registry, which the commit swaps once for
the whole batch. Scheduler thread only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..components.files import FileComponentError, file_components
from ..components.skills import SkillError
from ..importing.backend import LoadBackend
from ..status import FileStatus, LoadErrorInfo
from ..types import AgentTool, Component
from .batch import BatchPlan
from .config import LoaderConfig
from .events import FileOutcome
from .file_state import FileRecord, SourceRead, Step, stat_signature
from .gate import gate_error
from .imports import ImportOutcome, ImportRunner
from .ownership import NameOwnership
from .sources import data_file_path

__all__ = ["LOAD_FAILED", "FileSteps"]

logger = logging.getLogger("loader.reload.loader")  # where these warnings have always been logged

LOAD_FAILED = "tool_loader_load_failed"
"""Set (True) on the log record of a failed load, for consoles that report the failure themselves."""


class FileSteps:
    """Takes each file of a planned batch one step through its life (scheduler thread)."""

    def __init__(
        self,
        records: dict[Path, FileRecord],
        by_module: dict[str, Path],
        ownership: NameOwnership,
        *,
        backend: LoadBackend,
        imports: ImportRunner,
        status_of: Callable[[Path], FileStatus | None],
        look_again: Callable[[Path, float], None],
        config: LoaderConfig,
    ) -> None:
        self._records = records
        self._by_module = by_module
        self._ownership = ownership
        self._backend = backend
        self._imports = imports
        self._status_of = status_of
        self._look_again = look_again
        self._config = config

    def hold_the_absent(self, plan: BatchPlan) -> None:
        """Files missing (or helpers emptied) within their grace keep serving and are looked at again;
        files back are back."""
        now = time.monotonic()
        for path, wait in (*plan.waiting.items(), *plan.emptied.items()):
            absent = self._records[path]
            absent.absent_since = absent.absent_since or now
            self._look_again(path, wait)
        for path in plan.present:
            if (back := self._records.get(path)) is not None:
                back.absent_since = None

    def settle_problems(self, plan: BatchPlan, outcomes: dict[Path, FileOutcome]) -> None:
        """Links out of the folder and unreadable files fail without running anything."""
        for path, error in plan.refused:
            self.begin(path, outcomes).refuse(error)
            self._ownership.release(path)
        for path, error in plan.unreadable:
            record = self.begin(path, outcomes)
            record.signature = stat_signature(path)
            record.cannot_read(error)

    def begin(self, path: Path, outcomes: dict[Path, FileOutcome]) -> FileRecord:
        """The file's record (a new one if unknown or removed), noting its status before this batch."""
        if path not in outcomes:
            outcomes[path] = FileOutcome(self._status_of(path))
        record = self._records.get(path)
        if record is None or record.is_removed:
            root = self._backend.root_of(path)
            assert root is not None
            record = FileRecord(path=path, root=root, module_name=self._backend.module_name_for(path))
            self._records[path] = record
            self._by_module[record.module_name] = path
        return record

    def carry_over(self, old: Path, new: Path, outcomes: dict[Path, FileOutcome]) -> None:
        """A move: ``new`` serves ``old``'s last good tools and components until its own import settles.

        The bytes are the same (that is how the move was recognised), but they run again under the new
        module name; an import that takes a while (a worker process on a loaded machine) must not leave
        the names without a tool in between.
        """
        before = self._records.get(old)
        record = self.begin(new, outcomes)
        if before is not None and not record.serves_anything:
            record.discovered = dict(before.discovered)
            record.components = dict(before.components)

    def remove(self, path: Path, outcomes: dict[Path, FileOutcome]) -> None:
        """The file is gone for good: REMOVED, its names released, its module forgotten."""
        record = self._records[path]
        outcomes.setdefault(path, FileOutcome(self._status_of(path)))
        self._by_module.pop(record.module_name, None)
        record.remove()
        self._ownership.release(path)
        self._backend.forget([record.module_name])

    def start_imports_ahead(
        self, order: list[Path], plan: BatchPlan, outcomes: dict[Path, FileOutcome]
    ) -> None:
        """A one-off scan: start every import the batch will need now, as one chain on one import thread."""
        wanted = [p for p in order if self._will_import(p, plan) and not self._is_data_file(p)]
        self._imports.start_ahead([(self.begin(p, outcomes), plan.present[p]) for p in wanted])

    def _will_import(self, path: Path, plan: BatchPlan) -> bool:
        """Whether ``load`` will import ``path``'s content in this batch (what its record plans)."""
        read = plan.present[path]
        record = self._records.get(path)
        if read.blank or self._imports.is_in_flight(path, read.digest):
            return False
        if record is None or record.is_removed:
            return True
        grace = self._config.empty_grace
        step = record.plan(read.digest, forced=path in plan.forced, now=time.monotonic(), grace_seconds=grace)
        return step.step is Step.LOAD

    def load(
        self, path: Path, read: SourceRead, forced: bool, outcomes: dict[Path, FileOutcome], *, watching: bool
    ) -> None:
        """Run one file's content through its state machine, importing it when the plan says so."""
        record = self.begin(path, outcomes)
        relative = data_file_path(path, record.root)
        if relative is not None:
            self._load_data(record, relative, read, forced, outcomes[path])
            return
        if forced:
            # A module it imports changed in this batch: an import of these bytes already in flight
            # ran against the old one, and is no answer for this run.
            self._imports.drop(path)
        overtaken = self._imports.supersede(path, read.digest)
        if overtaken is not None:
            # Older bytes finished importing before this batch found newer ones: they go live
            # first (their module is the current one), and the bytes on disk are planned after.
            self._settle(record, overtaken.digest, overtaken.outcome, outcomes[path])
        record.saw_write(read.digest, read.signature, time.monotonic())
        record.signature = read.signature
        if not self._imports.is_in_flight(path, read.digest) and self._settled_without_import(
            record, read, forced, outcomes[path]
        ):
            return
        record.saw_content(read.digest)
        result = self._imports.run(record, read, watching=watching)
        if result is None:
            return  # still importing: the file is looked at again when it ends or its deadline passes
        self._settle(record, read.digest, result, outcomes[path])

    def _is_data_file(self, path: Path) -> bool:
        root = self._backend.root_of(path)
        return root is not None and data_file_path(path, root) is not None

    def _load_data(
        self,
        record: FileRecord,
        relative: PurePosixPath,
        read: SourceRead,
        forced: bool,
        outcome: FileOutcome,
    ) -> None:
        """A prompt, resource or skill file: read by the loader itself (no import, no code), in one commit."""
        record.saw_write(read.digest, read.signature, time.monotonic())
        record.signature = read.signature
        if self._settled_without_import(record, read, forced, outcome):
            return
        record.saw_content(read.digest)
        limit = self._config.max_result_bytes
        try:
            if limit and len(read.data) > limit:  # what a read would answer: refused now, named
                raise FileComponentError(
                    f"{len(read.data):,} bytes, over the {limit:,} bytes a result may be (max_result_bytes)"
                )
            components = file_components(relative, read.data, str(record.path))
        except (FileComponentError, SkillError) as exc:
            record.attempted(read.digest, 0.0)
            record.fail(LoadErrorInfo(type(exc).__name__, str(exc), str(record.path), exc.line))
            logger.warning(
                "path=<%s> | load failed: %s", record.path, record.error.one_line() if record.error else exc
            )
            return
        self._loaded(record, read.digest, {}, 0.0, outcome, components)

    def _settle(self, record: FileRecord, digest: str, result: ImportOutcome, outcome: FileOutcome) -> None:
        """Take a finished import of ``digest`` into the record: its tools, or why there are none."""
        if result.error is None and self._config.gate:
            result = replace(
                result, error=gate_error(result.tools.values(), self._config.example_timeout, record.path)
            )
        if record.note_rewrite(result.rewrote_itself, time.monotonic()):
            logger.warning(
                "path=<%s>, rewrites=<%d> | the file rewrites itself when imported: reloads slowed down",
                record.path,
                record.rewrites,
            )
        if result.error is not None:
            record.attempted(digest, result.seconds)
            outcome.duration = result.seconds
            record.fail(result.error)
            logger.warning(
                "path=<%s> | load failed: %s", record.path, result.error.one_line(), extra={LOAD_FAILED: True}
            )
            return
        self._loaded(record, digest, result.tools, result.seconds, outcome, result.components)

    def _settled_without_import(
        self, record: FileRecord, read: SourceRead, forced: bool, outcome: FileOutcome
    ) -> bool:
        """Take the record's planned step when it needs no import; False when the content must run."""
        plan = record.plan(
            read.digest, forced=forced, now=time.monotonic(), grace_seconds=self._config.empty_grace
        )
        if plan.step is Step.SKIP:
            return True
        if plan.step is Step.KEEP_SERVING:
            record.end_grace()
            return True
        if plan.step is Step.WAIT:
            self._look_again(record.path, plan.wait)
            return True
        if plan.step is Step.DROP_TOOLS:
            self._accept(record, {}, read.digest, {})
            return True
        if read.blank:
            self._loaded(record, read.digest, {}, 0.0, outcome, {})
            return True
        return False

    def _loaded(
        self,
        record: FileRecord,
        digest: str,
        tools: dict[str, AgentTool],
        seconds: float,
        outcome: FileOutcome,
        components: dict[str, Component],
    ) -> None:
        if not tools and not components and record.serves_anything:
            # Editors truncate before they write: keep the last tools for a grace period, and the
            # status that describes them (an empty moment is no update anyone should hear of).
            record.attempted(digest, record.load_seconds)
            record.start_grace(digest, time.monotonic())
            self._look_again(record.path, self._config.empty_grace)
        else:
            record.attempted(digest, seconds)
            outcome.duration = seconds
            self._accept(record, tools, digest, components)

    def _accept(
        self,
        record: FileRecord,
        tools: dict[str, AgentTool],
        content_hash: str,
        components: dict[str, Component],
    ) -> None:
        record.accept(tools, content_hash, time.time(), components)
        self._ownership.claim(record.path, [*tools, *components])
