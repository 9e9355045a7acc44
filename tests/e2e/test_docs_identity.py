"""docs/identity.md's first two examples agree: a client recomputes the digest the server lists.

Every example of the page runs in ``tests/e2e/test_readme.py``; this test runs
the first two together and checks they print the same digest (the second
recomputes, as a client would, the digest of the entry the server lists for
the first one's tool).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import cli_env

DOC = Path(__file__).resolve().parents[2] / "docs" / "identity.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S) if DOC.is_file() else []

pytestmark = pytest.mark.skipif(not BLOCKS, reason="the docs ship with the repository only")


def run(block: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", block], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_client_recomputes_the_digest_the_server_lists(tmp_path: Path) -> None:
    listed = run(BLOCKS[0], tmp_path).split()
    recomputed = run(BLOCKS[1], tmp_path).strip()
    assert listed[0] == "forecast" and recomputed.startswith(listed[1])
