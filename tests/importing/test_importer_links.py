"""Links out of a watched folder are refused on every import path, not only ``import name``.

Python's own path finder would pick up what the loader's finder declines
(``from . import helper_link``, ``from .linked_dir import m``) and run the
outside file; the outside files here leave a marker when they run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support import call_text, write

from loader.reload.loader import ToolLoader
from loader.status import FileState

OUTSIDE_MODULE = """
from pathlib import Path
Path(__file__).with_suffix(".ran").write_text("ran")
VALUE = "outside"
"""


def tool_importing(statement: str, expression: str) -> str:
    return f'''
{statement}
from loader import tool

@tool
def probe() -> str:
    """Shows what the import gave."""
    return str({expression})
'''


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    write(folder / "secret.py", OUTSIDE_MODULE)
    write(folder / "pkgdir" / "m.py", OUTSIDE_MODULE)
    return folder


@pytest.mark.parametrize(
    ("link", "target", "statement", "expression"),
    [
        ("helper_link.py", "secret.py", "from . import helper_link", "helper_link.VALUE"),
        ("helper_link.py", "secret.py", "from .helper_link import VALUE", "VALUE"),
        ("linked_dir", "pkgdir", "from .linked_dir import m", "m.VALUE"),
        ("linked_dir", "pkgdir", "import linked_dir.m", "linked_dir.m.VALUE"),
        ("sub/helper_link.py", "secret.py", "from .sub import helper_link", "helper_link.VALUE"),
    ],
)
def test_an_import_through_a_link_out_of_the_folder_is_refused(
    tools_dir: Path,
    outside: Path,
    make_loader: Callable[..., ToolLoader],
    link: str,
    target: str,
    statement: str,
    expression: str,
) -> None:
    if link.startswith("sub/"):
        write(tools_dir / "sub" / "__init__.py", "")
    os.symlink(outside / target, tools_dir / link)
    probe = write(tools_dir / "probe.py", tool_importing(statement, expression))
    ld = make_loader(tools_dir, watch=False)
    status = ld.file_status(probe)
    assert status is not None and status.state is FileState.FAILED, status
    assert status.error is not None
    assert status.error.exc_type == "SymlinkRefusedError"
    assert "leads outside the watched folder" in status.error.message
    assert "probe" not in ld.registry
    assert not list(outside.rglob("*.ran")), "the outside file ran"


def test_links_that_stay_inside_the_folder_still_import(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "real" / "inner.py", 'VALUE = "inside"\n')
    os.symlink(tools_dir / "real", tools_dir / "alias_dir")
    os.symlink(tools_dir / "real" / "inner.py", tools_dir / "alias.py")
    write(tools_dir / "probe.py", tool_importing("from .alias_dir import inner", "inner.VALUE"))
    write(
        tools_dir / "probe2.py",
        tool_importing("from . import alias", "alias.VALUE").replace("probe", "probe2"),
    )
    ld = make_loader(tools_dir, watch=False)
    assert call_text(ld, "probe") == "inside"
    assert call_text(ld, "probe2") == "inside"
