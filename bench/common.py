"""What every benchmark shares: options, statistics, the systems under test, tables and JSON.

The three systems load the same folder layout, each in its own dialect
(``from loader import tool``, ``from strands import tool``, ``from fastmcp.tools import tool``):

* ours: ``ToolLoader`` with the default ``LoaderConfig`` (what users get);
* Strands: its ``ToolRegistry`` and ``ToolWatcher`` wired exactly as
  ``Agent(load_tools_from_directory=True)`` does (``initialize_tools(True)``, then
  a ``ToolWatcher``), which only looks at ``./tools`` of the working directory;
* FastMCP: ``FileSystemProvider(folder, reload=True)``, which re-imports every file on
  each request.

A peer that is not installed is reported as "not installed", never an error.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import datetime as _dt
import importlib.metadata
import importlib.util
import json
import logging
import math
import os
import platform
import shutil
import site
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "PEERS",
    "SAVE_STYLES",
    "SYSTEM_LABELS",
    "BenchResult",
    "FastMCPSystem",
    "FloorSystem",
    "Options",
    "OursSystem",
    "StrandsSystem",
    "System",
    "Table",
    "Target",
    "aper_call",
    "aper_call_alternating",
    "available",
    "background_load",
    "child_main",
    "environment",
    "fmt_ms",
    "fmt_ratio",
    "fmt_us",
    "install_probe",
    "make_system",
    "per_call",
    "prepare_process",
    "print_result",
    "probe_count",
    "run_child",
    "save_atomic",
    "save_in_place",
    "save_truncate_then_write",
    "scratch_dir",
    "summarize",
    "time_until",
    "tool_source",
    "write_json",
]

logger = logging.getLogger(__name__)

PEERS = ("strands", "fastmcp")
"""Peer systems, by key."""

SYSTEM_LABELS = {"ours": "ours", "strands": "Strands", "fastmcp": "FastMCP", "floor": "floor"}

_PEER_MODULES = {
    "strands": ("strands", "strands.tools.watcher"),
    "fastmcp": ("fastmcp", "fastmcp.server.providers.filesystem"),
}

_DIALECT_IMPORTS = {
    "ours": "from loader import tool",
    "strands": "from strands import tool",
    "fastmcp": "from fastmcp.tools import tool",
}

PROBE_MODULE = "bench_probe"
"""A module the tool files import to count their own executions (works for every system)."""


# -- process ---------------------------------------------------------------------------------------


def prepare_process() -> None:
    """Make this process behave like a user's: bytecode writing on, quiet loggers.

    The development machine sets PYTHONDONTWRITEBYTECODE; users' machines do not,
    and stale-bytecode effects only show with writing on.
    """
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("FASTMCP_LOG_ENABLED", "false")
    if "TOOL_LOADER_CACHE_DIR" not in os.environ:
        # The loader's bytecode cache for this run only (its children inherit it): a first load is
        # cold whatever ran before, and nothing is left in the user's cache folder.
        cache = tempfile.mkdtemp(prefix="bench-bytecode-")
        os.environ["TOOL_LOADER_CACHE_DIR"] = cache
        atexit.register(shutil.rmtree, cache, ignore_errors=True)
    logging.getLogger().addHandler(logging.NullHandler())
    for name in ("loader", "strands", "fastmcp", "watchdog", "mcp", "httpx"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def available(system: str) -> bool:
    """Whether a system's package, recent enough to have what we drive, is importable (ours always is).

    FastMCP's ``FileSystemProvider`` arrived in FastMCP 3.
    """
    package, module = _PEER_MODULES.get(system, (None, None))
    if package is None or module is None:
        return True
    try:
        return importlib.util.find_spec(package) is not None and importlib.util.find_spec(module) is not None
    except ImportError:
        return False


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary folder for tool files, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=f"bench-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- options and statistics ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    """Command-line options every benchmark reads."""

    quick: bool = False
    reps: int | None = None

    def count(self, full: int, quick: int) -> int:
        """``--reps`` if given, else the full or the quick default."""
        if self.reps is not None:
            return max(1, self.reps)
        return quick if self.quick else full


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize(values: Sequence[float]) -> dict[str, float | int | None]:
    """n, median, p90, p99, min, max and mean of some samples (None entries when empty)."""
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "p50": None, "p90": None, "p99": None, "min": None, "max": None, "mean": None}
    return {
        "n": len(ordered),
        "p50": _quantile(ordered, 0.5),
        "p90": _quantile(ordered, 0.9),
        "p99": _quantile(ordered, 0.99),
        "min": ordered[0],
        "max": ordered[-1],
        "mean": sum(ordered) / len(ordered),
    }


def time_until(
    predicate: Callable[[], bool], start: float, timeout: float, *, yield_gil: bool = False
) -> float | None:
    """Seconds from ``start`` (a ``perf_counter`` reading) until ``predicate()`` holds; None on timeout.

    Polls in a tight loop on the calling thread. A tight loop holds the GIL, so
    the threads doing the work get it only at forced switches (every 5 ms);
    ``yield_gil`` sleeps for zero seconds between polls, which hands it over.
    """
    deadline = start + timeout
    while True:
        if predicate():
            return time.perf_counter() - start
        if time.perf_counter() > deadline:
            return None
        if yield_gil:
            time.sleep(0)


def _batch_size(size: int, elapsed: float, batch_seconds: float) -> int | None:
    """Calls per timed batch, from a trial batch of ``size`` calls that took ``elapsed`` seconds.

    None while the trial is too short to extrapolate from: the caller doubles ``size`` and tries again.
    """
    if elapsed < batch_seconds / 4 and size < 1 << 20:
        return None
    return max(1, int(size * batch_seconds / max(elapsed, 1e-9)))


def per_call(function: Callable[[], Any], batches: int, batch_seconds: float = 0.02) -> list[float]:
    """Seconds per call of ``function``, one figure per batch of calls (batch size calibrated first).

    Timing a batch rather than each call keeps the clock's own cost out of sub-microsecond figures.
    """
    function()
    size = 1
    while True:
        started = time.perf_counter()
        for _ in range(size):
            function()
        calibrated = _batch_size(size, time.perf_counter() - started, batch_seconds)
        if calibrated is not None:
            break
        size *= 2
    size = calibrated
    figures = []
    for _ in range(batches):
        started = time.perf_counter()
        for _ in range(size):
            function()
        figures.append((time.perf_counter() - started) / size)
    return figures


async def aper_call(function: Callable[[], Any], batches: int, batch_seconds: float = 0.02) -> list[float]:
    """``per_call`` for a coroutine function, awaited on the running loop."""
    return (await aper_call_alternating({"": function}, batches, batch_seconds))[""]


async def aper_call_alternating(
    functions: dict[str, Callable[[], Any]], batches: int, batch_seconds: float = 0.02
) -> dict[str, list[float]]:
    """``aper_call`` of several coroutine functions, one batch of each in turn, round after round.

    Rows compared with each other (ours against a peer) then see the same
    load: timed one after the other, a machine that gets busier between them
    decides the comparison instead of the code.
    """
    sizes = {key: await _acalibrate(function, batch_seconds) for key, function in functions.items()}
    figures: dict[str, list[float]] = {key: [] for key in functions}
    for _ in range(batches):
        for key, function in functions.items():
            size = sizes[key]
            started = time.perf_counter()
            for _ in range(size):
                await function()
            figures[key].append((time.perf_counter() - started) / size)
    return figures


async def _acalibrate(function: Callable[[], Any], batch_seconds: float) -> int:
    """Calls of ``function`` per timed batch of about ``batch_seconds``."""
    await function()
    size = 1
    while True:
        started = time.perf_counter()
        for _ in range(size):
            await function()
        calibrated = _batch_size(size, time.perf_counter() - started, batch_seconds)
        if calibrated is not None:
            return calibrated
        size *= 2


def fmt_ms(seconds: float | int | None, digits: int = 2) -> str:
    """Seconds as milliseconds for a table cell."""
    return "-" if seconds is None else f"{seconds * 1000:.{digits}f}"


def fmt_us(seconds: float | int | None, digits: int = 2) -> str:
    """Seconds as microseconds for a table cell."""
    return "-" if seconds is None else f"{seconds * 1e6:.{digits}f}"


def fmt_ratio(ours: float | int | None, peer: float | int | None) -> str:
    """``ours / peer`` for a table cell (below 1 means ours is cheaper)."""
    if ours is None or peer is None or peer == 0:
        return "-"
    return f"{ours / peer:.2f}x"


# -- results ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class Table:
    """One printed table; ``note`` says what the numbers are and how many repetitions."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


