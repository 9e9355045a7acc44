"""The smoke list (tests/smoke.py) names tests that exist, so `pytest -m smoke` never shrinks silently."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from smoke import SMOKE

TESTS = Path(__file__).parent


@pytest.mark.parametrize("entry", SMOKE)
def test_each_smoke_entry_names_an_existing_test(entry: str) -> None:
    file, _, test = entry.partition("::")
    path = TESTS / file
    assert path.is_file(), f"{entry}: no file {path}"
    if test:
        name = test.split("[", 1)[0]
        defined = {
            node.name
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        assert name in defined, f"{entry}: {file} defines no {name}"


def test_the_smoke_subset_covers_each_way_in() -> None:
    files = {entry.partition("::")[0] for entry in SMOKE}
    assert {
        "e2e/test_contract.py",
        "console/test_serve_command.py",
        "isolation/test_process_mode.py",
    } <= files
