"""What must hold in every isolation mode: the gate, imports that never wait for one another,
one discovery, and the result size limit.

Each test runs once per mode (``MODES``): tools imported and called in this
process (``thread``) and in worker processes (``process``). The real
filesystem, the real watchdog observer and real worker processes.
"""

from __future__ import annotations

import importlib
import os
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support import FAST, MakeLoader, call_text, eventually, function_tool_source, run_cli, write

from loader.reload.gate import EXAMPLE_FAILED
from loader.reload.loader import ToolLoader
from loader.status import FileState, FileStatus, LoadErrorKind

MODES = ["thread", "process", "sandbox"]
"""Every isolation mode; a new mode is added here."""


@pytest.fixture(params=MODES)
def isolation(request: pytest.FixtureRequest) -> str:
    """``make_loader`` builds its loaders in each mode in turn."""
    return str(request.param)


def _status(loader: ToolLoader, path: Path) -> FileStatus:
    status = loader.file_status(path)
    assert status is not None, path
    return status


# -- 1. the gate ---------------------------------------------------------------------------------
def _calc(version: int, body: str = "", *, raise_errors: bool = False) -> str:
    """``calc`` at ``version``; ``body`` (run before the sum) makes it misbehave."""
    flag = "raise_errors=True, " if raise_errors else ""
    return textwrap.dedent(
        f"""\
        import time
        from loader import tool

        @tool({flag}examples=[{{"description": "sum", "params": {{"a": 1, "b": 2}}, "expected_output": {{"sum": 3}}}}])
        def calc(a: int, b: int) -> dict:
            '''Add.'''
            {body or "pass"}
            return {{"version": {version}, "sum": a + b}}
        """
    )


def _calc_version(loader: ToolLoader) -> int | None:
    result = loader.registry.invoke("calc", {"a": 1, "b": 2})
    value = result["content"][0].get("json") if result["status"] == "success" else None
    return int(value["version"]) if isinstance(value, dict) else None


BAD_SAVES = [
    ("wrong output", "a = a + 1", False, "expected 3 at sum, got 4"),
    ("hangs", "time.sleep(30)", False, "no result within 1 s"),
    ("raises", "raise ValueError('nope')", False, 'error result: "Error: ValueError - nope"'),
    ("raises through", "raise KeyError('k')", True, "raised KeyError: 'k'"),
    ("exits", "raise SystemExit(3)", True, "raised SystemExit: 3"),
]


def _rejected_for(loader: ToolLoader, path: Path, difference: str) -> FileStatus | None:
    status = _status(loader, path)
    rejected = status.state is FileState.REJECTED and status.error is not None
    return status if rejected and status.error.message.endswith(difference) else None  # type: ignore[union-attr]


