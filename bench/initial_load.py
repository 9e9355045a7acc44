"""Benchmark 3: loading a folder of N tool files from scratch, and the memory it takes.

Each (system, size) runs in a fresh interpreter so peak memory and import caches
stay separate. The clock starts after the system's own package is imported and
stops when every tool is served and one of them has been called:

* ours: ``ToolLoader(folder).scan()`` and ``start()``;
* Strands: ``ToolRegistry().initialize_tools(True)`` and a ``ToolWatcher``, as the Agent does;
* FastMCP: ``FileSystemProvider(folder, reload=True)`` and its first ``list_tools()``
  (which, in reload mode, imports the folder again), and ``reload=False`` (its
  production mode: one import, no watching);
* floor: every file compiled and executed with its ``@tool`` decorators, no loader
  around them (what a load cannot go below).

Each folder is loaded "cold" once (no ``__pycache__`` yet, no bytecode cache of
ours), then "warm" ``reps`` times (the peers then read the ``.pyc`` files the first
start wrote, ours the code its first scan kept in its bytecode cache, keyed by each
file's content hash; the floor compiles every time), in rounds that take every
system once, so a slow spell of a shared machine falls on all of them and not on one
system's block; the table shows the warm median and its spread (min-max).
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from pathlib import Path
from typing import Any, cast

from .common import (
    SYSTEM_LABELS,
    BenchResult,
    Options,
    Table,
    Target,
    available,
    child_main,
    fmt_ratio,
    run_child,
    scratch_dir,
    summarize,
    tool_source,
)

NAME = "initial_load"
SYSTEMS = ("ours", "floor", "strands", "fastmcp", "fastmcp_prod")
LABELS = {**SYSTEM_LABELS, "floor": "compile + exec", "fastmcp_prod": "FastMCP reload=False"}
DIALECTS = {
    "ours": "ours",
    "floor": "ours",
    "strands": "strands",
    "fastmcp": "fastmcp",
    "fastmcp_prod": "fastmcp",
}
LIMIT_1000 = 0.7
FLOOR_FACTOR = 1.5
GROWTH_10000 = 10.0
PEERS_UP_TO = 5000
"""Peers are not run on larger folders (Strands takes about 15 s at 10,000 files, per repetition)."""


def _peak_rss_mb() -> float:
    """This interpreter's peak resident memory.

    Linux's ``ru_maxrss`` survives fork and exec, so a child would report its
    parent's peak; ``VmHWM`` belongs to the process image alone.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss() -> int:
    import psutil  # type: ignore[import-untyped,unused-ignore]

    return int(psutil.Process().memory_info().rss)


