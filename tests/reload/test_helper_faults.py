"""A helper whose new version fails or gets stuck never serves half-executed code to its dependents.

Real files, real watcher: the tools that import the helper keep running
against its last good module, and their status names the failing helper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

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
    ld = make_loader(tools_dir, config=replace(FAST, import_timeout=1.0))
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
