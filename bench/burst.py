"""Benchmark 8: a ``git checkout`` of another branch, many files replaced at once.

A folder of ``N`` tool files is loaded and watched; then every file is replaced
the way git does on checkout (unlink, create, write, close; about four kernel
events per file), as fast as the disk allows. We wait until every tool answers
with its new version and report:

* how long until all ``N`` tools were served in their new version;
* module executions (the target is exactly one per file: no file skipped, none
  run twice);
* whether the kernel's inotify queue overflowed (``IN_Q_OVERFLOW``; watchdog drops
  that record silently, the loader hears it in the raw buffers, see
  ``loader.reload.overflow``) and how the loader recovered: the loader's batches,
  and how many full passes its safety-net rescanner ran because it found changes
  no event had announced;
* how many files were lost: still answering their old version once the loader
  is idle (the target is none).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .common import (
    BenchResult,
    Options,
    OursSystem,
    Table,
    Target,
    scratch_dir,
    tool_source,
)

NAME = "burst"
TIMEOUT = 120.0


def _checkout(folder: Path, count: int, version: str) -> None:
    """Replace every file as git's checkout does: unlink, then create and write the new blob."""
    for i in range(count):
        path = folder / f"b{i}.py"
        path.unlink()
        with open(path, "x") as handle:
            handle.write(tool_source("ours", {f"b{i}": repr(f"{version}{i}")}))


def _measure(count: int) -> dict[str, Any]:
    from loader.reload.overflow import overflows_seen, records_read

    system = OursSystem()
    try:
        with scratch_dir(f"burst{count}") as base:
            folder = base / "tools"
            folder.mkdir()
            for i in range(count):
                (folder / f"b{i}.py").write_text(tool_source("ours", {f"b{i}": repr(f"main{i}")}))
            started = time.perf_counter()
            system.start(folder)
            load_s = time.perf_counter() - started
            loader = system.loader
            loader.wait_idle(60.0)
            registry = loader.registry
            old = {name: registry.get(name) for name in registry.names()}
            assert len(old) == count, f"loaded {len(old)} of {count} tools"
            applies: list[float] = []
            scheduler = loader._scheduler
            inner = scheduler._apply

            def timed_apply(paths: set[Path]) -> None:
                began = time.perf_counter()
                try:
                    inner(paths)
                finally:
                    applies.append(time.perf_counter() - began)

            scheduler._apply = timed_apply
            executions = loader.module_executions
            overflows, events = overflows_seen(), records_read()
            started = time.perf_counter()
            _checkout(folder, count, "feature")
            written_s = time.perf_counter() - started
            served_s = None
            while time.perf_counter() - started < TIMEOUT:
                snapshot = registry.snapshot()
                if all(snapshot.get(name) is not tool for name, tool in old.items()):
                    served_s = time.perf_counter() - started
                    break
                time.sleep(0.02)
            loader.wait_idle(30.0)
            lost = [
                f"b{i}"
                for i in range(count)
                if (registry.invoke(f"b{i}", {}).get("content") or [{}])[0].get("text") != f"feature{i}"
            ]
            rescanner = loader._reconciler._rescanner  # private: the benchmark reports its internals
            return {
                "files": count,
                "load_s": load_s,
                "written_s": written_s,
                "served_s": served_s,
                "executions": loader.module_executions - executions,
                "lost": len(lost),
                "lost_sample": lost[:10],
                "kernel_events": records_read() - events,
                "overflows": overflows_seen() - overflows,
                "batches": len(applies),
                "batch_s": applies,
                "rescan_recoveries": rescanner.recoveries,
                "rescan_last_pass": {
                    "full": rescanner.last.full,
                    "stats": rescanner.last.stats,
                    "seconds": rescanner.last.seconds,
                },
            }
    finally:
        system.close()


def run(options: Options) -> BenchResult:
    """Replace a whole folder of files at once and wait until every tool serves its new version."""
    count = 200 if options.quick else 10_000
    data = _measure(count)
    result = BenchResult(NAME, raw=data)
    served = data["served_s"]
    if data["overflows"]:
        recovered = (
            f"a reconcile by content after the overflow, and the rescanner "
            f"({data['rescan_recoveries']} full pass(es) on changes without events)"
        )
    else:
        recovered = "events alone (nothing was lost)"
        if data["rescan_recoveries"]:
            recovered += f"; {data['rescan_recoveries']} needless full rescan(s) while events were queued"
    table = Table(
        f"8. a git checkout: {count:,} files replaced at once",
        [
            "files",
            "written in s",
            "all served after s",
            "executions",
            "lost once idle",
            "kernel events",
            "queue overflowed",
            "batches",
            "recovered by",
        ],
        note=(
            "each file unlinked, created and written (as git checkout does); 'all served' = every tool "
            "object replaced; lost = tools still answering their old text once the loader is idle; kernel "
            "events = raw inotify records the observer read (an overflow drops the rest; watchdog ignores "
            "the overflow record, the loader hears it and reconciles every folder by content); recovered "
            "by = how files whose events were lost were found."
        ),
    )
    table.rows.append(
        [
            f"{count:,}",
            f"{data['written_s']:.2f}",
            "never" if served is None else f"{served:.2f}",
            f"{data['executions']:,}",
            f"{data['lost']:,}",
            f"{data['kernel_events']:,}",
            f"yes ({data['overflows']})" if data["overflows"] else "no",
            f"{data['batches']:,}",
            recovered,
        ]
    )
    result.tables.append(table)
    result.targets.append(
        Target(
            f"{count:,}-file burst fully served, one execution per file",
            f"{count - data['lost']:,}/{count:,} served, {data['lost']:,} lost, "
            f"{data['executions']:,} executions" + ("" if served is None else f", in {served:.1f} s"),
            data["lost"] == 0 and data["executions"] == count and served is not None,
        )
    )
    return result
