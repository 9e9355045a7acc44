"""Imports on a bounded pool of threads, with deadlines."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support import eventually

from loader.importing.threads import ImportAbandoned, ImportPool, ImportTimeout


def _spinner(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    source = tmp_path / "spin.py"
    source.write_text("def spin(stop):\n    while not stop.is_set():\n        pass\n")
    namespace: dict[str, object] = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    return source, namespace


def test_results_and_exceptions_come_back_and_threads_are_reused() -> None:
    pool = ImportPool()
    try:
        assert pool.run(lambda: 41 + 1, 5) == 42
        with pytest.raises(ZeroDivisionError):
            pool.run(lambda: 1 / 0, 5)
        names = {pool.run(lambda: threading.current_thread().name, 5) for _ in range(5)}
        assert len(names) == 1 and pool.thread_count == 1
    finally:
        pool.close()


def test_an_overrunning_job_is_reported_where_it_is_and_interrupted(tmp_path: Path) -> None:
    source, namespace = _spinner(tmp_path)
    never = threading.Event()
    finished = threading.Event()

    def job() -> None:
        try:
            namespace["spin"](never)  # type: ignore[operator]
        finally:
            finished.set()

    pool = ImportPool()
    try:
        with pytest.raises(ImportTimeout) as caught:
            pool.run(job, 0.3, watch_file=source)
        assert caught.value.line in (2, 3)
        assert "spin.py" in caught.value.stack
        assert finished.wait(10), "the abandoned thread was not interrupted"
        assert pool.run(lambda: "still serving", 5) == "still serving"
    finally:
        pool.close()


def test_a_stuck_job_does_not_hold_up_others_and_threads_stay_bounded(tmp_path: Path) -> None:
    source, namespace = _spinner(tmp_path)
    release = threading.Event()
    pool = ImportPool(max_threads=3)
    try:
        stuck = [pool.submit(lambda: namespace["spin"](release), watch_file=source) for _ in range(2)]  # type: ignore[operator]
        assert pool.run(lambda: "quick", 10) == "quick"  # a third thread answers while two are stuck
        more = [pool.submit(lambda: namespace["spin"](release), watch_file=source) for _ in range(20)]  # type: ignore[operator]
        assert pool.thread_count <= 3
        release.set()
        for job in stuck + more:
            assert job.wait(15)
        eventually(lambda: pool.run(lambda: "after", 10) == "after")
        assert pool.thread_count <= 3
    finally:
        release.set()
        pool.close()


def test_abandoning_a_queued_job_finishes_it_without_running_it(tmp_path: Path) -> None:
    source, namespace = _spinner(tmp_path)
    release = threading.Event()
    pool = ImportPool(max_threads=1)
    try:
        pool.submit(lambda: namespace["spin"](release), watch_file=source)  # type: ignore[operator]
        ran = threading.Event()
        queued = pool.submit(ran.set)
        pool.abandon(queued)
        assert queued.done and not ran.is_set()
        with pytest.raises(ImportAbandoned):
            queued.outcome()
    finally:
        release.set()
        pool.close()


def test_on_done_runs_when_the_job_ends() -> None:
    pool = ImportPool()
    try:
        called = threading.Event()
        job = pool.submit(lambda: 7)
        job.on_done(called.set)
        assert called.wait(10) and job.outcome() == 7
        late = threading.Event()
        job.on_done(late.set)
        assert late.is_set()
    finally:
        pool.close()


def test_a_chain_runs_in_order_on_one_thread_and_survives_an_interrupted_member(tmp_path: Path) -> None:
    source, namespace = _spinner(tmp_path)
    spin = namespace["spin"]
    never = threading.Event()
    ran: list[tuple[str, str]] = []

    def step(name: str) -> str:
        ran.append((name, threading.current_thread().name))
        return name

    pool = ImportPool()
    try:
        jobs = pool.submit_chain(
            [
                (lambda: step("a"), None),
                (lambda: spin(never), source),  # type: ignore[operator]
                (lambda: step("skipped"), None),
                (lambda: step("c"), None),
            ]
        )
        assert jobs[0].wait(5) and jobs[0].outcome() == "a"
        pool.abandon(jobs[2])  # not started yet: skipped, and ended at once
        assert jobs[2].done
        with pytest.raises(ImportAbandoned):
            jobs[2].outcome()
        eventually(lambda: jobs[1].thread is not None, message="the spinning member runs")
        pool.abandon(jobs[1])  # running: interrupted; the rest of the chain goes on elsewhere
        assert jobs[3].wait(5) and jobs[3].outcome() == "c"
        assert [name for name, _ in ran] == ["a", "c"]
        assert ran[0][1] != ran[1][1], "the interrupted thread is not reused"
        assert pool.thread_count <= 2
    finally:
        pool.close()


def test_a_job_queued_behind_abandoned_jobs_runs_once_their_thread_lets_go() -> None:
    # A blocking call ends only when it returns; the stop lands then, and that thread is never
    # reused: a job that queued meanwhile must get a thread of its own without another submit.
    release = threading.Event()
    pool = ImportPool(max_threads=1)
    try:
        blocked = pool.submit(lambda: release.wait(30))
        eventually(lambda: blocked.started is not None)
        pool.abandon(blocked)
        queued = pool.submit(lambda: "ran")
        assert not queued.wait(0.2) and queued.started is None
        release.set()
        assert queued.wait(30), "the queued job never got a thread"
        assert queued.outcome() == "ran"
        assert pool.thread_count <= 1
    finally:
        release.set()
        pool.close()
