"""``python -m bench --quick`` runs every benchmark once on tiny sizes and writes its JSON.

No assertions on times: the run must complete and the JSON must carry what a
reader needs (environment, options, and every benchmark's tables, targets and
raw numbers). The bench package lives at the repository root, which is not on
the path in CI (the project is installed), and the root's ``loader/`` folder must
not shadow the installed package; so the run happens in a scratch folder that
holds only a ``bench`` link to the repository's benchmarks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
NAMES = [
    "save_to_callable",
    "correctness",
    "initial_load",
    "reload_cost",
    "listing",
    "mcp_call",
    "call_overhead",
    "memory",
    "gate_cost",
    "isolation",
    "burst",
    "tracing_overhead",
    "sessions",
    "drain",
    "hanging_import",
    "search_quality",
]

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="the bench folder ships with the repository only")


def quick_run(farm: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One quick run of every benchmark, from ``farm``."""
    (farm / "bench").symlink_to(BENCH, target_is_directory=True)
    out = farm / "results"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(farm), env.get("PYTHONPATH", "")) if p)
    completed = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=farm,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    return completed, out


# One test for the run and everything read from it: under xdist, tests sharing a module fixture may
# land on different workers, each making the (minutes-long) run again.
@pytest.mark.timeout(450)
def test_quick_run_prints_and_writes_every_benchmark_and_draws_both_charts(tmp_path: Path) -> None:
    completed, out = quick_run(tmp_path)
    _prints_every_benchmark(completed)
    _writes_json_with_every_benchmark(completed, out)
    _draws_both_charts(out)


def _prints_every_benchmark(completed: subprocess.CompletedProcess[str]) -> None:
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    for name in NAMES:
        assert name in completed.stdout
    assert "raw numbers:" in completed.stdout


def _writes_json_with_every_benchmark(completed: subprocess.CompletedProcess[str], out: Path) -> None:
    files = sorted(out.glob("bench-*-quick.json"))
    assert len(files) == 1, completed.stdout[-2000:]
    data = json.loads(files[0].read_text())
    assert set(data) == {"commit", "environment", "options", "peers", "total_seconds", "benchmarks"}
    commit = data["commit"]
    if commit["commit"] is not None:  # an sdist without .git has no commit to name
        assert len(commit["commit"]) == 40 and isinstance(commit["dirty"], bool)
    env = data["environment"]
    assert {"date", "python", "cpu_count", "packages"} <= set(env)
    assert {"strands-agents", "fastmcp", "mcp", "tool-loader"} <= set(env["packages"])
    assert env["dont_write_bytecode"] is False
    assert data["options"] == {"quick": True, "reps": None, "only": NAMES}
    assert list(data["benchmarks"]) == NAMES
    for name, result in data["benchmarks"].items():
        assert set(result) == {"seconds", "tables", "targets", "raw"}, (name, result.get("error"))
        assert result["tables"] and all(table["rows"] for table in result["tables"]), name
        assert result["targets"], name
        for target in result["targets"]:
            assert set(target) == {"target", "figure", "passed"}


def _draws_both_charts(out: Path) -> None:
    farm = out.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(farm), env.get("PYTHONPATH", "")) if p)
    plotted = subprocess.run(
        [sys.executable, "-m", "bench", "--plot", "--out", str(out)],
        cwd=farm,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert plotted.returncode == 0, plotted.stderr[-3000:]
    for name in ("save_to_callable.png", "load_time.png"):
        png = out / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
