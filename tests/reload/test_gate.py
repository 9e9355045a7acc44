"""Tests for loader/reload/gate.py and tool examples: a save whose examples fail never goes live."""

from __future__ import annotations

import asyncio
import gc
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import warm_cli
from support import FAST, LineReader, cli_env, eventually, run_cli, write

from loader import FileState, LoaderEvent, LoaderEventKind, ToolDefinitionError, ToolLoader, tool
from loader.history.store import HistoryStore
from loader.reload.gate import (
    EXAMPLE_FAILED,
    FailureKind,
    match_output,
    result_output,
    run_example,
    run_examples,
)
from loader.types import ToolExample

GATED = replace(FAST, gate=True, example_timeout=5.0)


# ------------------------------------------------------------------ matching
@pytest.mark.parametrize(
    ("expected", "actual", "difference"),
    [
        (3, 3, None),
        ("hi", "hi", None),
        (3, "3", None),  # a text result read as JSON
        ({"a": 1}, {"a": 1, "b": 2}, None),  # subset
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}, None),
        ([1, 2], [1, 2], None),
        (3, 4, "expected 3, got 4"),
        ("hi", "ho", 'expected "hi", got "ho"'),
        (1, True, "expected 1, got true"),
        ({"a": 1}, {"b": 1}, "missing key 'a'"),
        ({"a": {"b": 1}}, {"a": {"b": 2}}, "expected 1 at a.b, got 2"),
        ({"a": 1}, [1], "expected an object, got [1]"),
        ([1, 2], [2, 1], "expected [1, 2], got [2, 1]"),
        (3, "three", 'expected 3, got "three"'),
    ],
)
def test_match_output(expected: Any, actual: Any, difference: str | None) -> None:
    assert match_output(expected, actual) == difference


def test_result_output() -> None:
    assert result_output({"toolUseId": "x", "status": "success", "content": [{"json": {"a": 1}}]}) == {"a": 1}
    assert result_output({"toolUseId": "x", "status": "success", "content": [{"text": "t"}]}) == "t"
    assert result_output(
        {"toolUseId": "x", "status": "success", "content": [{"text": "t"}, {"json": 1}]}
    ) == [
        "t",
        1,
    ]


# ------------------------------------------------------------------ declaring examples
@tool(
    examples=[
        {"description": "adds", "params": {"a": 1, "b": 2}, "expected_output": 3},
        {"params": {"a": 0, "b": 0}},
    ]
)
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_function_tool_examples_are_parsed() -> None:
    assert add.examples == (ToolExample({"a": 1, "b": 2}, "adds", 3), ToolExample({"a": 0, "b": 0}))
    assert add.examples[0].has_expected_output
    assert not add.examples[1].has_expected_output
    assert run_examples([add], timeout=5) is None


@pytest.mark.parametrize(
    ("examples", "message"),
    [
        ("x", "examples must be a list of dicts, got str"),
        ([1], "example 0 must be a dict, got int"),
        ([{"expected_output": 1}], "example 0 needs 'params'"),
        ([{"params": {}, "output": 1}], "example 0 has unknown keys output"),
    ],
)
def test_bad_function_examples_name_the_tool(examples: Any, message: str) -> None:
    def one() -> int:
        """One."""
        return 1

    with pytest.raises(ToolDefinitionError, match=message) as caught:
        tool(examples=examples)(one)
    assert "@tool function one (tool 'one')" in str(caught.value)


def test_class_tool_examples_accept_both_spellings() -> None:
    @tool(
        parameters={"x": {"type": "integer", "description": "The number."}},
        examples=[
            {"description": "camel", "params": {"x": 2}, "expectedOutput": {"double": 4}},
            {"description": "snake", "input": {"x": 3}, "expected_output": {"double": 6}},
            {"description": "documentation only"},
        ],
    )
    class Doubler:
        """Double."""

        def execute(self, params: dict[str, Any]) -> dict[str, Any]:
            return {"double": params["x"] * 2, "x": params["x"]}

    from loader import ClassTool

    doubler = ClassTool(Doubler())
    assert [e.description for e in doubler.examples] == ["camel", "snake"]
    assert run_examples([doubler], timeout=5) is None


# ------------------------------------------------------------------ running examples
def test_failures_say_what_differs() -> None:
    @tool(examples=[{"description": "sum", "params": {"a": 1, "b": 2}, "expected_output": 3}])
    def wrong(a: int, b: int) -> int:
        """Wrong."""
        return a + b + 1

    failure = run_examples([wrong], timeout=5)
    assert failure is not None and failure.kind is FailureKind.MISMATCH
    assert failure.message() == 'wrong example 0 (\'sum\') with {"a": 1, "b": 2}: expected 3, got 4'
    assert failure.actual == 4


