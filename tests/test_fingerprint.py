"""The tool-set fingerprint: equal for equal files wherever and whenever they are loaded, different otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

from support import FAST, write

from loader.fingerprint import FingerprintCache, tool_set_fingerprint
from loader.registry.tool_registry import ToolRegistry
from loader.reload.loader import ToolLoader
from loader.tools.function_tool import FunctionTool

GREET = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"
'''

ECHO = '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''


def scanned_fingerprint(folder: Path) -> str:
    loader = ToolLoader([folder], config=FAST)
    try:
        loader.scan()
        return loader.fingerprint()
    finally:
        loader.close()


def test_equal_files_in_different_folders_and_processes_give_one_fingerprint(tmp_path: Path) -> None:
    first, second = tmp_path / "replica-a" / "tools", tmp_path / "replica-b" / "deep" / "tools"
    for folder in (first, second):
        write(folder / "greet.py", GREET)
        write(folder / "echo.py", ECHO)
    fingerprint = scanned_fingerprint(first)
    assert len(fingerprint) == 64 and int(fingerprint, 16) >= 0
    assert scanned_fingerprint(second) == fingerprint
    assert scanned_fingerprint(first) == fingerprint  # a restart
    shutil.rmtree(second)
    write(second / "echo.py", ECHO)
    assert scanned_fingerprint(second) != fingerprint


def test_a_change_that_keeps_the_spec_still_changes_the_fingerprint(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    write(folder / "greet.py", GREET)
    before = scanned_fingerprint(folder)
    write(folder / "greet.py", GREET.replace('f"hello {name}"', 'f"hi {name}"'))
    after = scanned_fingerprint(folder)
    assert after != before
    write(folder / "greet.py", GREET)
    assert scanned_fingerprint(folder) == before


def test_a_renamed_spec_changes_the_fingerprint_without_a_loader() -> None:
    def greet(name: str) -> str:
        """Greet someone."""
        return name

    def greet_loudly(name: str) -> str:
        """Greet someone, loudly."""
        return name

    registry = ToolRegistry()
    registry.register(FunctionTool(greet))
    before = tool_set_fingerprint(registry.snapshot())
    registry.replace(FunctionTool(greet_loudly, name="greet"))
    assert tool_set_fingerprint(registry.snapshot()) != before


def test_the_cache_follows_file_hashes_not_only_generations(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    write(folder / "greet.py", GREET)
    loader = ToolLoader([folder], config=FAST)
    try:
        loader.scan()
        cache = FingerprintCache()
        snapshot = loader.registry.snapshot()
        without_hashes = cache(snapshot, ())
        with_hashes = cache(snapshot, loader.status())
        assert with_hashes != without_hashes
        assert with_hashes == loader.fingerprint() == cache(snapshot, loader.status())
    finally:
        loader.close()


def test_the_cache_gives_the_whole_digest_after_each_change() -> None:
    def greet(name: str) -> str:
        """Greet someone."""
        return name

    def shout(name: str) -> str:
        """Shout at someone."""
        return name

    registry = ToolRegistry()
    registry.register(FunctionTool(greet))
    registry.register(FunctionTool(shout))
    cache = FingerprintCache()
    seen = {cache(registry.snapshot())}
    assert cache(registry.snapshot()) == tool_set_fingerprint(registry.snapshot())
    registry.replace(FunctionTool(shout, name="greet"))  # same object count, one spec changed
    assert cache(registry.snapshot()) == tool_set_fingerprint(registry.snapshot())
    seen.add(cache(registry.snapshot()))
    registry.unregister("shout")
    assert cache(registry.snapshot()) == tool_set_fingerprint(registry.snapshot())
    seen.add(cache(registry.snapshot()))
    assert len(seen) == 3
