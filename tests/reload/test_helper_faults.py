"""A helper whose new version fails or gets stuck never serves half-executed code to its dependents.

Real files, real watcher: the tools that import the helper keep running
against its last good module, and their status names the failing helper.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from support import FAST, call_text, eventually, write

from loader.reload.loader import ToolLoader
from loader.status import FileState

HELPER_V1 = """
VALUE = 1

def extra():
    return "x"
"""

TOOL = '''
import helper
from loader import tool

@tool
def value() -> str:
    """The helper's value."""
    return f"{helper.VALUE}-{helper.extra()}"
'''

# Saved while the tool runs: the new VALUE is set, then the import never finishes
# (an Event wait, which the loader's asynchronous stop cannot interrupt), so extra()
# would be missing from a half-executed module.
HELPER_STUCK = """
import threading

VALUE = 2
threading.Event().wait(60)

def extra():
    return "y"
"""

HELPER_BROKEN = """
VALUE = 3
raise RuntimeError("helper is broken")

def extra():
    return "z"
"""

HELPER_V2 = """
VALUE = 4

def extra():
    return "w"
"""


def _loader(tools_dir: Path, make_loader: Callable[..., ToolLoader]) -> ToolLoader:
    write(tools_dir / "helper.py", HELPER_V1)
    write(tools_dir / "tool.py", TOOL)
    ld = make_loader(tools_dir, config=replace(FAST, import_timeout=3.0))  # the good versions must beat it
    assert call_text(ld, "value") == "1-x"
    return ld


def test_a_stuck_helper_leaves_its_dependents_on_the_last_good_version(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    ld = _loader(tools_dir, make_loader)
    helper = write(tools_dir / "helper.py", HELPER_STUCK)
    eventually(lambda: (s := ld.file_status(helper)) is not None and s.state is FileState.STUCK, 30)
    assert ld.wait_idle(30)
    assert call_text(ld, "value") == "1-x"
    status = ld.file_status(tools_dir / "tool.py")
    assert status is not None and status.state is FileState.LOADED
    assert status.failing_dependencies == (helper,)

    write(tools_dir / "helper.py", HELPER_V2)
    eventually(lambda: call_text(ld, "value") == "4-w", 30)
    status = ld.file_status(tools_dir / "tool.py")
    assert status is not None and status.failing_dependencies == ()


def test_a_failing_helper_is_named_in_its_dependents_status(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    ld = _loader(tools_dir, make_loader)
    helper = write(tools_dir / "helper.py", HELPER_BROKEN)
    eventually(lambda: (s := ld.file_status(helper)) is not None and s.state is FileState.FAILED, 30)
    assert ld.wait_idle(30)
    assert call_text(ld, "value") == "1-x"
    status = ld.file_status(tools_dir / "tool.py")
    assert status is not None and status.failing_dependencies == (helper,)

    write(tools_dir / "helper.py", HELPER_V2)
    eventually(lambda: call_text(ld, "value") == "4-w", 30)
    status = ld.file_status(tools_dir / "tool.py")
    assert status is not None and status.failing_dependencies == ()


HALF_HELPER_V1 = """
VALUE = 1
DONE = True
"""

# Its import sets VALUE, then blocks in C (an asynchronous stop cannot end a sleep), so a
# module object published before it finished would lack DONE.
HALF_HELPER_SLOW = """
import time

VALUE = 2
time.sleep(10**6)
DONE = True
"""

HALF_TOOLS = '''
import helper
from loader import tool

@tool
def bound() -> list:
    """The helper bound when this file was imported."""
    return [1, helper.VALUE, getattr(helper, "DONE", "HALF-LOADED")]

@tool
def fresh() -> list:
    """The helper as an import at call time finds it."""
    import helper as current
    return [1, current.VALUE, getattr(current, "DONE", "HALF-LOADED")]
'''


def _answers(ld: ToolLoader) -> list[str]:
    return [call_text(ld, "bound"), call_text(ld, "fresh")]


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_helper_still_importing_is_never_seen_half_executed(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "helper.py", HALF_HELPER_V1)
    write(tools_dir / "t.py", HALF_TOOLS)
    ld = make_loader(tools_dir, config=replace(FAST, import_timeout=4.0, rescan_interval=0))
    good = "[1, 1, True]"
    assert _answers(ld) == [good, good]
    helper = write(tools_dir / "helper.py", HALF_HELPER_SLOW)
    eventually(lambda: [p.path for p in ld.imports_in_progress()] == [helper], 10, "the helper imports")
    seen: set[str] = set()
    while (status := ld.file_status(helper)) is None or status.state is not FileState.STUCK:
        seen.update(_answers(ld))
        time.sleep(0.01)  # a caller's pace, not a wait for a condition
    assert seen == {good}, "a call saw the helper's new version before its import finished"
    # Once the stuck import's worker is stopped, the tools keep answering from the last good helper.
    assert ld.wait_idle(30)
    assert _answers(ld) == [good, good]


def test_a_dependent_caught_empty_as_its_helper_changed_runs_again_when_its_bytes_come_back(
    tools_dir: Path,
) -> None:
    """An editor's save truncates a file before writing it: a batch can read the dependent empty.

    The helper's change forces the dependent to run again; reading it empty
    starts its grace instead. When its bytes come back unchanged, it must still
    run against the new helper (it used to keep serving the old one for good).
    """
    write(tools_dir / "helper.py", HELPER_V1)
    tool = write(tools_dir / "tool.py", TOOL)
    with ToolLoader([tools_dir], config=FAST) as ld:
        ld.scan()
        assert call_text(ld, "value") == "1-x"
        tool.write_bytes(b"")  # the editor truncated the dependent...
        # ...as the helper's save landed (a new size: a scan knows a file by its size and mtime)
        write(tools_dir / "helper.py", HELPER_V2 + "# saved again\n")
        ld.scan()
        assert call_text(ld, "value") == "1-x"  # the empty dependent keeps serving in its grace
        write(tool, TOOL)  # the dependent's same bytes are back
        ld.scan()
        assert call_text(ld, "value") == "4-w"


SLOW_TOOL = '''
import time

import helper
from loader import tool

time.sleep(2)  # still importing when the helper's next save lands


@tool
def value() -> str:
    """The helper's value."""
    return f"{helper.VALUE}-{helper.extra()}"
'''


@pytest.mark.parametrize("isolation", ["thread", "process", "sandbox"])
def test_a_dependent_still_importing_when_its_helper_is_saved_again_runs_against_the_newest(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    """A helper's failed save makes its dependent run again (against the last good helper); the
    helper's next save lands while that run is still importing. The run in flight saw the old
    helper, so the dependent runs once more instead of taking it: it used to serve the old helper
    for good (``test_contract``'s broken-helper test, about 3 % of runs under load in process and
    sandbox mode, where the dependent's import is the slow one)."""
    write(tools_dir / "helper.py", HELPER_V1)
    tool = write(tools_dir / "tool.py", SLOW_TOOL)
    ld = make_loader(tools_dir, config=replace(FAST, import_timeout=20.0))
    assert call_text(ld, "value") == "1-x"
    helper = write(tools_dir / "helper.py", HELPER_BROKEN)
    eventually(lambda: [p.path for p in ld.imports_in_progress()] == [tool], 20, "the dependent runs again")
    assert (status := ld.file_status(helper)) is not None and status.state is FileState.FAILED
    write(helper, HELPER_V2)
    eventually(lambda: call_text(ld, "value") == "4-w", 30)
