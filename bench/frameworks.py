"""Benchmark: from a save until an agent's next step is offered the new version, per agent framework.

Each framework's agent (built once, as its adapter is meant to be used) runs
with the fake model of the test suite (``tests/agent_drivers/<framework>_driver.py``,
which is why this benchmark needs the ``test`` extra): a scripted model that
calls one tool at every step, back to back, with no model latency. A run's
first step saves a new version of that tool's file (open, write, close); the
latency is the time from the start of that write until a step is offered the
new version (the description names it). Steps keep coming while the save
travels, so the figure is the loader's reload plus what the adapter and the
framework add, at most one step late. The registry column is the time until
the registry committed the new version (a ``subscribe`` listener), the floor
every adapter shares. Every call is also checked against the version its step
offered (0 mixed calls expected).

The loader uses the default ``LoaderConfig`` (what users get). A save not
offered within ``TIMEOUT`` seconds counts as never.

It runs on its own, not with ``python -m bench`` (whose quick run and README
block cover the loader itself): ``python -m bench.frameworks [--quick]
[--reps N] [--out DIR]`` prints the table and writes the raw numbers as
``frameworks-<UTC time>[-quick].json`` (default folder ``bench/results``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import importlib.metadata
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from .common import (
    BenchResult,
    Options,
    Table,
    environment,
    fmt_ms,
    git_state,
    prepare_process,
    print_result,
    save_in_place,
    scratch_dir,
    summarize,
)

NAME = "frameworks"
TIMEOUT = 5.0
"""Seconds a save may take to reach a step before it counts as never."""

TESTS = Path(__file__).resolve().parent.parent / "tests"

FRAMEWORKS: dict[str, tuple[str, str, str]] = {
    "langchain": (
        "LangChain v1 (create_agent + LiveToolsMiddleware)",
        "agent_drivers.langchain_driver",
        "LangChainDriver",
    ),
    "openai_agents": (
        "OpenAI Agents SDK (LiveAgent)",
        "agent_drivers.openai_agents_driver",
        "OpenAIAgentsDriver",
    ),
    "pydantic_ai": ("pydantic-ai (LiveToolset)", "agent_drivers.pydantic_ai_driver", "PydanticAIDriver"),
    "google_adk": ("Google ADK (LiveToolset)", "agent_drivers.google_adk_driver", "GoogleADKDriver"),
    "llama_index": (
        "LlamaIndex (FunctionAgent + LiveToolRetriever)",
        "agent_drivers.llama_index_driver",
        "LlamaIndexDriver",
    ),
    "smolagents": ("smolagents (LiveTools.attach)", "agent_drivers.smolagents_driver", "SmolagentsDriver"),
}
"""Adapter key -> (label, the test module holding its driver, the driver class)."""

_DISTRIBUTIONS = (
    "langchain",
    "langchain-core",
    "langgraph",
    "openai-agents",
    "pydantic-ai-slim",
    "google-adk",
    "llama-index-core",
    "smolagents",
)
"""The framework distributions whose versions go into the raw numbers."""

_PACKAGES = {
    "langchain": "langchain",
    "openai_agents": "agents",
    "pydantic_ai": "pydantic_ai",
    "google_adk": "google.adk",
    "llama_index": "llama_index.core",
    "smolagents": "smolagents",
}


class _SavePlan:
    """A brain plan: step 0 saves the next version; later steps wait for an offer of it, then stop."""

    def __init__(self, path: Path, version: int, helpers: Any) -> None:
        self.path = path
        self.version = version
        self.helpers = helpers
        self.saved_at = 0.0
        self.seen_after: float | None = None
        self.steps_to_see = 0
        self.step_times: list[float] = []

    def __call__(self, brain: Any, step: Any) -> list[tuple[str, dict[str, Any]]]:
        now = time.perf_counter()
        self.step_times.append(now)
        if step.index == 0:
            self.saved_at = time.perf_counter()
            save_in_place(self.path, self.helpers.versioned_tool("ver", self.version))
            return [("ver", {"who": "bench"})]
        if self.helpers.offered_version(step.offered["ver"]) == self.version:
            self.seen_after = now - self.saved_at
            self.steps_to_see = step.index
            return []
        if now - self.saved_at > TIMEOUT:
            return []
        return [("ver", {"who": "bench"})]


def _import_drivers() -> Any:
    """The test suite's helpers (its fakes live there): ``tests`` on the path."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    return importlib.import_module("live_agents")


