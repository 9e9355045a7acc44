"""``/healthz`` and ``/readyz`` of a real ``serve`` when the tools folder is odd or a loader thread dies.

A 1,500-level folder chain used to kill the first scan's thread (``/readyz``
503 for good while ``/healthz`` said 200: never restarted). Now the chain is
skipped with a warning; and a loader thread that dies anyway (injected here
through ``sitecustomize``, as a plugin calling ``sys.exit()`` would) fails
``/healthz`` so that an orchestrator restarts the replica.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from fs_layouts import deep_chain
from serving import DEADLINE, GREET, get, serve_http, server_env
from support import eventually, run_cli, write

DEPTH = 1500


def test_a_deep_chain_at_start_leaves_the_replica_ready_and_healthy(tools_dir: Path, tmp_path: Path) -> None:
    write(tools_dir / "greet.py", GREET)
    with deep_chain(tools_dir / "deep", DEPTH):
        with serve_http(tools_dir, tmp_path, wait_ready=True) as served:
            ready = get(served.base + "/readyz")
            assert ready.status == 200 and ready.json()["tools"] == 1, ready.body
            assert get(served.base + "/healthz").status == 200
        assert any("deeper than" in line and str(tools_dir / "deep") in line for line in served.lines)
        listed = run_cli("list", str(tools_dir), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "greet" in listed.stdout
    assert "Traceback" not in listed.stderr and "RecursionError" not in listed.stderr


INJECT = """
from loader.reload import rescan

class InjectedFault(BaseException):
    pass

_step = rescan.Rescanner.step
_calls = {"n": 0}

def step(self):
    _calls["n"] += 1
    if _calls["n"] == 3:
        raise InjectedFault("the rescanner's thread was made to die")
    _step(self)

rescan.Rescanner.step = step
"""


def test_a_loader_thread_that_dies_fails_healthz_and_is_logged(tools_dir: Path, tmp_path: Path) -> None:
    write(tools_dir / "greet.py", GREET)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(INJECT))
    env = server_env(PYTHONPATH=str(site))
    with serve_http(tools_dir, tmp_path, env=env, wait_ready=True) as served:
        health = eventually(
            lambda: (answer := get(served.base + "/healthz", timeout=5)).status == 503 and answer,
            timeout=DEADLINE,
            message="/healthz never noticed the dead thread",
        )
        body = health.json()
        assert body["alive"] is False
        assert body["dead_threads"] == [
            "thread tool-loader-rescan died: InjectedFault: the rescanner's thread was made to die"
        ]
    assert any("a loader thread died" in line for line in served.lines), served.lines
    assert any("InjectedFault" in line for line in served.lines)