def test_error_result_and_exception_fail() -> None:
    @tool(examples=[{"params": {}}])
    def broken() -> int:
        """Broken."""
        raise ValueError("nope")

    failure = run_examples([broken], timeout=5)
    assert failure is not None and failure.kind is FailureKind.ERROR
    assert "ValueError - nope" in failure.difference

    @tool(raise_errors=True, examples=[{"params": {}}])
    def raising() -> int:
        """Raises."""
        raise KeyError("k")

    failure = run_examples([raising], timeout=5)
    assert failure is not None and failure.kind is FailureKind.EXCEPTION
    assert failure.difference == "raised KeyError: 'k'"

    @tool(examples=[{"params": {"a": "not a number"}, "expected_output": 1}])
    def typed(a: int) -> int:
        """Typed."""
        return a

    failure = run_examples([typed], timeout=5)
    assert failure is not None and failure.kind is FailureKind.ERROR


def test_a_stuck_example_times_out() -> None:
    release = threading.Event()

    @tool(examples=[{"params": {}}])
    def stuck() -> str:
        """Stuck."""
        release.wait(60)
        return "late"

    try:
        failure = run_example(stuck, stuck.examples[0], 0, timeout=0.2)
        assert failure is not None and failure.kind is FailureKind.TIMEOUT
        assert failure.difference == "no result within 0.2 s"
    finally:
        release.set()


# ------------------------------------------------------------------ the loader's gate
def _calc(version: int, broken: bool = False) -> str:
    extra = " + 1" if broken else ""
    return (
        "from loader import tool\n\n"
        '@tool(examples=[{"description": "sum", "params": {"a": 1, "b": 2}, "expected_output": {"sum": 3}}])\n'
        "def calc(a: int, b: int) -> dict:\n"
        '    """Add."""\n'
        f'    return {{"version": {version}, "sum": a + b{extra}}}\n'
    )


def _version(loader: ToolLoader) -> int | None:
    result = loader.registry.invoke("calc", {"a": 1, "b": 2})
    if result["status"] != "success":
        return None
    value = result["content"][0].get("json")
    return int(value["version"]) if isinstance(value, dict) else None


def _last_event(events: list[LoaderEvent], kind: LoaderEventKind) -> LoaderEvent | None:
    """The last event heard, if it is of ``kind``."""
    return events[-1] if events and events[-1].kind is kind else None