def child(payload: dict[str, Any]) -> dict[str, Any]:
    """In a fresh interpreter: import the system, load the folder, report time and memory."""
    key, folder, count = payload["system"], Path(payload["folder"]), int(payload["count"])
    rss_start = _rss()
    began = time.perf_counter()
    extra: dict[str, Any] = {}
    if key == "ours":
        from loader.reload.loader import LoaderConfig, ToolLoader

        imported = time.perf_counter()
        rss_before = _rss()
        start = time.perf_counter()
        ours = ToolLoader([folder], config=LoaderConfig())
        ours.scan()
        ours.start()
        names = set(ours.registry.names())
        result = ours.registry.invoke(f"t{count - 1}", {})
        called = result["content"][0].get("text") if result.get("status") == "success" else None
        seconds = time.perf_counter() - start
        ours.close()
    elif key == "strands":
        from strands.tools.registry import ToolRegistry
        from strands.tools.watcher import ToolWatcher

        imported = time.perf_counter()
        rss_before = _rss()
        os.chdir(folder.parent)
        start = time.perf_counter()
        registry = ToolRegistry()
        registry.initialize_tools(True)
        ToolWatcher(tool_registry=registry)
        names = set(registry.registry)
        tool = registry.registry.get(f"t{count - 1}")
        called = None if tool is None else str(cast(Any, tool)())
        seconds = time.perf_counter() - start
    elif key == "floor":
        import loader  # noqa: F401  # the decorators' package, imported before the clock like the others

        imported = time.perf_counter()
        rss_before = _rss()
        start = time.perf_counter()
        namespaces = []
        for path in sorted(folder.glob("*.py")):
            namespace: dict[str, Any] = {"__name__": f"floor_{path.stem}", "__file__": str(path)}
            exec(compile(path.read_bytes(), str(path), "exec", dont_inherit=True), namespace)
            namespaces.append(namespace)
        names = {name for ns in namespaces for name in ns if name.startswith("t") and name[1:].isdigit()}
        called = namespaces[-1] and str(
            next(ns for ns in namespaces if f"t{count - 1}" in ns)[f"t{count - 1}"]()
        )
        seconds = time.perf_counter() - start
    elif key in ("fastmcp", "fastmcp_prod"):
        from fastmcp.server.providers import FileSystemProvider

        imported = time.perf_counter()
        rss_before = _rss()
        start = time.perf_counter()
        provider = FileSystemProvider(folder, reload=key == "fastmcp")
        extra["construct_s"] = time.perf_counter() - start
        tools = asyncio.run(provider.list_tools())
        names = {t.name for t in tools}
        match = [t for t in tools if t.name == f"t{count - 1}"]
        called = str(cast(Any, match[0]).fn()) if match else None
        seconds = time.perf_counter() - start
    else:
        raise ValueError(f"unknown system {key!r}")
    return {
        "system": key,
        "count": count,
        "seconds": seconds,
        "import_s": imported - began,
        "tools_served": len(names & {f"t{i}" for i in range(count)}),
        "called": called,
        "ok": called == str(count - 1) and len(names) >= count,
        "rss_start_mb": rss_start / 2**20,
        "rss_before_mb": rss_before / 2**20,
        "rss_after_mb": _rss() / 2**20,
        "peak_rss_mb": _peak_rss_mb(),
        **extra,
    }


def _make_folder(base: Path, key: str, count: int) -> Path:
    folder = base / key / "tools"
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"{key}_t{i}.py").write_text(tool_source(DIALECTS[key], {f"t{i}": repr(str(i))}))
    return folder


def warm_seconds(data: dict[str, Any]) -> list[float]:
    """The warm repetitions' load times (the cold one when there are none)."""
    warm = data.get("warm") or []
    if isinstance(warm, dict):  # results written before repetitions existed
        warm = [warm]
    return [w["seconds"] for w in warm] or [data["cold"]["seconds"]]


def _cell(data: dict[str, Any] | None) -> list[str]:
    if data is None:
        return ["not run", "", "", "", ""]
    if "error" in data:
        return ["error", "", "", "", ""]
    flag = "" if data["ok"] else " (incomplete)"
    warm = summarize(warm_seconds(data))
    return [
        f"{data['cold']['seconds']:.3f}{flag}",
        f"{warm['p50']:.3f}",
        f"{warm['min']:.3f}-{warm['max']:.3f} (n={warm['n']})",
        f"{data['cold']['peak_rss_mb']:.0f}",
        f"{data['cold']['rss_after_mb'] - data['cold']['rss_before_mb']:.0f}",
    ]


