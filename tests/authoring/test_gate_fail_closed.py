"""The gate fails closed: where the sandbox cannot start, nothing of a proposal is imported.

Landlock is hidden from the child process as in ``tests/isolation/test_sandbox_fail_closed.py``
(a seccomp filter makes its system calls fail with ``ENOSYS``, as on a kernel without it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loader.isolation.sandbox import probe

pytestmark = pytest.mark.skipif(
    not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
)

HIDE_LANDLOCK = """
import errno, os, sys
import pyseccomp as seccomp
hide = seccomp.SyscallFilter(seccomp.ALLOW)
for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
    hide.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
hide.load()
os.execv(sys.executable, [sys.executable, "-m", "loader", *sys.argv[1:]])
"""


def test_propose_refuses_without_the_sandbox_and_runs_with_best_effort(tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    marker = tmp_path / "imported"
    (tmp_path / "mark.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n\n"
        'from loader import tool\n\n\n@tool\ndef mark() -> str:\n    """Mark."""\n    return \'ok\'\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def propose(*extra: str) -> subprocess.CompletedProcess[str]:
        command = [
            sys.executable,
            "-c",
            HIDE_LANDLOCK,
            "propose",
            "mark.py",
            "--dir",
            "live",
            "--json",
            *extra,
        ]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)

    refused = propose()
    assert refused.returncode == 1, refused.stdout + refused.stderr
    report = json.loads(refused.stdout)["report"]
    assert report["sandbox"]["ok"] is False and "load" not in report
    assert "cannot start" in report["sandbox"]["problems"][0]
    assert not marker.exists()
    weakened = propose("--sandbox-best-effort")
    assert weakened.returncode == 0, weakened.stdout + weakened.stderr
    layers = json.loads(weakened.stdout)["report"]["sandbox"]["layers"]
    assert layers["filesystem"] is False and layers["syscalls"] is True