@dataclass(slots=True)
class Target:
    """A target of ours, with our figure and whether it was met (None: could not be measured)."""

    target: str
    figure: str
    passed: bool | None


@dataclass(slots=True)
class BenchResult:
    """What one benchmark returns: tables to print, targets, and the raw numbers for the JSON."""

    name: str
    tables: list[Table] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "tables": [asdict(t) for t in self.tables],
            "targets": [asdict(t) for t in self.targets],
            "raw": self.raw,
        }


def print_result(result: BenchResult, console: Any = None) -> None:
    """Print a benchmark's tables and its targets with a PASS/MISS column (rich)."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table as RichTable

    console = console or Console(width=max(Console().width, 120))
    for table in result.tables:
        rich_table = RichTable(title=table.title, box=box.SIMPLE_HEAVY, title_justify="left")
        for index, column in enumerate(table.columns):
            rich_table.add_column(column, justify="left" if index == 0 else "right")
        for row in table.rows:
            rich_table.add_row(*(escape(cell) for cell in row))
        console.print(rich_table)
        if table.note:
            console.print(f"  [dim]{escape(table.note)}[/dim]")
    if result.targets:
        title = f"{result.name}: targets (ours)"
        targets = RichTable(title=title, box=box.SIMPLE_HEAVY, title_justify="left")
        targets.add_column("target")
        targets.add_column("ours", justify="right")
        targets.add_column("result", justify="center")
        for target in result.targets:
            verdict = {True: "[green]PASS[/green]", False: "[red]MISS[/red]", None: "[yellow]n/a[/yellow]"}
            targets.add_row(escape(target.target), escape(target.figure), verdict[target.passed])
        console.print(targets)
    console.print(f"  [dim]{result.name} took {result.seconds:.1f} s[/dim]\n")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit(path: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def git_state(path: Path | None = None) -> dict[str, Any]:
    """The commit the measured code is at (full sha) and whether tracked files differ from it.

    Figures in the documentation must come from the commit that carries them; a dirty
    tree means they describe code no commit holds.
    """
    import loader

    where = str(path or Path(loader.__file__).resolve().parent)
    try:
        sha = subprocess.run(
            ["git", "-C", where, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
        status = subprocess.run(
            ["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    if sha.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": sha.stdout.strip(), "dirty": bool(status.stdout.strip())}


def environment() -> dict[str, Any]:
    """Package versions, Python, CPU count and date, for the JSON."""
    import loader

    loader_dir = Path(loader.__file__).resolve().parent
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        affinity = None
    return {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "dont_write_bytecode": sys.dont_write_bytecode,
        "packages": {
            "tool-loader": _version("tool-loader") or f"source tree {loader_dir}",
            "tool-loader-git": _git_commit(loader_dir),
            "strands-agents": _version("strands-agents"),
            "fastmcp": _version("fastmcp"),
            "mcp": _version("mcp"),
            "watchdog": _version("watchdog"),
            "pydantic": _version("pydantic"),
            "psutil": _version("psutil"),
        },
    }


def write_json(directory: Path, payload: dict[str, Any], *, quick: bool, partial: bool = False) -> Path:
    """Write one run's numbers as ``bench-<UTC time>[-partial][-quick].json``; returns the path.

    A run of selected benchmarks is tagged ``-partial`` so that it never stands in for a full run
    when the docs' figures are regenerated.
    """
    directory.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = directory / f"bench-{stamp}{'-partial' if partial else ''}{'-quick' if quick else ''}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")
    return path


# -- child processes -------------------------------------------------------------------------------


def _child_env() -> dict[str, str]:
    """The environment of a measuring subprocess: ``bench`` and ``loader`` importable, bytecode on."""
    import loader

    bench_parent = str(Path(__file__).parent.parent.absolute())  # not resolved: may be a symlink farm
    entries = [bench_parent]
    loader_parent = str(Path(loader.__file__).parent.parent.absolute())
    site_dirs = {str(Path(p).absolute()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if loader_parent not in site_dirs and loader_parent not in entries:
        entries.append(loader_parent)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["FASTMCP_LOG_ENABLED"] = "false"
    if env.get("PYTHONPATH"):
        entries.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(entries)
    return env


def run_child(module: str, payload: Mapping[str, Any], *, timeout: float = 600.0) -> dict[str, Any]:
    """Run ``python -m bench.<module> --child <payload>`` and return the JSON it prints last.

    A fresh interpreter per measurement keeps peak memory and import caches of
    one system from polluting another's numbers.
    """
    with scratch_dir("child-cwd") as cwd:
        completed = subprocess.run(
            [sys.executable, "-m", f"bench.{module}", "--child", json.dumps(dict(payload))],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_child_env(),
            cwd=cwd,
            check=False,
        )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if completed.returncode != 0 or not lines:
        raise RuntimeError(
            f"bench.{module} child failed (exit {completed.returncode}): {completed.stderr.strip()[-2000:]}"
        )
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def child_main(run: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Entry point of a measuring subprocess: ``--child <json payload>``, prints one JSON line."""
    if len(sys.argv) != 3 or sys.argv[1] != "--child":
        raise SystemExit(f"usage: python -m {sys.argv[0]} --child '<json>' (run by python -m bench)")
    prepare_process()
    result = run(json.loads(sys.argv[2]))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