def run(options: Options) -> BenchResult:
    """Load folders of each size in fresh interpreters, cold once then warm ``reps`` times."""
    sizes = [10, 50] if options.quick else [10, 100, 1000, 5000, 10000]
    reps = options.count(5, 0)  # a quick run loads each folder once
    result = BenchResult(NAME)
    raw: dict[str, Any] = {}
    for count in sizes:
        raw[str(count)] = {}
        with scratch_dir(f"initial{count}") as base:
            payloads: dict[str, dict[str, Any]] = {}
            for key in SYSTEMS:
                peer = key not in ("ours", "floor")
                if not available(key.removesuffix("_prod")) or (peer and count > PEERS_UP_TO):
                    raw[str(count)][key] = None
                    continue
                folder = _make_folder(base, key, count)
                payloads[key] = {"system": key, "folder": str(folder), "count": count}
            # Cold loads first, then the warm repetitions in rounds (every system once per round),
            # so a slow spell of the machine lands on all systems alike, not on one system's block.
            runs: dict[str, list[dict[str, Any]]] = {key: [] for key in payloads}
            for _ in range(1 + reps):
                for key, payload in payloads.items():
                    if key in runs:
                        try:
                            runs[key].append(run_child(NAME, payload))
                        except (RuntimeError, OSError) as exc:
                            raw[str(count)][key] = {"error": str(exc), "ok": False}
                            del runs[key]
            for key, done in runs.items():
                cold, warm = done[0], done[1:]
                ok = cold["ok"] and all(w["ok"] for w in warm)
                raw[str(count)][key] = {"cold": cold, "warm": warm, "ok": ok}
    result.raw = {"sizes": sizes, "reps": reps, "results": raw}

    table = Table(
        "3. initial load: seconds until every tool is callable; memory (MB)",
        [
            "files / system",
            "cold s",
            "warm s (median)",
            "warm spread",
            "peak RSS",
            "RSS growth",
            "ours / this",
        ],
        note=(
            f"one fresh interpreter per load: cold once (no __pycache__, no bytecode cache of ours), "
            f"then warm {reps} times (peers read their __pycache__, ours its bytecode cache, keyed by "
            "content hash; the floor compiles every time), in rounds taking every system once; "
            "clock starts after the package import; peak RSS = VmHWM of the whole interpreter, "
            "RSS growth = during the load. FastMCP reload=True includes its first list_tools (which "
            f"imports again); peers are not run above {PEERS_UP_TO:,} files. ours / this = warm medians."
        ),
    )
    for count in sizes:
        ours = raw[str(count)]["ours"]
        for key in SYSTEMS:
            data = raw[str(count)][key]
            ratio = ""
            if key != "ours" and data is not None and "error" not in data and "error" not in ours:
                ratio = fmt_ratio(_median(ours), _median(data))
            table.rows.append([f"{count} / {LABELS[key]}", *_cell(data), ratio])
    result.tables.append(table)
    _targets(result, raw)
    return result


def _median(data: dict[str, Any]) -> float:
    return float(summarize(warm_seconds(data))["p50"] or 0.0)


def _targets(result: BenchResult, raw: dict[str, Any]) -> None:
    thousand = raw.get("1000")
    if thousand is None or "error" in thousand["ours"]:
        figure = "not measured (quick run)" if thousand is None else "error"
        for target in (
            "1,000 files <= 0.7 s",
            "1,000 files <= 1.5x compile + exec",
            "no slower than Strands",
        ):
            result.targets.append(Target(target, figure, None if thousand is None else False))
        return
    ours_s = _median(thousand["ours"])
    result.targets.append(
        Target("1,000 files <= 0.7 s (warm median)", f"{ours_s:.3f} s", ours_s <= LIMIT_1000)
    )
    floor = thousand.get("floor")
    if floor and "error" not in floor:
        factor = ours_s / _median(floor)
        result.targets.append(
            Target(
                "1,000 files <= 1.5x compile + exec of the same files (same run)",
                f"{ours_s:.3f} vs {_median(floor):.3f} s ({factor:.2f}x)",
                factor <= FLOOR_FACTOR,
            )
        )
    big = raw.get("10000")
    if big and big["ours"] and "error" not in big["ours"]:
        growth = _median(big["ours"]) / ours_s
        result.targets.append(
            Target(
                "10,000 files <= 10x the 1,000-file time",
                f"{_median(big['ours']):.2f} vs {ours_s:.3f} s ({growth:.1f}x)",
                growth <= GROWTH_10000,
            )
        )
    strands = thousand.get("strands")
    if strands is None or "error" in strands:
        result.targets.append(Target("1,000 files no slower than Strands", "Strands not installed", None))
    else:
        for phase, mine, theirs in (
            ("cold", thousand["ours"]["cold"]["seconds"], strands["cold"]["seconds"]),
            ("warm median", ours_s, _median(strands)),
        ):
            result.targets.append(
                Target(
                    f"1,000 files no slower than Strands ({phase})",
                    f"{mine:.3f} vs {theirs:.3f} s",
                    mine <= theirs,
                )
            )


if __name__ == "__main__":
    child_main(child)
