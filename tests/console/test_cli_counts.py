"""Every count the commands print agrees with its noun: ``1 tool``, ``2 tools``, ``1 file failed``.

Three folders give each message its 1 and its 2: one tool in one file; two
tools in four files, two of them broken; one tool in two files, one broken.
Each command runs for real, from the folders' parent.
"""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest
import warm_cli
from serving import serve_http
from support import LineReader, cli_env, run_cli, write


def _tool(name: str) -> str:
    return f'from loader import tool\n\n@tool\ndef {name}() -> str:\n    """Say {name}."""\n    return "{name}"\n'


BROKEN = "def broken(:\n"

# folder -> (tool count phrase, file count phrase, failures phrase or None)
EXPECTED = {
    "one": ("1 tool", "1 file", None),
    "two": ("2 tools", "4 files", "2 files failed"),
    "mixed": ("1 tool", "2 files", "1 file failed"),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("counts")
    write(base / "one" / "alpha.py", _tool("alpha"))
    write(base / "two" / "alpha.py", _tool("alpha"))
    write(base / "two" / "beta.py", _tool("beta"))
    write(base / "two" / "broken_1.py", BROKEN)
    write(base / "two" / "broken_2.py", BROKEN)
    write(base / "mixed" / "alpha.py", _tool("alpha"))
    write(base / "mixed" / "broken_1.py", BROKEN)
    return base


@pytest.mark.parametrize("folder", list(EXPECTED))
def test_serve_says_what_it_loaded(root: Path, folder: str) -> None:
    tools, files, failed = EXPECTED[folder]
    done = run_cli("serve", folder, cwd=root)  # its standard input is empty: the client leaves at once
    assert done.returncode == 0, done.stderr
    failures = f" ({failed})" if failed else ""
    assert f"loaded {tools} from {files} in {folder}{failures}; fingerprint " in done.stderr


@pytest.mark.parametrize(("folder", "tools"), [("one", "1 tool"), ("two", "2 tools")])
def test_serve_over_http_says_how_many_it_serves(root: Path, folder: str, tools: str) -> None:
    with serve_http(root / folder, root, wait_ready=True) as served:
        assert f"serving {tools} at {served.url}" in served.lines


@pytest.mark.parametrize("folder", list(EXPECTED))
def test_list_and_check_count_tools_files_and_failures(root: Path, folder: str) -> None:
    tools, files, failed = EXPECTED[folder]
    listed = run_cli("list", folder, cwd=root)
    assert re.search(
        rf"^{tools} from {files} in {folder} \(\d+\.\d\d s\)" + (f"; {failed}$" if failed else "$"),
        listed.stdout,
        re.MULTILINE,
    ), listed.stdout
    checked = run_cli("check", folder, cwd=root)
    errors = {None: "no problems found", "1 file failed": "1 error, 0 warnings"}.get(
        failed, "2 errors, 0 warnings"
    )
    assert f"checked {tools} in {files} in {folder}: {errors}\n" in checked.stdout, checked.stdout


@pytest.mark.parametrize("folder", list(EXPECTED))
def test_watch_counts_what_it_loaded(root: Path, folder: str) -> None:
    tools, files, failed = EXPECTED[folder]
    process = subprocess.Popen(
        warm_cli.command(["watch", folder, "--no-history"], cli_env()),
        cwd=root,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out = LineReader(process.stdout)
        out.wait_for(
            rf"^loaded {tools} from {files} in {folder} \(\d+ ms\)" + (f", {failed}$" if failed else "$")
        )
        out.wait_for(r"^watching ")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
