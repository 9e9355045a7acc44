"""Per-tool lanes: bounded threads, calls in arrival order, lanes that go away with their tool."""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass

from support import eventually

from loader.calls.lanes import CallLane, LaneMap

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