# -- tool files ------------------------------------------------------------------------------------


def install_probe() -> types.ModuleType:
    """Put the ``bench_probe`` module (an execution counter) in ``sys.modules``."""
    module = sys.modules.get(PROBE_MODULE)
    if not isinstance(module, types.ModuleType):
        module = types.ModuleType(PROBE_MODULE, "Counts tool-file executions for the benchmarks.")
        module.executions = 0  # type: ignore[attr-defined,unused-ignore]
        sys.modules[PROBE_MODULE] = module
    return module


def probe_count() -> int:
    """Executions counted by ``bench_probe`` so far."""
    return int(install_probe().executions)


def tool_source(dialect: str, tools: Mapping[str, str], *, header: str = "", probe: bool = False) -> str:
    """A tool file in ``dialect`` defining one no-argument tool per ``name -> return expression``."""
    lines: list[str] = []
    if probe:
        lines += [f"import {PROBE_MODULE}", f"{PROBE_MODULE}.executions += 1"]
    if header:
        lines.append(header.rstrip("\n"))
    lines.append(_DIALECT_IMPORTS[dialect])
    for name, expression in tools.items():
        lines += ["", "", "@tool", f"def {name}() -> str:", f'    """Tool {name}."""']
        lines.append(f"    return {expression}")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def background_load(processes: int | None = None) -> Iterator[int]:
    """Keep every core busy with spinning processes (another job on the same machine) while inside.

    Yields how many were started. They run at the bench's own priority, so every
    thread of the systems under test competes with them for the CPU, as on a shared
    build machine.
    """
    count = processes if processes is not None else os.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.2)  # let them take their cores before anything is measured
        yield count
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def save_in_place(path: Path, text: str) -> None:
    """Open with truncation, write, close (most editors, ``Path.write_text``)."""
    path.write_text(text)


