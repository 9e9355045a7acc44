"""Fitting columns into a width: header words stay whole, the least useful columns go first."""

from __future__ import annotations

from pathlib import Path

from support import run_cli

from loader.console.fit import Column, clip, clip_left, fit_columns

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"

COLUMNS = [
    Column("name", 0, 10, 18),
    Column("status", 1, 9, 9),
    Column("description", 2, 20, 60, flexible=True),
    Column("parameters", 3, 10, 30),
    Column("version", 4, 9, 9),
]


def test_columns_are_dropped_least_useful_first_and_never_narrower_than_their_header() -> None:
    wide = fit_columns(COLUMNS, 200)
    assert list(wide) == ["name", "status", "description", "parameters", "version"]
    assert wide["description"] == 200 - 18 - 9 - 30 - 9 - 4  # the flexible column takes the rest
    narrow = fit_columns(COLUMNS, 50)
    assert list(narrow) == ["name", "status", "description"]
    assert all(narrow[c.name] >= len(c.name) for c in COLUMNS if c.name in narrow)
    assert sum(narrow.values()) + len(narrow) - 1 == 50
    assert list(fit_columns(COLUMNS, 60)) == ["name", "status", "description", "parameters"]
    assert list(fit_columns(COLUMNS, 12)) == ["name"]


def test_clipping_keeps_the_useful_end() -> None:
    assert clip("currency_converter", 10) == "currency_…"
    assert clip_left("sample_tools/calculator.py:12", 18) == "…/calculator.py:12"
    assert clip("short", 10) == clip_left("short", 10) == "short"


def test_list_at_80_columns_keeps_words_and_headers_whole(tmp_path: Path) -> None:
    done = run_cli("list", str(SAMPLE_TOOLS), cwd=tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    header = lines[1].split()
    assert header[:2] == ["name", "source"] and "description" in header
    names = {"calculator", "call_info", "count_primes", "currency_converter", "shipping_quote", "slugify"}
    first_words = {line.split()[0] for line in lines[3:] if line and not line.startswith(" ")}
    assert names <= first_words  # every name whole at the start of its row
