"""The bytecode cache: a second start reuses compiled code, and no edit is ever served stale code.

Real loaders on real folders, with bytecode writing on (``conftest.bytecode_on``)
and a cache folder of each test's own (``conftest.private_bytecode_cache``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import FAST, call_text, cli_env, eventually, function_tool_source, write

from loader.importing.bytecode_cache import BytecodeCache, private_cache_dir
from loader.reload.loader import LoaderConfig, ToolLoader


@contextmanager
def _scanned(tools: Path, config: LoaderConfig = FAST) -> Iterator[ToolLoader]:
    """A loader that has scanned ``tools`` once (not watching), closed afterwards."""
    loader = ToolLoader([tools], config=config)
    try:
        loader.scan()
        yield loader
    finally:
        loader.close()


def _cache(loader: ToolLoader) -> BytecodeCache:
    cache = loader.bytecode_cache
    assert cache is not None
    return cache


def _three(tools: Path) -> None:
    for name in ("a", "b", "c"):
        write(tools / f"{name}.py", function_tool_source(name, f"return '{name}1'"))


def test_a_second_start_reuses_the_compiled_code_of_unchanged_files(tools_dir: Path) -> None:
    _three(tools_dir)
    with _scanned(tools_dir) as first:
        assert (_cache(first).hits, _cache(first).misses) == (0, 3)
        assert _cache(first).paths() == {str(tools_dir / f"{n}.py") for n in "abc"}
    with _scanned(tools_dir) as second:
        assert (_cache(second).hits, _cache(second).misses) == (3, 0)
        assert [call_text(second, n) for n in "abc"] == ["a1", "b1", "c1"]


def test_an_edit_keeping_size_and_mtime_is_never_served_the_old_code(tools_dir: Path) -> None:
    path = write(tools_dir / "a.py", function_tool_source("a", "return 'old'"))
    with _scanned(tools_dir) as first:
        assert call_text(first, "a") == "old"
    before = path.stat()
    path.write_text(function_tool_source("a", "return 'new'"))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with _scanned(tools_dir) as second:
        assert call_text(second, "a") == "new"
        assert (_cache(second).hits, _cache(second).misses) == (0, 1)


def test_a_damaged_pack_is_a_miss_and_is_written_anew(tools_dir: Path) -> None:
    _three(tools_dir)
    with _scanned(tools_dir) as first:
        pack = _cache(first).pack
    data = pack.read_bytes()
    pack.write_bytes(data[: len(data) // 2])
    with _scanned(tools_dir) as second:
        assert (_cache(second).hits, _cache(second).misses) == (0, 3)
        assert [call_text(second, n) for n in "abc"] == ["a1", "b1", "c1"]
    with _scanned(tools_dir) as third:
        assert (_cache(third).hits, _cache(third).misses) == (3, 0)


def test_the_pack_holds_exactly_the_files_the_last_scan_loaded(tools_dir: Path) -> None:
    _three(tools_dir)
    with _scanned(tools_dir):
        pass
    (tools_dir / "b.py").unlink()
    write(tools_dir / "d.py", function_tool_source("d"))
    with _scanned(tools_dir) as second:
        assert (_cache(second).hits, _cache(second).misses) == (2, 1)
        assert _cache(second).paths() == {str(tools_dir / f"{n}.py") for n in "acd"}


def test_a_file_that_does_not_compile_is_reported_and_not_kept(tools_dir: Path) -> None:
    write(tools_dir / "broken.py", "x = 1\n\ndef broken(:\n    pass\n")
    write(tools_dir / "a.py", function_tool_source("a"))
    with _scanned(tools_dir) as loader:
        status = loader.file_status(tools_dir / "broken.py")
        assert status is not None and status.error is not None and status.error.line == 3
        assert _cache(loader).paths() == {str(tools_dir / "a.py")}


def test_with_bytecode_writing_off_the_pack_is_read_but_never_written(
    tools_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _three(tools_dir)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with _scanned(tools_dir) as first:
        assert not _cache(first).pack.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    with _scanned(tools_dir):
        pass
    write(tools_dir / "d.py", function_tool_source("d"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with _scanned(tools_dir) as third:
        assert (_cache(third).hits, _cache(third).misses) == (3, 1)
        assert "d.py" not in {Path(p).name for p in _cache(third).paths()}


def test_saves_while_watching_compile_and_write_nothing(tools_dir: Path) -> None:
    _three(tools_dir)
    with _scanned(tools_dir) as loader:
        pack = _cache(loader).pack
        written = (pack.read_bytes(), pack.stat().st_mtime_ns)
        loader.start()
        write(tools_dir / "a.py", function_tool_source("a", "return 'a2'"))
        eventually(lambda: call_text(loader, "a") == "a2", message="the edit is served")
        assert (pack.read_bytes(), pack.stat().st_mtime_ns) == written


def test_a_cache_folder_others_can_write_is_not_used(
    tools_dir: Path, private_bytecode_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _three(tools_dir)
    private_bytecode_cache.mkdir(parents=True)
    private_bytecode_cache.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="loader.importing.bytecode_cache"):
        with _scanned(tools_dir) as loader:
            assert loader.bytecode_cache is None
            assert [call_text(loader, n) for n in "abc"] == ["a1", "b1", "c1"]
    assert "writable by others" in caplog.text
    assert list(private_bytecode_cache.iterdir()) == []


def test_the_cache_folder_is_handed_out_only_when_it_is_this_users_own(
    private_bytecode_cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert private_cache_dir() == private_bytecode_cache  # made on first use, mode 0700
    assert private_bytecode_cache.stat().st_mode & 0o777 == 0o700
    private_bytecode_cache.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="loader.importing.bytecode_cache"):
        assert private_cache_dir() is None
    assert "writable by others" in caplog.text
    monkeypatch.setenv("TOOL_LOADER_CACHE_DIR", "off")
    assert private_cache_dir() is None


def test_the_cache_can_be_turned_off(tools_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _three(tools_dir)
    monkeypatch.setenv("TOOL_LOADER_CACHE_DIR", "off")
    with _scanned(tools_dir) as loader:
        assert loader.bytecode_cache is None
        assert call_text(loader, "a") == "a1"
    monkeypatch.delenv("TOOL_LOADER_CACHE_DIR")
    with _scanned(tools_dir, replace(FAST, bytecode_cache=False)) as off:
        assert off.bytecode_cache is None


def test_a_pack_others_can_write_is_ignored_and_replaced_by_a_private_one(
    tools_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _three(tools_dir)
    with _scanned(tools_dir) as first:
        pack = _cache(first).pack
    pack.chmod(0o666)
    with caplog.at_level(logging.WARNING, logger="loader.importing.bytecode_cache"):
        with _scanned(tools_dir) as second:
            assert (_cache(second).hits, _cache(second).misses) == (0, 3)
    assert "writable by others" in caplog.text
    assert pack.stat().st_mode & 0o077 == 0
    with _scanned(tools_dir) as third:
        assert (_cache(third).hits, _cache(third).misses) == (3, 0)


def test_a_cache_folder_that_cannot_be_made_leaves_loading_as_it_was(
    tools_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _three(tools_dir)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go\n")
    monkeypatch.setenv("TOOL_LOADER_CACHE_DIR", str(blocker / "cache"))
    with _scanned(tools_dir) as loader:
        assert loader.bytecode_cache is None
        assert [call_text(loader, n) for n in "abc"] == ["a1", "b1", "c1"]


def test_a_later_scan_of_the_same_loader_keeps_the_pack_whole(tools_dir: Path) -> None:
    _three(tools_dir)
    with _scanned(tools_dir) as loader:
        write(tools_dir / "a.py", function_tool_source("a", "return 'a2'"))
        loader.scan()  # imports a.py alone
        assert call_text(loader, "a") == "a2"
        assert _cache(loader).paths() == {str(tools_dir / f"{n}.py") for n in "abc"}
    with _scanned(tools_dir) as second:
        assert (_cache(second).hits, _cache(second).misses) == (2, 1)  # a.py changed since the pack


_START = """
import json, sys
from loader.reload.loader import LoaderConfig, ToolLoader
loader = ToolLoader([sys.argv[1]], config=LoaderConfig(entry_point_plugins=False))
loader.scan()
cache = loader.bytecode_cache
answer = loader.registry.invoke("mode", {})["content"][0]["text"]
print(json.dumps({"answer": answer, "hits": cache.hits, "misses": cache.misses, "pack": str(cache.pack)}))
loader.close()
"""

_MODE = '''
from loader import tool

@tool
def mode() -> str:
    """Whether this code was compiled with its asserts."""
    try:
        assert False
    except AssertionError:
        return "plain"
    return "optimised"
'''


def _start(tools: Path, *flags: str) -> dict[str, Any]:
    """One start of a separate interpreter (with ``flags``, e.g. ``-O``) that scans ``tools``."""
    done = subprocess.run(
        [sys.executable, *flags, "-c", _START, str(tools)],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_python_dash_o_start_never_runs_code_a_plain_start_compiled_nor_the_reverse(
    tools_dir: Path,
) -> None:
    write(tools_dir / "mode.py", _MODE)
    plain = _start(tools_dir)
    assert (plain["answer"], plain["hits"], plain["misses"]) == ("plain", 0, 1)
    optimised = _start(tools_dir, "-O")
    # Its own pack: the plain start's code (asserts compiled in) is not reused.
    assert (optimised["answer"], optimised["hits"], optimised["misses"]) == ("optimised", 0, 1)
    assert optimised["pack"] != plain["pack"]
    again = _start(tools_dir)
    assert (again["answer"], again["hits"], again["misses"]) == ("plain", 1, 0)  # its pack kept
