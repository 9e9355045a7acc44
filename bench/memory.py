"""Benchmark 7: memory across many reloads of one file.

In a fresh interpreter per system, one tool file is rewritten N times (each
version waited for until a call returns it). After a warm-up, resident memory
and ``sys.modules`` are measured before and after the N reloads (each after
``gc.collect()``), and a weak reference to every module version says how many
superseded versions are still alive at the end.

* ours: the watcher picks each save up (default ``LoaderConfig``);
* Strands: ``registry.reload_tool(stem)`` right after each write (what its
  watcher calls on a modified event, without the watcher's missed events);
* FastMCP: one ``get_tool`` per version (reload mode re-executes the module object in place).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
import weakref
from pathlib import Path
from types import ModuleType
from typing import Any

from .common import (
    SYSTEM_LABELS,
    BenchResult,
    Options,
    Table,
    Target,
    available,
    child_main,
    run_child,
    scratch_dir,
    tool_source,
)

NAME = "memory"
SYSTEMS = ("ours", "strands", "fastmcp")
GROWTH_LIMIT_MB = 2.0
WARM_UP = 20
TIMEOUT = 5.0


def _rss_mb() -> float:
    import psutil  # type: ignore[import-untyped,unused-ignore]

    return float(psutil.Process().memory_info().rss) / 2**20


def _version(index: int) -> str:
    # Alternate the size so the peers' .pyc checks (size + mtime second) never serve the previous version.
    return f"v{index:06d}" + "x" * (index % 2)


class _Driver:
    """Writes a version and returns the module object that now serves the tool."""

    def __init__(self, key: str, folder: Path) -> None:
        self.key = key
        self.path = folder / f"{key}_churn.py"
        self.path.write_text(tool_source(key, {"churn": repr(_version(0))}))
        if key == "ours":
            from loader.reload.loader import LoaderConfig, ToolLoader

            self.ours = ToolLoader([folder], config=LoaderConfig())
            self.ours.scan()
            self.ours.start()
        elif key == "strands":
            from strands.tools.registry import ToolRegistry

            os.chdir(folder.parent)
            self.strands = ToolRegistry()
            self.strands.initialize_tools(True)
        else:
            from fastmcp.server.providers import FileSystemProvider

            self.loop = asyncio.new_event_loop()
            self.fastmcp = FileSystemProvider(folder, reload=True)

    def reload(self, index: int) -> ModuleType:
        expected = _version(index)
        self.path.write_text(tool_source(self.key, {"churn": repr(expected)}))
        deadline = time.monotonic() + TIMEOUT
        while True:
            module = self._current(expected)
            if module is not None:
                return module
            time.sleep(0.0002)  # hand the GIL to the loader's threads; latency is benchmark 1's business
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.key}: version {index} not served within {TIMEOUT} s")

    def _current(self, expected: str) -> ModuleType | None:
        if self.key == "ours":
            current: Any = self.ours.registry.get("churn")
            if current is None or current.original_function() != expected:
                return None
            return sys.modules[current.original_function.__module__]
        if self.key == "strands":
            self.strands.reload_tool(self.path.stem)
            found: Any = self.strands.registry.get("churn")
            if found is None or found() != expected:
                return None
            return sys.modules[f"_strands_tool_{self.path.stem}"]
        tool: Any = self.loop.run_until_complete(self.fastmcp.get_tool("churn"))
        if tool is None or tool.fn() != expected:
            return None
        return sys.modules[tool.fn.__module__]

    def close(self) -> None:
        if self.key == "ours":
            self.ours.wait_idle(10)
            self.ours.stop()
        elif self.key == "fastmcp":
            self.loop.close()


def child(payload: dict[str, Any]) -> dict[str, Any]:
    """In a fresh interpreter: reload one file many times, report memory and live module versions."""
    key, reloads, folder = payload["system"], int(payload["reloads"]), Path(payload["folder"])
    driver = _Driver(key, folder)
    for index in range(1, WARM_UP + 1):
        driver.reload(index)
    if key == "ours":
        driver.ours.wait_idle(10)
    gc.collect()
    rss_before, modules_before = _rss_mb(), len(sys.modules)
    refs: list[weakref.ref[ModuleType]] = []
    started = time.perf_counter()
    for index in range(WARM_UP + 1, WARM_UP + reloads + 1):
        module = driver.reload(index)
        if not refs or refs[-1]() is not module:
            refs.append(weakref.ref(module))
        del module
    seconds = time.perf_counter() - started
    driver.close()
    gc.collect()
    alive = [ref for ref in refs[:-1] if ref() is not None]
    return {
        "system": key,
        "reloads": reloads,
        "seconds": seconds,
        "rss_before_mb": rss_before,
        "rss_after_mb": _rss_mb(),
        "rss_growth_mb": _rss_mb() - rss_before,
        "modules_before": modules_before,
        "modules_after": len(sys.modules),
        "module_versions": len(refs),
        "superseded_alive": len(alive),
    }


def run(options: Options) -> BenchResult:
    """Reload one file many times in a fresh interpreter per system."""
    reloads = 30 if options.quick else 1000
    raw: dict[str, Any] = {}
    for key in SYSTEMS:
        if not available(key):
            raw[key] = None
            continue
        with scratch_dir(f"memory-{key}") as base:
            folder = base / "tools"
            folder.mkdir()
            try:
                raw[key] = run_child(NAME, {"system": key, "reloads": reloads, "folder": str(folder)})
            except (RuntimeError, OSError) as exc:
                raw[key] = {"error": str(exc)}
    result = BenchResult(NAME, raw={"reloads": reloads, "warm_up": WARM_UP, "systems": raw})
    table = Table(
        f"7. memory over {reloads} reloads of one file",
        ["system", "RSS growth MB", "sys.modules before → after", "module versions", "superseded alive", "s"],
        note=(
            f"one fresh interpreter per system, one run; measured after {WARM_UP} warm-up reloads, "
            "gc.collect() before each reading; weak references to every distinct module object that served."
        ),
    )
    for key in SYSTEMS:
        data = raw[key]
        if data is None or "error" in data:
            state = "not installed" if data is None else "error"
            table.rows.append([SYSTEM_LABELS[key], state, "", "", "", ""])
            continue
        table.rows.append(
            [
                SYSTEM_LABELS[key],
                f"{data['rss_growth_mb']:.2f}",
                f"{data['modules_before']} → {data['modules_after']}",
                str(data["module_versions"]),
                str(data["superseded_alive"]),
                f"{data['seconds']:.1f}",
            ]
        )
    result.tables.append(table)
    ours = raw["ours"]
    if "error" in ours:
        result.targets.append(Target("memory over reloads", "error", False))
        return result
    result.targets.append(
        Target(
            f"<= 2 MB RSS growth over {reloads} reloads",
            f"{ours['rss_growth_mb']:.2f} MB",
            ours["rss_growth_mb"] <= GROWTH_LIMIT_MB,
        )
    )
    result.targets.append(
        Target(
            "no superseded module alive",
            f"{ours['superseded_alive']} of {ours['module_versions'] - 1}",
            ours["superseded_alive"] == 0,
        )
    )
    return result


if __name__ == "__main__":
    child_main(child)