def test_rejected_save_keeps_the_last_good_version(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    path = write(tools_dir / "calc.py", _calc(1))
    loader = make_loader(tools_dir, config=GATED)
    events: list[LoaderEvent] = []
    loader.subscribe(events.append)
    assert _version(loader) == 1

    write(path, _calc(2, broken=True))
    # The status and the registry change before listeners hear of it: wait for the event itself.
    rejected = eventually(lambda: _last_event(events, LoaderEventKind.REJECTED))
    assert rejected.path == path
    status = loader.file_status(path)
    assert status is not None and status.state is FileState.REJECTED and status.error is not None
    assert status.error.exc_type == EXAMPLE_FAILED
    assert status.error.message == (
        'calc example 0 (\'sum\') with {"a": 1, "b": 2}: expected 3 at sum, got 4'
    )
    assert status.error.line == 3  # the decorated function
    assert status.tools == ("calc",)  # still serving
    assert _version(loader) == 1

    write(path, _calc(3))
    recovered = eventually(lambda: _last_event(events, LoaderEventKind.RECOVERED))
    assert recovered.path == path and recovered.tools == ("calc",)
    assert _version(loader) == 3
    status = loader.file_status(path)
    assert status is not None and status.state is FileState.LOADED


def test_without_the_gate_examples_do_not_run(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "calc.py", _calc(1, broken=True))
    loader = make_loader(tools_dir)
    assert _version(loader) == 1


def test_rejected_at_the_first_scan_serves_nothing(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    path = write(tools_dir / "calc.py", _calc(1, broken=True))
    loader = make_loader(tools_dir, config=GATED, watch=False)
    assert "calc" not in loader.registry
    status = loader.file_status(path)
    assert status is not None and status.state is FileState.REJECTED


def test_randomized_saves_never_serve_a_failing_version(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    rng = random.Random(13)
    path = write(tools_dir / "calc.py", _calc(0))
    loader = make_loader(tools_dir, config=GATED)
    committed: list[int] = []

    def on_commit(change_set: Any) -> None:
        for change in change_set.changes:
            if change.tool is not None and change.name == "calc":
                result = change.tool.invoke({"a": 1, "b": 2})
                committed.append(int(result["content"][0]["json"]["version"]))

    loader.registry.subscribe(on_commit)
    seen: set[int] = set()
    stop = threading.Event()

    def poll() -> None:  # an agent calling the tool the whole time
        while not stop.is_set():
            version = _version(loader)
            if version is not None:
                seen.add(version)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    failing: set[int] = set()
    passing: list[int] = [0]
    try:
        for version in range(1, 101):
            broken = rng.random() < 0.3
            write(path, _calc(version, broken=broken))
            assert loader.wait_idle(30), f"save {version} not applied"
            if broken:
                failing.add(version)
                status = loader.file_status(path)
                assert status is not None and status.state is FileState.REJECTED, version
                assert _version(loader) == passing[-1]
            else:
                passing.append(version)
                assert _version(loader) == version
    finally:
        stop.set()
        poller.join(30)
    assert 10 < len(failing) < 50
    assert not (seen & failing)
    assert not (set(committed) & failing)
    assert set(passing[1:]) <= set(committed)


# ------------------------------------------------------------------ the commands
def test_check_examples_reports_failures(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "calc.py", _calc(1, broken=True))
    result = run_cli("check", "tools", "--examples", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "example-mismatch" in result.stdout
    assert "expected 3 at sum, got 4" in result.stdout
    plain = run_cli("check", "tools", cwd=tmp_path)
    assert "example-mismatch" not in plain.stdout

    write(tmp_path / "tools" / "calc.py", _calc(2))
    passing = run_cli("check", "tools", "--examples", cwd=tmp_path)
    assert "example-" not in passing.stdout


def test_watch_gate_rejects_and_history_keeps_only_live_versions(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = write(tmp_path / "tools" / "calc.py", _calc(1))
    process = subprocess.Popen(
        warm_cli.command(["watch", "tools", "--gate", "--state-dir", str(state)], cli_env()),
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out = LineReader(process.stdout)
        out.wait_for(r"^watching tools")
        write(path, _calc(2, broken=True))
        out.wait_for(
            r"rejected tools/calc\.py:3 \(still serving calc\) ExampleFailed: calc example 0 \('sum'\) "
            r'with \{"a": 1, "b": 2\}: expected 3 at sum, got 4'
        )
        write(path, _calc(3))
        out.wait_for(r"recovered tools/calc\.py calc")
        process.send_signal(signal.SIGINT)
        out.wait_for(r"^stopped watching$")
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    with HistoryStore(tmp_path / "tools", state) as store:
        contents = [v.content for v in store.versions("calc")]
    assert contents == [path.read_bytes(), _calc(1).encode()]  # the rejected save never went live


def test_sample_tools_examples_pass(tmp_path: Path) -> None:
    samples = Path(__file__).resolve().parents[2] / "sample_tools"
    result = run_cli("check", str(samples), "--examples", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no problems found" in result.stdout


SPINNING = """
from loader import tool

@tool(examples=[{{"description": "spins", "params": {{"n": {n}}}}}])
def spin(n: int) -> str:
    \"\"\"Spin forever (a bug of version {n}).\"\"\"
    while True:
        pass
"""


def _spinning() -> list[int]:
    """The threads running the body of ``spin`` right now, whatever they are called."""
    return [ident for ident, frame in sys._current_frames().items() if frame.f_code.co_name == "spin"]


def test_an_overrunning_example_is_stopped_not_left_spinning(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """Each rejected save used to leave its example spinning for good (a core each, and the GIL)."""
    path = write(tools_dir / "calc.py", _calc(1))
    loader = make_loader(tools_dir, config=replace(GATED, example_timeout=0.5))
    events: list[LoaderEvent] = []
    loader.subscribe(events.append)
    for n in range(3):
        write(path, _calc(1) + SPINNING.format(n=n))
        rejected = eventually(lambda: _last_event(events, LoaderEventKind.REJECTED))
        assert rejected.error is not None and "no result within 0.5 s" in rejected.error.message
        events.clear()
    eventually(lambda: not _spinning(), message="an example that overran is still running")
    assert _version(loader) == 1


def test_an_async_example_past_its_timeout_ends_on_its_own_loop_and_leaves_no_loop_half_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An async tool's example is cancelled by its own timeout, on the lane thread's loop; the lane is
    not also stopped from outside, which could land in that loop's teardown and leave it half closed
    (``ValueError: Invalid file descriptor: -1`` from ``BaseEventLoop.__del__`` once collected)."""

    @tool(examples=[{"description": "never answers", "params": {}, "expected_output": "x"}])
    async def sleeper() -> str:
        """Sleep past any example timeout."""
        await asyncio.sleep(60)
        return "x"

    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(repr(u.exc_value)))
    (example,) = sleeper.examples
    for attempt in range(300):  # timeouts of a few ms: the two clocks end close together
        failure = run_example(sleeper, example, 0, 0.002 + (attempt % 7) * 0.001)
        assert failure is not None and failure.kind is FailureKind.TIMEOUT
    gc.collect()
    assert unraisable == []
