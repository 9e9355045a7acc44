"""``python -m bench.readme``: write the figures of ``docs/benchmarks.md`` from the newest results file.

Every figure in the page's benchmark block comes from one results JSON, named
in the block with the commit it measured, so the documentation cannot drift
from the numbers (``tests/e2e/test_readme_bench.py`` fails when they disagree).
The block lies between ``<!-- bench:begin -->`` and ``<!-- bench:end -->``.
The README keeps no figures, only a link to the page, so it never goes stale.

Usage:
    python -m bench.readme            rewrite the block from the newest full run
    python -m bench.readme --check    exit 1 if the block is out of date
    python -m bench.readme --results bench/results/bench-....json
    python -m bench.readme --page other.md

This module imports nothing of the benchmarks, so tests can load it by path.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["BEGIN", "END", "PAGE", "newest_results", "render", "replace_block"]

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PAGE = HERE.parent / "docs" / "benchmarks.md"
"""The page that holds the block."""
CHART_PREFIX = "../bench/results/"
"""The charts as the page links them (relative to ``docs/``)."""
CHARTS = (
    ("save_to_callable.png", "save → callable, distribution per system and folder size"),
    ("load_time.png", "initial load time against folder size"),
)


_ABSOLUTE_NOTE = (
    "Ratios compare systems measured in the same run, alternating, and reproduce on other "
    "machines; absolute times are this machine's at the commit above, and another machine "
    "(or this one under other load) gives other absolute times."
)


def newest_results(directory: Path = RESULTS) -> Path | None:
    """The newest full run's JSON (names sort by their UTC time stamp); quick and partial runs never count."""
    full = sorted(p for p in directory.glob("bench-*.json") if not p.stem.endswith(("-quick", "-partial")))
    return full[-1] if full else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _header(data: dict[str, Any], name: str) -> str:
    env = data.get("environment", {})
    packages = env.get("packages", {})
    commit = data.get("commit") or {}
    sha = commit.get("commit")
    if sha:
        where = f"commit `{sha[:12]}`" + (" with uncommitted changes" if commit.get("dirty") else "")
    else:
        short = packages.get("tool-loader-git")
        where = (
            f"commit `{short}` (short hash; dirty state not recorded)" if short else "an unrecorded commit"
        )
    versions = ", ".join(
        f"{package} {packages[package]}"
        for package in ("strands-agents", "fastmcp", "mcp")
        if packages.get(package)
    )
    misses = sum(
        1
        for result in data.get("benchmarks", {}).values()
        for target in result.get("targets", [])
        if target.get("passed") is False
    )
    targets = sum(len(result.get("targets", [])) for result in data.get("benchmarks", {}).values())
    return (
        f"Figures from `bench/results/{name}`: {where}, {env.get('date', '?')}, "
        f"{env.get('cpu_count', '?')} CPUs, Python {env.get('python', '?')}; {versions}. "
        f"{targets - misses} of {targets} targets met."
    )


def render(data: dict[str, Any], name: str) -> str:
    """The block's markdown (markers excluded) for one results file.

    Each benchmark leads with its targets, which hold ours to a peer or a floor
    measured in the same run: those ratios reproduce on other machines. The tables
    of absolute times follow, labelled as this machine's.
    """
    lines = [_header(data, name), "", _ABSOLUTE_NOTE, ""]
    for chart, alt in CHARTS:
        lines.append(f"![{alt}]({CHART_PREFIX}{chart})")
    lines.append("")
    for bench, result in data.get("benchmarks", {}).items():
        if "error" in result and "tables" not in result:
            lines += [f"**{bench}**: failed in this run.", ""]
            continue
        targets = result.get("targets", [])
        if targets:
            verdict = {True: "met", False: "**missed**", None: "n/a"}
            rows = [[t["target"], t["figure"], verdict[t["passed"]]] for t in targets]
            lines += [f"*{bench} targets (ratios in the same run)*", ""]
            lines += _table(["target", "ours", "result"], rows)
            lines.append("")
        for table in result.get("tables", []):
            lines += [f"**{_cell(table['title'])}**, this machine", ""]
            lines += _table(table["columns"], table["rows"])
            if table.get("note"):
                lines += ["", f"<sub>{_cell(table['note'])}</sub>"]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def replace_block(page: str, block: str) -> str:
    """``page`` with the text between the markers replaced by ``block``."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {BEGIN} ... {END} block")
    return page[: start + len(BEGIN)] + "\n" + block + page[end:]


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or, with ``--check``, verify) the benchmark block of ``docs/benchmarks.md``."""
    parser = argparse.ArgumentParser(prog="python -m bench.readme", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page's block is out of date")
    parser.add_argument("--results", type=Path, default=None, help="a results JSON (default: the newest)")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page holding the block")
    args = parser.parse_args(argv)
    path = args.results or newest_results()
    if path is None:
        print("no full benchmark results in bench/results (run python -m bench)", file=sys.stderr)
        return 1
    block = render(json.loads(path.read_text()), path.name)
    current = args.page.read_text()
    updated = replace_block(current, block)
    if args.check:
        if updated != current:
            print(f"{args.page} is out of date with {path.name}; run python -m bench.readme", file=sys.stderr)
            return 1
        return 0
    args.page.write_text(updated)
    print(f"{args.page}: benchmark block written from {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
