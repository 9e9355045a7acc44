"""``python -m bench --plot``: charts from the newest results file, for people who would rather look.

* ``save_to_callable.png``: the distribution of save → callable latency per system
  and folder size (benchmark 4's edits, every sample), as box plots on a log scale;
* ``load_time.png``: initial load time against folder size per system (benchmark
  3's warm median, whiskers from the fastest to the slowest repetition), log-log.

Both go to ``bench/results/`` under fixed names, which ``docs/benchmarks.md`` shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .common import SYSTEM_LABELS

__all__ = ["plot"]

COLOURS = {
    "ours": "#1b9e77",
    "strands": "#d95f02",
    "fastmcp": "#7570b3",
    "fastmcp_prod": "#e7298a",
    "floor": "#666666",
}
LABELS = {**SYSTEM_LABELS, "floor": "compile + exec (floor)", "fastmcp_prod": "FastMCP reload=False"}


def _latency_chart(data: dict[str, Any], out: Path, title: str) -> Path | None:
    import matplotlib.pyplot as plt

    systems = (data.get("benchmarks", {}).get("reload_cost", {}).get("raw") or {}).get("systems")
    if not systems:
        return None
    sizes = sorted({int(size) for cells in systems.values() for size in cells})
    keys = [key for key in ("ours", "strands", "fastmcp") if key in systems]
    figure, axes = plt.subplots(figsize=(max(6.0, 1.8 * len(sizes) * len(keys) / 2), 4.5))
    width = 0.8 / max(len(keys), 1)
    for index, key in enumerate(keys):
        samples, positions = [], []
        for slot, size in enumerate(sizes):
            cell = systems[key].get(str(size))
            if cell and cell.get("latency_s"):
                samples.append([s * 1000 for s in cell["latency_s"]])
                positions.append(slot + (index - (len(keys) - 1) / 2) * width)
        if not samples:
            continue
        boxes = axes.boxplot(
            samples, positions=positions, widths=width * 0.9, patch_artist=True, whis=(1, 99)
        )
        for box in boxes["boxes"]:
            box.set_facecolor(COLOURS[key])
            box.set_alpha(0.6)
        axes.plot([], [], color=COLOURS[key], linewidth=8, alpha=0.6, label=LABELS[key])
    axes.set_xticks(range(len(sizes)), [f"{size:,} files" for size in sizes])
    axes.set_yscale("log")
    axes.set_ylabel("save → callable (ms, log scale)")
    axes.set_title(title, fontsize=9)
    axes.legend(loc="upper left")
    axes.grid(axis="y", which="both", alpha=0.3)
    figure.text(0.01, 0.01, "box: p25-p75, line: median, whiskers: p1-p99", fontsize=8, alpha=0.7)
    path = out / "save_to_callable.png"
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _load_chart(data: dict[str, Any], out: Path, title: str) -> Path | None:
    import matplotlib.pyplot as plt

    from .initial_load import warm_seconds

    results = (data.get("benchmarks", {}).get("initial_load", {}).get("raw") or {}).get("results")
    if not results:
        return None
    figure, axes = plt.subplots(figsize=(6.5, 4.5))
    sizes = sorted(int(size) for size in results)
    keys = sorted({key for cell in results.values() for key in cell}, key=lambda k: list(COLOURS).index(k))
    for key in keys:
        xs, medians, lows, highs = [], [], [], []
        for size in sizes:
            cell = results[str(size)].get(key)
            if not cell or "error" in cell:
                continue
            seconds = sorted(warm_seconds(cell))
            median = seconds[len(seconds) // 2]
            xs.append(size)
            medians.append(median)
            lows.append(median - seconds[0])
            highs.append(seconds[-1] - median)
        if xs:
            axes.errorbar(
                xs, medians, yerr=[lows, highs], marker="o", capsize=3, color=COLOURS[key], label=LABELS[key]
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("tool files in the folder (log scale)")
    axes.set_ylabel("seconds until every tool is callable (log)")
    axes.set_title(title, fontsize=9)
    axes.legend(loc="upper left", fontsize=8)
    axes.grid(which="both", alpha=0.3)
    path = out / "load_time.png"
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def plot(results: Path, out: Path) -> list[Path]:
    """Draw both charts from one results file into ``out``; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    data = json.loads(results.read_text())
    commit = (data.get("commit") or {}).get("commit") or data.get("environment", {}).get("packages", {}).get(
        "tool-loader-git"
    )
    suffix = f" ({results.name}, commit {str(commit)[:12]})" if commit else f" ({results.name})"
    written = [
        _latency_chart(data, out, "Save → callable per system and folder size" + suffix),
        _load_chart(data, out, "Initial load against folder size" + suffix),
    ]
    return [path for path in written if path is not None]
