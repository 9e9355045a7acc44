"""Where the kernel refuses a PID namespace, sandboxed workers are forked without one, and the loader says so.

The refusal is real: a seccomp filter makes ``unshare`` fail with ``EPERM`` in
a child process before it starts the loader, as Docker's default profile
does. What a namespace gives a worker is attacked in
``test_sandbox_escapes.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import write

from loader.isolation.sandbox import probe

pytestmark = pytest.mark.skipif(
    not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
)

WHO = '''
import os
from loader import tool

@tool
def who() -> str:
    """This worker's pid and its parent's, as it sees them."""
    return f"{os.getpid()} {os.getppid()}"
'''

REFUSING = """
import errno
if "{how}" == "refuse":  # as Docker's default seccomp profile does
    import pyseccomp as seccomp
    refuse = seccomp.SyscallFilter(seccomp.ALLOW)
    refuse.add_rule(seccomp.ERRNO(errno.EPERM), "unshare")
    refuse.load()
"""
"""Code run first in the child process: with ``refuse``, ``unshare`` fails with ``EPERM`` from then on."""

RUN = """
import json, logging, os, sys
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
from loader.reload.loader import ToolLoader
loader = ToolLoader([sys.argv[1]], isolation="sandbox")
try:
    loader.scan()
    result = loader.registry.invoke("who", {})
finally:
    loader.close()
print(json.dumps({"result": result, "loader": os.getpid()}))
"""


def _run(code: str, folder: Path, how: str) -> tuple[Any, str]:
    """Run ``code`` on ``folder`` in a child process that ``refuse``s ``unshare`` or not; the JSON it
    printed, and its standard error."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", REFUSING.format(how=how) + code, str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("how", ["refuse", "allow"])
def test_a_refused_namespace_is_said_once_and_workers_still_answer(tools_dir: Path, how: str) -> None:
    write(tools_dir / "who.py", WHO)
    answer, log = _run(RUN, tools_dir, how)
    result = answer["result"]
    assert isinstance(result, dict) and result["status"] == "success", result
    pid, parent = (int(word) for word in result["content"][0]["text"].split())
    said = "sandboxed workers share this machine's process list: no PID namespace (unshare: Operation not permitted)"
    if how == "refuse":
        assert log.count(said) == 1, log  # once, though the import worker and the call worker both started
        assert pid > 2 and parent > 0  # forked as before: the template is its parent, by its own pid
    else:
        assert "no PID namespace" not in log, log
        assert (pid, parent) == (2, 0)


def test_check_says_whether_workers_get_a_namespace(tools_dir: Path) -> None:
    """``tool-loader check --isolation sandbox`` tries the namespace's steps, and names a refusal."""
    write(tools_dir / "who.py", WHO)
    check = "import runpy, sys; sys.argv = ['tool-loader', 'check', sys.argv[1], '--isolation', 'sandbox', '--json']"
    check += "; runpy.run_module('loader', run_name='__main__')"
    for how, on in (("allow", True), ("refuse", False)):
        layer = _run(check, tools_dir, how)[0]["sandbox"][-1]
        assert layer["layer"] == "processes" and layer["on"] is on, layer
        if not on:
            assert "unshare: Operation not permitted" in layer["detail"], layer