def save_atomic(path: Path, text: str) -> None:
    """Write a temporary file beside the target, then rename it over the target."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def save_truncate_then_write(path: Path, text: str) -> None:
    """Truncate the file (closed empty), then write the new text into it."""
    path.write_text("")
    with open(path, "a") as handle:
        handle.write(text)


SAVE_STYLES: dict[str, Callable[[Path, str], None]] = {
    "in-place": save_in_place,
    "atomic-rename": save_atomic,
    "truncate-then-write": save_truncate_then_write,
}


# -- systems ---------------------------------------------------------------------------------------


class System:
    """A tool-folder loader under test, driven on the real filesystem."""

    key = ""
    dialect = ""

    def start(self, folder: Path) -> None:
        """Load ``folder`` (named ``tools``) and start watching it."""
        raise NotImplementedError

    def call(self, name: str) -> str | None:
        """Call a tool the way its users would; None when it is not there or fails."""
        raise NotImplementedError

    def names(self) -> set[str]:
        """The tool names served right now."""
        raise NotImplementedError

    def executions(self) -> int:
        """Module executions so far (counted by ``bench_probe`` unless the system counts them)."""
        return probe_count()

    def settle(self, seconds: float) -> None:
        """Let background work finish, then stay quiet for ``seconds`` (a fixed wait for peers).

        Every system ends a settle with the same idle gap, so each measured save
        starts from the same quiet state (a thread woken from idle is slower than
        one that was just busy).
        """
        time.sleep(seconds)

    def close(self) -> None:
        """Stop watching and forget the folder."""


class OursSystem(System):
    """``ToolLoader`` with the default ``LoaderConfig``."""

    key = "ours"
    dialect = "ours"

    def __init__(self, config: Any = None) -> None:
        self._config = config
        self.loader: Any = None

    def start(self, folder: Path) -> None:
        from loader.reload.loader import LoaderConfig, ToolLoader

        self.loader = ToolLoader([folder], config=self._config or LoaderConfig())
        self.loader.scan()
        self.loader.start()

    def call(self, name: str) -> str | None:
        result = self.loader.registry.invoke(name, {})
        if result.get("status") != "success" or not result.get("content"):
            return None
        block = result["content"][0]
        text = block.get("text")
        return None if text is None else str(text)

    def names(self) -> set[str]:
        return set(self.loader.registry.names())

    def executions(self) -> int:
        return int(self.loader.module_executions)

    def settle(self, seconds: float) -> None:
        self.loader.wait_idle(10.0)
        time.sleep(seconds)

    def close(self) -> None:
        if self.loader is not None:
            self.loader.close()


class StrandsSystem(System):
    """Strands' registry and watcher, set up as ``Agent(load_tools_from_directory=True)`` does.

    Strands reads ``./tools`` of the working directory at load time and at every
    reload, so the process works in the folder's parent while this system runs.
    """

    key = "strands"
    dialect = "strands"

    def __init__(self, *, watch: bool = True) -> None:
        self._watch = watch
        self._folder: Path | None = None
        self._old_cwd: str | None = None
        self.registry: Any = None

    def start(self, folder: Path) -> None:
        if folder.name != "tools":
            raise ValueError(f"Strands only loads a folder named ./tools, got {folder}")
        from strands.tools.registry import ToolRegistry
        from strands.tools.watcher import ToolWatcher

        self._folder = folder
        self._old_cwd = os.getcwd()
        os.chdir(folder.parent)
        self.registry = ToolRegistry()
        self.registry.initialize_tools(True)  # Agent.__init__: initialize_tools(load_tools_from_directory)
        if self._watch:
            ToolWatcher(tool_registry=self.registry)  # Agent.__init__: self.tool_watcher = ToolWatcher(...)

    def call(self, name: str) -> str | None:
        tool = self.registry.registry.get(name)
        if tool is None:
            return None
        try:
            return str(tool())
        except Exception:
            return None

    def names(self) -> set[str]:
        return set(self.registry.registry)

    def reload(self, stem: str) -> None:
        """What the watcher does on a modified event for ``tools/<stem>.py``."""
        self.registry.reload_tool(stem)

    def close(self) -> None:
        if self._folder is None:
            return
        from strands.tools.watcher import ToolWatcher

        key = str(self._folder)
        ToolWatcher._registry_handlers.pop(key, None)
        observer: Any = ToolWatcher._shared_observer
        if key in ToolWatcher._watched_dirs and observer is not None:
            for watch in list(getattr(observer, "_watches", ())):
                if getattr(watch, "path", None) == key:
                    with contextlib.suppress(Exception):
                        observer.unschedule(watch)
            ToolWatcher._watched_dirs.discard(key)
        for module_name in [m for m in sys.modules if m.startswith("_strands_tool_")]:
            module = sys.modules.get(module_name)
            if str(getattr(module, "__file__", "")).startswith(key):
                del sys.modules[module_name]
        if self._old_cwd is not None:
            os.chdir(self._old_cwd)
        self._folder = None


class FastMCPSystem(System):
    """FastMCP's ``FileSystemProvider``: reload mode re-imports the folder on every request;
    ``reload=False`` (its production mode) imports once and never sees edits."""

    key = "fastmcp"
    dialect = "fastmcp"

    def __init__(self, *, reload: bool = True) -> None:
        self.reload = reload
        self._loop: asyncio.AbstractEventLoop | None = None
        self._folder: Path | None = None
        self.provider: Any = None

    def start(self, folder: Path) -> None:
        from fastmcp.server.providers import FileSystemProvider

        self._folder = folder.resolve()
        self._loop = asyncio.new_event_loop()
        self.provider = FileSystemProvider(folder, reload=self.reload)

    def run(self, awaitable: Any) -> Any:
        """Run a coroutine on this system's private event loop."""
        assert self._loop is not None
        return self._loop.run_until_complete(awaitable)

    def call(self, name: str) -> str | None:
        try:
            tool = self.run(self.provider.get_tool(name))
            return None if tool is None else str(tool.fn())
        except Exception:
            return None

    def names(self) -> set[str]:
        return {tool.name for tool in self.run(self.provider.list_tools())}

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        if self._folder is not None:
            key = str(self._folder)
            for module_name, module in list(sys.modules.items()):
                if str(getattr(module, "__file__", None) or "").startswith(key):
                    del sys.modules[module_name]
            self._folder = None