def _measure(key: str, saves: int, helpers: Any) -> dict[str, Any]:
    from loader.reload.loader import LoaderConfig, ToolLoader

    driver_class = getattr(importlib.import_module(FRAMEWORKS[key][1]), FRAMEWORKS[key][2])
    latencies: list[float] = []
    committed: list[float] = []
    steps_to_see: list[int] = []
    step_gaps: list[float] = []
    never = 0
    mixed = 0
    with scratch_dir(f"frameworks-{key}") as base:
        folder = base / "tools"
        folder.mkdir()
        path = folder / "ver.py"
        path.write_text(helpers.versioned_tool("ver", 0))
        loader = ToolLoader([folder], config=LoaderConfig())
        loader.scan()
        loader.start()
        commits: dict[int, float] = {}

        def on_change(change_set: Any) -> None:
            now = time.perf_counter()
            for change in change_set.changes:
                if change.tool is not None and change.name == "ver":
                    commits[helpers.offered_version(change.tool.tool_spec["description"])] = now

        unsubscribe = loader.registry.subscribe(on_change)
        try:
            driver = driver_class(loader)
            for version in range(1, saves + 1):
                loader.wait_idle(TIMEOUT)
                plan = _SavePlan(path, version, helpers)
                brain = helpers.Brain(plan)
                driver.run(brain, max_steps=100_000)
                mixed += len(helpers.mixed_calls(brain))
                step_gaps += [b - a for a, b in zip(plan.step_times, plan.step_times[1:], strict=False)]
                if plan.seen_after is None:
                    never += 1
                    continue
                latencies.append(plan.seen_after)
                steps_to_see.append(plan.steps_to_see)
                if version in commits:
                    committed.append(commits[version] - plan.saved_at)
        finally:
            unsubscribe()
            loader.close()
    return {
        "saves": saves,
        "never": never,
        "mixed_calls": mixed,
        "latency_s": latencies,
        "summary_s": summarize(latencies),
        "registry_s": summarize(committed),
        "step_s": summarize(step_gaps),
        "steps_to_see": summarize([float(n) for n in steps_to_see]),
    }


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in _DISTRIBUTIONS:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def _installed(key: str) -> bool:
    try:
        return importlib.util.find_spec(_PACKAGES[key]) is not None
    except ModuleNotFoundError:
        return False


def run(options: Options) -> BenchResult:
    """Measure save -> next step for every installed framework."""
    saves = options.count(30, 5)
    helpers = _import_drivers()
    result = BenchResult(NAME)
    data: dict[str, Any] = {}
    for key in FRAMEWORKS:
        data[key] = _measure(key, saves, helpers) if _installed(key) else None
    result.raw = {"saves": saves, "timeout_s": TIMEOUT, "versions": _versions(), "frameworks": data}
    table = Table(
        "save to the next step that offers it (ms)",
        ["framework", "p50", "p90", "max", "registry p50", "step p50", "steps", "seen", "mixed calls"],
        note=(
            f"{saves} saves per framework, default LoaderConfig, one in-place save per agent run; latency "
            "from the start of the write until a step's tool list offers the new version, the agent "
            "stepping back to back with a scripted model (no model latency). registry: until the "
            "registry committed it (the floor every adapter shares). step: median time between two "
            "model calls. steps: median steps from the saving step to the one offering the save. "
            f"seen: saves offered within {TIMEOUT:g} s. mixed calls: calls answered by another version "
            "than their step offered."
        ),
    )
    for key, entry in data.items():
        label = FRAMEWORKS[key][0]
        if entry is None:
            table.rows.append([label, "not installed", "", "", "", "", "", "", ""])
            continue
        summary = entry["summary_s"]
        table.rows.append(
            [
                label,
                fmt_ms(summary["p50"]),
                fmt_ms(summary["p90"]),
                fmt_ms(summary["max"]),
                fmt_ms(entry["registry_s"]["p50"]),
                fmt_ms(entry["step_s"]["p50"]),
                f"{entry['steps_to_see']['p50']:.0f}" if entry["steps_to_see"]["n"] else "-",
                f"{entry['saves'] - entry['never']}/{entry['saves']}",
                str(entry["mixed_calls"]),
            ]
        )
    result.tables.append(table)
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print its table, write the raw numbers as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.frameworks", description="Save to the next agent step, per framework."
    )
    parser.add_argument("--quick", action="store_true", help="5 saves per framework instead of 30")
    parser.add_argument("--reps", type=int, default=None, metavar="N", help="saves per framework")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results", metavar="DIR")
    args = parser.parse_args(argv)
    prepare_process()
    from rich.console import Console

    console = Console(width=max(Console().width, 120))
    began = time.perf_counter()
    result = run(Options(quick=args.quick, reps=args.reps))
    result.seconds = time.perf_counter() - began
    print_result(result, console)
    payload = {
        "commit": git_state(),
        "environment": environment(),
        "options": {"quick": args.quick, "reps": args.reps},
        "benchmarks": {NAME: result.as_json()},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.out / f"frameworks-{stamp}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    console.print(f"raw numbers: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