def test_the_gate_rejects_every_bad_save_and_keeps_the_last_good_version(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """A save whose example gives the wrong output, hangs, raises or exits never goes live."""
    path = write(tools_dir / "calc.py", _calc(1))
    loader = make_loader(tools_dir, config=replace(FAST, gate=True, example_timeout=1.0))
    assert _calc_version(loader) == 1
    for version, (what, body, raise_errors, difference) in enumerate(BAD_SAVES, 2):
        write(path, _calc(version, body, raise_errors=raise_errors))
        status = eventually(partial(_rejected_for, loader, path, difference), timeout=30, message=what)
        assert status.error is not None
        assert status.error.exc_type == EXAMPLE_FAILED and status.error.kind is LoadErrorKind.EXAMPLE_FAILED
        assert status.error.message == f'calc example 0 (\'sum\') with {{"a": 1, "b": 2}}: {difference}'
        assert status.tools == ("calc",)
        assert _calc_version(loader) == 1, what
        write(path, _calc(1))  # back to the good version, so the next bad save is a change again
        eventually(lambda: _status(loader, path).state is FileState.LOADED, timeout=30, message=what)


# -- 2. a hanging import holds only itself -----------------------------------------------------------
HANGING = "import pathlib\npathlib.Path({marker!r}).touch()\nwhile True:\n    pass\n"


def test_another_files_save_goes_live_while_an_import_hangs(tools_dir: Path, make_loader: MakeLoader) -> None:
    """The hanging import is still running (its deadline is far off) when the other save is live."""
    other = write(tools_dir / "other.py", function_tool_source("other", "return 'v1'"))
    loader = make_loader(tools_dir, config=replace(FAST, import_timeout=60.0))
    marker = tools_dir.parent / "hang-started"
    hanging = write(tools_dir / "hanging.py", HANGING.format(marker=str(marker)))
    eventually(marker.exists, message="the hanging import runs")
    for version in range(2, 5):
        write(other, function_tool_source("other", f"return 'v{version}'"))
        eventually(lambda v=version: call_text(loader, "other") == f"v{v}", timeout=30)  # type: ignore[misc]
        assert [i.path for i in loader.imports_in_progress()] == [hanging]


# -- 4. one discovery ----------------------------------------------------------------------------
BAD_PLUGIN = '''
from loader import hookimpl

@hookimpl
def tool_loader_discover_tools(module, path):
    """Return something that is not a tool, for files that ask for it."""
    if getattr(module, "WANTS_A_BAD_PLUGIN", False):
        return ["not a tool"]
    return None
'''


@pytest.fixture
def bad_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed entry-point plugin (on ``sys.path``, so the workers have it too)."""
    site = tmp_path / "site"
    write(site / "parity_bad_plugin.py", BAD_PLUGIN)
    write(
        site / "parity_bad_plugin-1.0.dist-info" / "METADATA",
        "Metadata-Version: 2.1\nName: parity-bad-plugin\nVersion: 1.0\n",
    )
    write(
        site / "parity_bad_plugin-1.0.dist-info" / "entry_points.txt",
        "[tool_loader.plugins]\nparity_bad = parity_bad_plugin\n",
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield


FAULTY_FILES = {
    "invalid_name": (
        "from loader import tool\n\n@tool(name='no spaces allowed')\ndef f() -> str:\n    '''F.'''\n    return 'f'\n",
        "InvalidToolNameError",
        LoadErrorKind.INVALID_TOOL_NAME,
        "Invalid tool name 'no spaces allowed': use 1 to 64 characters from letters, digits, '_' and '-'",
    ),
    "duplicate_name": (
        "from loader import tool\n\n@tool(name='twice')\ndef a() -> str:\n    '''A.'''\n    return 'a'\n\n"
        "@tool(name='twice')\ndef b() -> str:\n    '''B.'''\n    return 'b'\n",
        "DuplicateToolInFileError",
        LoadErrorKind.DUPLICATE_IN_FILE,
        "{path}: tool name 'twice' is defined twice in this file (lines 3 and 8)",
    ),
    "not_a_tool": (
        "WANTS_A_BAD_PLUGIN = True\n",
        "ToolDefinitionError",
        LoadErrorKind.EXCEPTION,
        "{path}: a discovery plugin returned 'not a tool', which is not an AgentTool",
    ),
}


@pytest.mark.parametrize("case", sorted(FAULTY_FILES))
def test_a_faulty_file_fails_with_the_same_error_in_every_mode(
    tools_dir: Path, make_loader: MakeLoader, bad_plugin: None, case: str
) -> None:
    source, exc_type, kind, message = FAULTY_FILES[case]
    path = write(tools_dir / f"{case}.py", source)
    loader = make_loader(tools_dir, config=replace(FAST, entry_point_plugins=True), watch=False)
    error = _status(loader, path).error
    assert error is not None
    assert (error.exc_type, error.kind, error.message) == (exc_type, kind, message.format(path=path))


# -- 7. results have a size limit ------------------------------------------------------------------
BIG = '''
from loader import tool

@tool
def big(megabytes: int) -> str:
    """A text result of the given size."""
    return "x" * (megabytes * 1024 * 1024)
'''


def test_a_result_over_the_limit_is_an_error_naming_the_limit_and_the_size(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "big.py", BIG)
    loader = make_loader(tools_dir, config=replace(FAST, max_result_bytes=2 * 1024 * 1024), watch=False)
    assert call_text(loader, "big", {"megabytes": 1}) == "x" * (1024 * 1024)
    result = loader.registry.invoke("big", {"megabytes": 3})
    assert result["status"] == "error"
    assert result["content"][0].get("text") == (
        "Error: the result of tool big is 3,145,728 bytes, more than the limit of 2,097,152 bytes "
        "(max_result_bytes)"
    )


def test_the_default_result_limit_is_32_mib() -> None:
    from loader.reload.config import LoaderConfig

    assert LoaderConfig().max_result_bytes == 32 * 1024 * 1024


def _rss() -> int:
    """This process's resident memory in bytes."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("isolation", ["process"])
def test_oversized_results_never_reach_the_hosts_memory(
    tools_dir: Path, make_loader: MakeLoader, isolation: str
) -> None:
    """Four concurrent 40 MB results against a 1 MiB limit: the host reads none of them."""
    write(tools_dir / "big.py", BIG)
    loader = make_loader(tools_dir, config=replace(FAST, max_result_bytes=1024 * 1024), watch=False)
    assert call_text(loader, "big", {"megabytes": 0}) == ""
    before = _rss()
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.002):
            peak.append(_rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    results: list[dict[str, Any]] = []
    callers = [
        threading.Thread(
            target=lambda: results.append(dict(loader.registry.invoke("big", {"megabytes": 40})))
        )
        for _ in range(4)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(60)
    done.set()
    sampler.join(10)
    assert [r["status"] for r in results] == ["error"] * 4
    assert all("more than the limit of 1,048,576 bytes" in r["content"][0]["text"] for r in results)
    grown, kept = max(peak) - before, _rss() - before
    assert grown < 24 * 1024 * 1024, f"the host grew by {grown / 2**20:.0f} MiB"
    assert kept < 24 * 1024 * 1024, f"the host kept {kept / 2**20:.0f} MiB"


def test_the_commands_that_run_tools_take_the_limit(tools_dir: Path, isolation: str) -> None:
    write(tools_dir / "big.py", BIG)
    done = run_cli(
        "call",
        "big",
        "megabytes=1",
        "--dir",
        str(tools_dir),
        "--isolation",
        isolation,
        "--max-result-bytes",
        "1000000",
        cwd=tools_dir.parent,
    )
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "Error: the result of tool big is 1,048,576 bytes, more than the limit of 1,000,000 bytes "
        "(max_result_bytes)"
    )
    refused = run_cli("serve", str(tools_dir), "--max-result-bytes", "-1", cwd=tools_dir.parent)
    assert refused.returncode == 2
    assert (
        "--max-result-bytes: expected a whole number of bytes >= 0 (0: no limit), got '-1'" in refused.stderr
    )