class FloorSystem(System):
    """The floor of a watched reload: a minimal watchdog observer that compiles and executes a saved file.

    No loader around it: on a completed write or a rename onto a ``.py`` file, watchdog's
    dispatch thread reads the file, compiles it, executes it in a fresh namespace and keeps
    its ``@tool`` objects by name; a call is a dictionary lookup and a direct call. It has
    no containment (a hanging file stops every later save), no state machine, no registry,
    no helpers, no moves or deletes: what any watched reload pays at least, on the same
    observer threads.
    """

    key = "floor"
    dialect = "ours"

    def __init__(self) -> None:
        self.tools: dict[str, Any] = {}
        self._observer: Any = None
        self._executions = 0

    def _load(self, path: str) -> None:
        if not path.endswith(".py"):
            return
        from loader.types import AgentTool

        try:
            with open(path, "rb") as handle:
                source = handle.read()
            namespace: dict[str, Any] = {"__name__": f"floor_{os.path.basename(path)[:-3]}", "__file__": path}
            exec(compile(source, path, "exec", dont_inherit=True), namespace)
        except Exception:
            return
        self._executions += 1
        self.tools.update({v.tool_name: v for v in namespace.values() if isinstance(v, AgentTool)})

    def start(self, folder: Path) -> None:
        from watchdog.events import FileClosedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        floor = self

        class Handler(FileSystemEventHandler):
            def on_closed(self, event: FileSystemEvent) -> None:
                floor._load(str(event.src_path))

            def on_moved(self, event: FileSystemEvent) -> None:
                floor._load(str(event.dest_path))

        for path in sorted(folder.glob("*.py")):
            self._load(str(path))
        self._executions = 0
        observer = Observer()
        observer.daemon = True
        observer.schedule(Handler(), str(folder), event_filter=[FileClosedEvent, FileMovedEvent])
        observer.start()
        self._observer = observer

    def call(self, name: str) -> str | None:
        tool = self.tools.get(name)
        if tool is None:
            return None
        try:
            return str(tool())
        except Exception:
            return None

    def names(self) -> set[str]:
        return set(self.tools)

    def executions(self) -> int:
        return self._executions

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)
            self._observer = None


def make_system(key: str) -> System:
    """A fresh system by key (``ours``, ``strands``, ``fastmcp``, ``floor``)."""
    if key == "ours":
        return OursSystem()
    if key == "strands":
        return StrandsSystem()
    if key == "fastmcp":
        return FastMCPSystem()
    if key == "floor":
        return FloorSystem()
    raise ValueError(f"unknown system {key!r}; expected ours, strands, fastmcp or floor")
