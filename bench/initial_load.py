"""Benchmark 3: loading a folder of N tool files from scratch, and the memory it takes.

Each (system, size) runs in a fresh interpreter so peak memory and import caches
stay separate. The clock starts after the system's own package is imported and
stops when every tool is served and one of them has been called:

* ours: ``ToolLoader(folder).scan()`` and ``start()``;
* Strands: ``ToolRegistry().initialize_tools(True)`` and a ``ToolWatcher``, as the Agent does;
* FastMCP: ``FileSystemProvider(folder, reload=True)`` and its first ``list_tools()``
  (which, in reload mode, imports the folder again).

Each folder (up to 1,000 files) is loaded twice: "cold" (no ``__pycache__`` yet) and "warm" (a second
start; the peers then read the ``.pyc`` files the first start wrote, ours always
compiles from source).
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
    tool_source,
)

NAME = "initial_load"
SYSTEMS = ("ours", "strands", "fastmcp")
LIMIT_1000 = 0.7
WARM_UP_TO = 1000
"""Larger folders are loaded cold only, to keep the whole run within a few minutes."""


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
    elif key == "fastmcp":
        from fastmcp.server.providers import FileSystemProvider

        imported = time.perf_counter()
        rss_before = _rss()
        start = time.perf_counter()
        provider = FileSystemProvider(folder, reload=True)
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
        (folder / f"{key}_t{i}.py").write_text(tool_source(key, {f"t{i}": repr(str(i))}))
    return folder


def _cell(data: dict[str, Any] | None) -> list[str]:
    if data is None:
        return ["not installed", "", "", ""]
    if "error" in data:
        return ["error", "", "", ""]
    flag = "" if data["ok"] else " (incomplete)"
    return [
        f"{data['cold']['seconds']:.3f}{flag}",
        "-" if data["warm"] is None else f"{data['warm']['seconds']:.3f}",
        f"{data['cold']['peak_rss_mb']:.0f}",
        f"{data['cold']['rss_after_mb'] - data['cold']['rss_before_mb']:.0f}",
    ]


def run(options: Options) -> BenchResult:
    """Load folders of each size in fresh interpreters, cold then warm."""
    sizes = [10, 50] if options.quick else [10, 100, 1000, 5000]
    result = BenchResult(NAME)
    raw: dict[str, Any] = {}
    for count in sizes:
        raw[str(count)] = {}
        with scratch_dir(f"initial{count}") as base:
            for key in SYSTEMS:
                if not available(key):
                    raw[str(count)][key] = None
                    continue
                folder = _make_folder(base, key, count)
                payload = {"system": key, "folder": str(folder), "count": count}
                try:
                    cold = run_child(NAME, payload)
                    warm = run_child(NAME, payload) if count <= WARM_UP_TO else None
                except (RuntimeError, OSError) as exc:
                    raw[str(count)][key] = {"error": str(exc), "ok": False}
                    continue
                ok = cold["ok"] and (warm is None or warm["ok"])
                raw[str(count)][key] = {"cold": cold, "warm": warm, "ok": ok}
    result.raw = {"sizes": sizes, "results": raw}

    table = Table(
        "3. initial load: seconds until every tool is callable; memory (MB)",
        ["files / system", "cold s", "warm s", "peak RSS", "RSS growth", "ours cold / peer cold"],
        note=(
            f"one fresh interpreter per cell (one run each, cold = no __pycache__, warm = second start, "
            f"up to {WARM_UP_TO} files); "
            "clock starts after the package import; peak RSS = VmHWM of the whole interpreter, "
            "RSS growth = during the load. FastMCP's time includes its first list_tools (reload mode "
            "imports again)."
        ),
    )
    for count in sizes:
        ours = raw[str(count)]["ours"]
        for key in SYSTEMS:
            data = raw[str(count)][key]
            ratio = ""
            if key != "ours" and data is not None and "error" not in data and "error" not in ours:
                ratio = fmt_ratio(ours["cold"]["seconds"], data["cold"]["seconds"])
            table.rows.append([f"{count} / {SYSTEM_LABELS[key]}", *_cell(data), ratio])
    result.tables.append(table)

    thousand = raw.get("1000")
    if thousand is None:
        result.targets.append(Target("1,000 files <= 0.7 s", "not measured (quick run)", None))
        result.targets.append(Target("1,000 files no slower than Strands", "not measured (quick run)", None))
        return result
    if "error" in thousand["ours"]:
        result.targets.append(Target("1,000 files <= 0.7 s", "error", False))
        return result
    ours_s = thousand["ours"]["cold"]["seconds"]
    passed = thousand["ours"]["ok"] and ours_s <= LIMIT_1000
    result.targets.append(Target("1,000 files <= 0.7 s (cold)", f"{ours_s:.3f} s", passed))
    strands = thousand.get("strands")
    if strands is None or "error" in strands:
        result.targets.append(Target("1,000 files no slower than Strands", "Strands not installed", None))
    else:
        for phase in ("cold", "warm"):
            mine, theirs = thousand["ours"][phase]["seconds"], strands[phase]["seconds"]
            result.targets.append(
                Target(
                    f"1,000 files no slower than Strands ({phase})",
                    f"{mine:.3f} vs {theirs:.3f} s",
                    mine <= theirs,
                )
            )
    return result


if __name__ == "__main__":
    child_main(child)
