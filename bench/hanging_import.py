"""Benchmark 12: save to callable of one file while another file's import hangs, in both isolation modes.

File A's import never finishes (a busy loop at module level, with the import
deadline far beyond the measurement); while it runs, file B is saved in place
over and over, and each save is timed until a call of B's tool returns the new
text. In thread mode the hanging import holds one import thread; in process
mode it holds one import worker, and B's import takes another. With a single
import worker (before imports ran on several), B's save waited for A's deadline.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from .common import (
    BenchResult,
    Options,
    Table,
    Target,
    fmt_ms,
    save_in_place,
    scratch_dir,
    summarize,
    time_until,
)

NAME = "hanging_import"
IMPORT_TIMEOUT = 60.0
SAVE_TIMEOUT = 20.0
LIMIT = 0.5
"""Process mode's target: a save of another file is live within half a second while an import hangs."""

HANGING = "import pathlib\npathlib.Path({marker!r}).touch()\nwhile True:\n    pass\n"


def _saved(version: str) -> str:
    return (
        f'from loader import tool\n\n\n@tool\ndef other() -> str:\n    """Other."""\n    return {version!r}\n'
    )


def _text(loader: Any) -> str | None:
    result = loader.registry.invoke("other", {})
    if result.get("status") != "success":
        return None
    return str(result["content"][0].get("text"))


def _is(loader: Any, expected: str) -> bool:
    return _text(loader) == expected


def _measure(isolation: str, reps: int) -> dict[str, Any]:
    from loader.reload.loader import LoaderConfig, ToolLoader

    with scratch_dir(f"hanging-{isolation}") as base:
        folder = base / "tools"
        folder.mkdir()
        path = folder / "other.py"
        path.write_text(_saved("v0"))
        config = LoaderConfig(isolation=isolation, import_timeout=IMPORT_TIMEOUT)  # type: ignore[arg-type]
        loader = ToolLoader([folder], config=config)
        try:
            loader.scan()
            loader.start()
            marker = base / "hang-started"
            (folder / "hanging.py").write_text(HANGING.format(marker=str(marker)))
            if time_until(marker.exists, time.perf_counter(), SAVE_TIMEOUT, yield_gil=True) is None:
                raise RuntimeError(f"{isolation}: the hanging import never started")
            saves: list[float] = []
            never = 0
            for index in range(1, reps + 1):
                time.sleep(0.05)
                expected = f"v{index}"
                start = time.perf_counter()
                save_in_place(path, _saved(expected))
                took = time_until(partial(_is, loader, expected), start, SAVE_TIMEOUT, yield_gil=True)
                if took is None:
                    never += 1
                else:
                    saves.append(took)
            still_hanging = [Path(i.path).name for i in loader.imports_in_progress()] == ["hanging.py"]
        finally:
            loader.close()
    return {"save_s": saves, "save": summarize(saves), "save_never": never, "still_hanging": still_hanging}


def run(options: Options) -> BenchResult:
    """Both modes, the same folder and saves."""
    reps = options.count(20, 3)
    result = BenchResult(NAME)
    data = {mode: _measure(mode, reps) for mode in ("thread", "process")}
    result.raw = {"reps": reps, "import_timeout": IMPORT_TIMEOUT, "modes": data}
    table = Table(
        "12. save to callable while another file's import hangs",
        ["mode", "p50 (ms)", "p90 (ms)", "max (ms)", "never live", "import still hanging at the end"],
        note=(
            f"{reps} in-place saves of other.py while hanging.py's import loops forever "
            f"(import timeout {IMPORT_TIMEOUT:g} s); each until a call returns the new text."
        ),
    )
    for mode, figures in data.items():
        save = figures["save"]
        table.rows.append(
            [
                mode,
                fmt_ms(save["p50"]),
                fmt_ms(save["p90"]),
                fmt_ms(save["max"]),
                str(figures["save_never"]),
                "yes" if figures["still_hanging"] else "no",
            ]
        )
    result.tables.append(table)
    process = data["process"]
    p50 = process["save"]["p50"]
    result.targets.append(
        Target(
            "process mode, an import hanging: another file's save live p50 <= 500 ms, none waiting for it",
            fmt_ms(p50) + f" ms ({process['save_never']} never)",
            p50 is not None and p50 <= LIMIT and process["save_never"] == 0 and process["still_hanging"],
        )
    )
    return result
