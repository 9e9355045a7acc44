"""Per-tool lanes: bounded threads, calls in arrival order, lanes that go away with their tool."""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from support import eventually

from loader.calls import lanes
from loader.calls.lanes import CallAbandoned, CallLane, LaneMap

WAIT = 20.0


def test_a_lane_never_runs_more_than_its_workers_and_runs_every_call() -> None:
    lane = CallLane("t", 3, idle_seconds=0.2)
    gate = threading.Event()
    running = 0
    peak = 0
    lock = threading.Lock()

    def job() -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        gate.wait(WAIT)
        with lock:
            running -= 1
        return 1

    futures = [lane.submit(job) for _ in range(10)]
    eventually(lambda: running == 3, WAIT)
    assert lane.threads == 3
    gate.set()
    assert sum(f.result(WAIT) for f in futures) == 10
    assert peak == 3
    eventually(lambda: lane.threads == 0, WAIT)  # idle threads end


def test_a_call_cancelled_before_it_starts_never_runs() -> None:
    lane = CallLane("t", 1)
    gate = threading.Event()
    ran: list[str] = []
    first = lane.submit(lambda: gate.wait(WAIT))
    second = lane.submit(lambda: ran.append("second"))
    assert second.cancel()
    gate.set()
    first.result(WAIT)
    lane.submit(lambda: None).result(WAIT)
    assert ran == []


@dataclass(eq=True)
class Unhashable:
    name: str


def test_lanes_follow_tool_identity_even_for_unhashable_tools_and_go_with_them() -> None:
    lanes = LaneMap(2)
    a, b = Unhashable("x"), Unhashable("x")
    assert lanes.lane_for(a, "x") is lanes.lane_for(a, "x")
    assert lanes.lane_for(a, "x") is not lanes.lane_for(b, "x")
    assert len(lanes) == 2
    del a, b
    gc.collect()
    assert len(lanes) == 0


class _SpyCondition:
    """Stands in for a lane's condition: notes every thread that asks to enter it, then behaves as it."""

    def __init__(self, cond: threading.Condition) -> None:
        self._cond = cond
        self.asked: list[int] = []

    def __enter__(self) -> bool:
        self.asked.append(threading.get_ident())
        return self._cond.__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        self._cond.__exit__(*exc_info)

    def wait(self, timeout: float | None = None) -> bool:
        return self._cond.wait(timeout)

    def notify(self, n: int = 1) -> None:
        self._cond.notify(n)


def test_a_second_stop_of_the_same_call_provably_waits_and_sends_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deterministic: the first stopper is held inside the lane's lock until the second has asked for it."""
    lane = CallLane("t", 1)
    started, finish = threading.Event(), threading.Event()

    def call() -> None:
        started.set()
        finish.wait(WAIT)  # blocked in C: the stop lands once it returns

    future = lane.submit(call)
    assert started.wait(WAIT)
    eventually(lambda: lane._running.get(future) is not None, WAIT)
    spy = _SpyCondition(lane._cond)
    lane._cond = spy  # type: ignore[assignment]
    sent: list[type[BaseException] | None] = []
    inside, release = threading.Event(), threading.Event()
    real_raise_in = lanes._raise_in

    def held_raise_in(thread_id: int, exc_type: type[BaseException] | None) -> None:
        sent.append(exc_type)
        if exc_type is CallAbandoned and sent.count(CallAbandoned) == 1:
            inside.set()
            release.wait(WAIT)  # inside stop()'s critical section
        real_raise_in(thread_id, exc_type)

    monkeypatch.setattr(lanes, "_raise_in", held_raise_in)
    answers: dict[str, bool] = {}
    first = threading.Thread(target=lambda: answers.__setitem__("first", lane.stop(future)))
    first.start()
    assert inside.wait(WAIT)
    second = threading.Thread(target=lambda: answers.__setitem__("second", lane.stop(future)))
    second.start()
    eventually(lambda: second.ident in spy.asked or "second" in answers, WAIT)
    assert "second" not in answers, "the second stop went ahead while the first was sending"
    release.set()
    first.join(WAIT)
    second.join(WAIT)
    assert answers == {"first": True, "second": False}
    assert sent.count(CallAbandoned) == 1
    finish.set()
    eventually(future.done, WAIT)
