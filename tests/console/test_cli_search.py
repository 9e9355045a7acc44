"""``tool-loader search`` as a real subprocess: hits ranked best first, JSON, exit status."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_cli

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"


def test_search_ranks_the_sample_tools_and_prints_json(tmp_path: Path) -> None:
    done = run_cli(
        "search", "convert", "money", "to", "euros", "--dir", str(SAMPLE_TOOLS), "--json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert hits[0]["name"] == "currency_converter"
    assert set(hits[0]) == {"name", "description", "inputSchema", "digest", "score"}
    assert len(hits) <= 5 and [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_search_table_and_no_match(tmp_path: Path) -> None:
    done = run_cli("search", "currency", "--dir", str(SAMPLE_TOOLS), "--limit", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 tool for 'currency'" in done.stdout and "currency_converter" in done.stdout
    none = run_cli("search", "zyzzyva", "--dir", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert none.returncode == 1 and "no tool matches 'zyzzyva'" in none.stdout
