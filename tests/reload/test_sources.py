"""Which files count as tool sources by default."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fs_layouts import deep_chain

from loader.hookspecs import hookimpl
from loader.importing.discovery import make_plugin_manager
from loader.reload.sources import SourceFinder, is_default_tool_source, is_ignored_dir
from loader.reload.walk import MAX_FOLDER_DEPTH

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


class _OnlyNamesStartingWithT:
    """A plugin with its own rule: the walk must ask the plugins, not the built-in name check."""

    @hookimpl
    def tool_loader_is_tool_source(self, path: Path, root: Path) -> bool | None:
        return path.name.startswith("t")


def _tree(root: Path) -> None:
    for relative in (
        "a.py",
        "tool.py",
        ".hidden.py",
        ".#b.py",
        "notes.txt",
        "sub/__init__.py",
        "sub/d.py",
        ".git/e.py",
        "__pycache__/f.py",
        ".venv/lib/g.py",
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x = 1\n")


def test_a_walk_lists_sources_by_the_built_in_rule_and_never_inside_ignored_folders(tmp_path: Path) -> None:
    _tree(tmp_path)
    finder = SourceFinder(make_plugin_manager([]), recursive=True)
    expected = {
        tmp_path / "a.py",
        tmp_path / "tool.py",
        tmp_path / "sub" / "__init__.py",
        tmp_path / "sub" / "d.py",
    }
    assert set(finder.list_sources(tmp_path)) == expected
    assert finder.list_sources(tmp_path, under=tmp_path / ".git") == []  # started inside an ignored folder
    assert set(finder.list_sources(tmp_path, under=tmp_path / "sub")) == {
        tmp_path / "sub" / "__init__.py",
        tmp_path / "sub" / "d.py",
    }
    # the verdicts the walk made are the ones asked later, for events
    assert finder.is_source(tmp_path / "a.py", tmp_path) and not finder.is_source(
        tmp_path / ".#b.py", tmp_path
    )


def test_a_walk_asks_a_plugin_that_has_its_own_rule(tmp_path: Path) -> None:
    _tree(tmp_path)
    manager = make_plugin_manager([_OnlyNamesStartingWithT()], builtin=False)
    finder = SourceFinder(manager, recursive=True)
    assert set(finder.list_sources(tmp_path)) == {tmp_path / "tool.py", tmp_path / "sub" / "__init__.py"}


DEPTH = 1500
"""Deeper than Python's recursion limit, as the fault injection that found the problem used."""


def test_a_chain_of_folders_deeper_than_the_limit_is_walked_without_recursion_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "tools"
    root.mkdir()
    (root / "top.py").write_text("x = 1\n")
    with deep_chain(root / "deep", DEPTH) as deepest:
        near = root / "deep" / "d" / "near.py"
        near.write_text("x = 1\n")
        (deepest / "bottom.py").write_text("x = 1\n")
        finder = SourceFinder(make_plugin_manager([]), recursive=True)
        with caplog.at_level(logging.WARNING, logger="loader.reload"):
            found = finder.list_sources(root)
            again = finder.list_sources(root)
    assert set(found) == set(again) == {root / "top.py", near}
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1, "said once per folder, not on every walk"
    assert f"deeper than {MAX_FOLDER_DEPTH} levels" in warnings[0]
    assert str(root / "deep") in warnings[0]
