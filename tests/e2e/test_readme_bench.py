"""The benchmark block of docs/benchmarks.md is generated from the newest results file, and stays that way."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

PAGE = ROOT / "docs" / "benchmarks.md"

pytestmark = pytest.mark.skipif(
    not (BENCH / "readme.py").is_file() or not PAGE.is_file(),
    reason="the bench folder and docs ship with the repository only",
)


@pytest.fixture(scope="module")
def readme_tool() -> ModuleType:
    """bench/readme.py, loaded by path (the bench package is not installed)."""
    spec = importlib.util.spec_from_file_location("bench_readme_under_test", BENCH / "readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _block(readme_tool: ModuleType, text: str) -> str:
    start, end = text.index(readme_tool.BEGIN), text.index(readme_tool.END)
    return text[start + len(readme_tool.BEGIN) + 1 : end]


def test_the_page_matches_the_newest_results(readme_tool: ModuleType) -> None:
    newest = readme_tool.newest_results(BENCH / "results")
    assert newest is not None, "no full benchmark results in bench/results"
    assert readme_tool.PAGE == PAGE
    expected = readme_tool.render(json.loads(newest.read_text()), newest.name)
    actual = _block(readme_tool, PAGE.read_text())
    assert actual == expected, (
        f"{PAGE.name}: benchmark block is stale; run python -m bench.readme ({newest.name})"
    )


def test_the_charts_the_page_shows_exist(readme_tool: ModuleType) -> None:
    block = _block(readme_tool, PAGE.read_text())
    charts = [line.split("](", 1)[1].rstrip(")") for line in block.splitlines() if line.startswith("![")]
    assert charts, "the benchmark block shows no chart"
    for chart in charts:
        assert (PAGE.parent / chart).is_file(), f"{PAGE.name} shows {chart}, which does not exist"


def test_the_readme_keeps_no_benchmark_block(readme_tool: ModuleType) -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme_tool.BEGIN not in readme and readme_tool.END not in readme, (
        "the figures live in docs/benchmarks.md; the README only links to it"
    )


def test_a_changed_figure_or_a_newer_run_is_noticed(readme_tool: ModuleType, tmp_path: Path) -> None:
    newest = readme_tool.newest_results(BENCH / "results")
    assert newest is not None
    data = json.loads(newest.read_text())
    block = readme_tool.render(data, newest.name)
    changed = copy.deepcopy(data)
    table = next(t for r in changed["benchmarks"].values() for t in r.get("tables", []) if t["rows"])
    table["rows"][0][1] = table["rows"][0][1] + "0"
    assert readme_tool.render(changed, newest.name) != block
    # A newer full run wins over older ones; quick runs never count.
    (tmp_path / newest.name).write_text("{}")
    (tmp_path / "bench-29991231T000000Z.json").write_text("{}")
    (tmp_path / "bench-30000101T000000Z-quick.json").write_text("{}")
    assert readme_tool.newest_results(tmp_path).name == "bench-29991231T000000Z.json"


def test_the_block_is_replaced_between_its_markers_only(readme_tool: ModuleType) -> None:
    text = f"intro\n{readme_tool.BEGIN}\nold\n{readme_tool.END}\noutro\n"
    assert (
        readme_tool.replace_block(text, "new\n")
        == f"intro\n{readme_tool.BEGIN}\nnew\n{readme_tool.END}\noutro\n"
    )
    with pytest.raises(ValueError, match="no"):
        readme_tool.replace_block("no markers here", "x")
