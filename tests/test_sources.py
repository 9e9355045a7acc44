"""Which files count as tool sources by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader.reload.sources import is_default_tool_source, is_ignored_dir

ROOT = Path("/tools")


@pytest.mark.parametrize("name", ["weather.py", "_private_tool.py", "my-tool.py", "sub/deep/x.py"])
def test_sources(name: str) -> None:
    assert is_default_tool_source(ROOT / name, ROOT)


@pytest.mark.parametrize(
    "name",
    [
        "__init__.py",
        ".#x.py",
        "x.py~",
        ".x.py.swp",
        "x.py.tmp",
        "x.py___jb_tmp___",
        "x.py___jb_old___",
        "#x.py#",
        ".hidden.py",
        "notes.txt",
        ".git/x.py",
        "__pycache__/x.py",
        "pkg.egg-info/x.py",
        "~x.py",
    ],
)
def test_not_sources(name: str) -> None:
    assert not is_default_tool_source(ROOT / name, ROOT)


def test_outside_root_is_never_a_source() -> None:
    assert not is_default_tool_source(Path("/elsewhere/x.py"), ROOT)


def test_ignored_dirs() -> None:
    assert is_ignored_dir(".venv") and is_ignored_dir("__pycache__") and not is_ignored_dir("helpers")
