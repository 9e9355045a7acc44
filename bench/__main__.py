"""``python -m bench``: run the benchmarks, print their tables, write the raw numbers as JSON.

Options:
    --quick       tiny sizes and few repetitions (a smoke run; its numbers are not comparable)
    --only NAME   run only this benchmark (repeatable, or comma-separated)
    --reps N      repetitions where a benchmark repeats (saves, edits, listings, call batches)
    --out DIR     where the JSON goes (default: bench/results next to this file)
    --plot        draw the charts (PNG, into --out) from the newest results there, without running;
                  a full run's file is preferred over quick ones (needs matplotlib: the bench extra)
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from . import BENCHMARKS
from .common import (
    BenchResult,
    Options,
    available,
    environment,
    git_state,
    prepare_process,
    print_result,
    write_json,
)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Run the benchmarks, print their tables, write the raw numbers as JSON.",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few repetitions")
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help=f"one of: {', '.join(BENCHMARKS)}"
    )
    parser.add_argument("--reps", type=int, default=None, metavar="N", help="repetitions where they apply")
    parser.add_argument("--plot", action="store_true", help="draw charts from the newest results; no run")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results",
        metavar="DIR",
        help="where the JSON goes (default: bench/results)",
    )
    args = parser.parse_args(argv)
    only = [name.strip() for item in args.only for name in item.split(",") if name.strip()]
    unknown = [name for name in only if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    args.only = only
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the selected benchmarks; exit status 1 if one of them crashed."""
    args = _parse(argv)
    if args.plot:
        return _plot(args.out)
    prepare_process()
    from rich.console import Console

    console = Console(width=max(Console().width, 120))
    options = Options(quick=args.quick, reps=args.reps)
    selected = [name for name in BENCHMARKS if not args.only or name in args.only]
    env = environment()
    peers = {peer: ("installed" if available(peer) else "not installed") for peer in ("strands", "fastmcp")}
    console.print(
        f"[bold]tool-loader benchmarks[/bold] python {env['python']}, {env['cpu_count']} CPUs, "
        f"{'quick' if args.quick else 'full'} run; peers: " + ", ".join(f"{k} {v}" for k, v in peers.items())
    )
    results: dict[str, Any] = {}
    failed = False
    started = time.perf_counter()
    for name in selected:
        module = importlib.import_module(f"bench.{name}")
        console.rule(name)
        began = time.perf_counter()
        try:
            result: BenchResult = module.run(options)
        except Exception as exc:
            failed = True
            console.print(f"[red]{name} failed: {type(exc).__name__}: {exc}[/red]")
            results[name] = {"error": traceback.format_exc()}
            continue
        result.seconds = time.perf_counter() - began
        print_result(result, console)
        results[name] = result.as_json()
    payload = {
        "commit": git_state(),
        "environment": env,
        "options": {"quick": args.quick, "reps": args.reps, "only": selected},
        "peers": peers,
        "total_seconds": time.perf_counter() - started,
        "benchmarks": results,
    }
    path = write_json(args.out, payload, quick=args.quick, partial=bool(args.only))
    misses = [
        (name, t["target"])
        for name, data in results.items()
        for t in data.get("targets", [])
        if t["passed"] is False
    ]
    console.print(f"raw numbers: {path}")
    console.print(f"total {payload['total_seconds']:.1f} s; {len(misses)} target(s) missed")
    for name, target in misses:
        console.print(f"  [red]MISS[/red] {name}: {target}")
    return 1 if failed else 0


def _plot(directory: Path) -> int:
    """Draw the charts from the newest full results in ``directory`` (else the newest quick ones)."""
    from .plot import plot
    from .readme import newest_results

    results = newest_results(directory) or max(directory.glob("bench-*.json"), default=None)
    if results is None:
        print(f"no results in {directory}; run python -m bench first", file=sys.stderr)
        return 1
    for path in plot(results, directory):
        print(f"wrote {path} from {results.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
