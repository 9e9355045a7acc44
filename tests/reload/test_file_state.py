"""The per-file state machine, transition by transition (no loader, no disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader.reload.file_state import BACK_OFF_CAP, BACK_OFF_FIRST, FileRecord, Phase, Plan, SourceRead, Step
from loader.status import LoadErrorInfo, LoadErrorKind
from loader.tools.decorator import tool
from loader.types import AgentTool

GRACE = 0.5


@tool
def sample(x: int) -> int:
    """Return x."""
    return x


def tools() -> dict[str, AgentTool]:
    return {"sample": sample}


def record() -> FileRecord:
    return FileRecord(path=Path("/t/a.py"), root=Path("/t"), module_name="m_a")


def error(kind: LoadErrorKind = LoadErrorKind.EXCEPTION) -> LoadErrorInfo:
    return LoadErrorInfo("RuntimeError", "boom", "/t/a.py", 3, kind=kind)


def plan(r: FileRecord, digest: str, *, forced: bool = False, now: float = 100.0) -> Plan:
    return r.plan(digest, forced=forced, now=now, grace_seconds=GRACE)


def test_a_new_file_loads() -> None:
    assert plan(record(), "h1").step is Step.LOAD


def test_accept_serves_the_tools_and_the_same_content_is_skipped() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    assert r.phase is Phase.LOADED and r.discovered == tools() and r.content_hash == "h1"
    assert plan(r, "h1").step is Step.SKIP
    assert plan(r, "h2").step is Step.LOAD


def test_forced_reload_runs_even_unchanged_content() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    assert plan(r, "h1", forced=True).step is Step.LOAD


def test_failure_keeps_the_last_good_tools_and_is_not_retried_for_the_same_content() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.attempted("h2", 0.01)
    r.fail(error())
    assert r.phase is Phase.FAILED and r.discovered == tools() and r.content_hash == "h1"
    assert plan(r, "h2").step is Step.SKIP
    assert plan(r, "h3").step is Step.LOAD
    assert plan(r, "h1").step is Step.LOAD  # back to the good text: load it to recover


def test_a_timeout_makes_the_file_stuck() -> None:
    r = record()
    r.fail(error(LoadErrorKind.IMPORT_TIMEOUT))
    assert r.phase is Phase.STUCK


def test_empty_grace_waits_then_drops_the_tools() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=100.0)
    waiting = plan(r, "empty", now=100.2)
    assert waiting.step is Step.WAIT and waiting.wait == pytest.approx(0.3)
    assert r.discovered == tools()
    assert plan(r, "empty", now=100.6).step is Step.DROP_TOOLS


def test_grace_started_again_for_the_same_content_keeps_its_start() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=100.0)
    r.start_grace("empty", now=100.4)
    assert r.grace is not None and r.grace.since == 100.0
    r.start_grace("other", now=100.4)
    assert r.grace.since == 100.4


def test_content_back_during_the_grace_keeps_serving() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=100.0)
    assert plan(r, "h1").step is Step.KEEP_SERVING
    r.end_grace()
    assert r.grace is None and plan(r, "h1").step is Step.SKIP


def test_new_content_during_the_grace_loads() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=100.0)
    assert plan(r, "h9").step is Step.LOAD


def test_content_seen_between_two_empty_reads_ends_the_first_grace() -> None:
    """Emptied, refilled (still importing), emptied again: the second grace starts anew."""
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=100.0)
    r.saw_content("h9")  # the new content is importing; it has not been accepted yet
    assert r.grace is None
    assert plan(r, "empty", now=105.0).step is Step.LOAD  # not DROP_TOOLS on the stale start
    r.start_grace("empty", now=105.0)
    r.saw_content("empty")  # the grace's own content does not end it
    assert r.grace is not None and r.grace.since == 105.0


def test_absent_wait_counts_from_the_first_batch_that_found_the_file_missing() -> None:
    r = record()
    assert r.absent_wait(now=100.0, grace_seconds=0.5) == 0.5  # first seen missing: wait the whole grace
    r.absent_since = 100.0
    assert r.absent_wait(now=100.2, grace_seconds=0.5) == pytest.approx(0.3)
    assert r.absent_wait(now=100.5, grace_seconds=0.5) is None
    fresh = record()
    assert fresh.absent_wait(now=1.0, grace_seconds=0.0) is None  # no grace: removed at once
    r.remove()
    assert r.absent_since is None


def test_a_dependent_reload_of_an_empty_file_gets_the_grace_too() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=100.0)
    assert plan(r, "empty", forced=True, now=100.1).step is Step.WAIT


def test_refuse_drops_everything() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.refuse(error(LoadErrorKind.LINK_REFUSED))
    assert r.phase is Phase.FAILED and r.discovered == {} and r.error is not None


def test_remove_clears_tools_error_and_grace() -> None:
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.start_grace("empty", now=1.0)
    r.fail(error())
    r.remove()
    assert r.is_removed and r.discovered == {} and r.error is None and r.grace is None


def test_imports_that_keep_rewriting_the_file_hold_the_next_one_back_ever_longer_up_to_a_cap() -> None:
    r = record()
    r.accept(tools(), "h1", 0.0)
    assert r.note_rewrite(True, 100.0) is False  # once may be a user's save during the import
    assert plan(r, "h2").step is Step.LOAD and not r.rewrites_itself
    waits = []
    for _ in range(8):
        assert r.note_rewrite(True, 100.0) is True
        waits.append(plan(r, "h2").wait)
    assert waits == [BACK_OFF_FIRST * 2**i for i in range(6)] + [BACK_OFF_CAP] * 2
    assert r.rewrites_itself
    assert plan(r, "h2", now=100.0 + BACK_OFF_CAP).step is Step.LOAD  # the hold is over
    assert plan(r, "h1").step is Step.SKIP  # only imports are held back
    r.note_rewrite(False, 100.0)  # an import that left the file alone ends the back-off
    assert not r.rewrites_itself and plan(r, "h2").step is Step.LOAD


def test_an_empty_file_written_again_restarts_the_grace() -> None:
    """Truncated and written many times, caught empty by the batch that ends the grace: its stat changed,
    so it held content in between that no batch saw, and the grace starts over instead of dropping."""
    r = record()
    r.accept(tools(), "h1", 1.0)
    r.signature = (1, 0, 1_000)
    r.start_grace("empty", now=100.0)
    r.saw_write("empty", (1, 0, 1_000), now=100.6)  # the same empty file: the grace keeps its start
    assert plan(r, "empty", now=100.6).step is Step.DROP_TOOLS
    r.saw_write("empty", (1, 0, 2_000), now=100.6)  # empty again, but written since
    waiting = plan(r, "empty", now=100.6)
    assert waiting.step is Step.WAIT and waiting.wait == pytest.approx(GRACE)
    assert plan(r, "empty", now=101.2).step is Step.DROP_TOOLS


def test_a_read_is_blank_when_it_holds_only_whitespace_as_strip_would_say() -> None:
    for data in (b"", b"\n", b" \t\r\n\x0b\x0c", b"x", b"\n# a comment\n", b"\xc2\xa0"):
        read = SourceRead(data, None, "digest")
        assert read.blank is (not data.strip()), data
