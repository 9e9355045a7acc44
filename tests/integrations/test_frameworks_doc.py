"""The examples of ``docs/frameworks.md`` run and print what the page shows.

The page follows the docs' conventions: a ``python`` block whose first line is
``# name.py`` is a file the reader saves; a block after ``<!-- readme-test:
skip: why -->`` is not run; a fence after ``<!-- readme-test: output -->`` is
what the block before it prints. Each example runs in-process (the frameworks
are imported once for the whole suite), in an empty working directory holding
the page's files.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"
SKIP = re.compile(r"<!-- readme-test: skip:\s*(?P<reason>.+?)\s*-->")
OUTPUT = "<!-- readme-test: output -->"
FILE = re.compile(r"# (?P<name>[\w./-]+\.py)")


@dataclass
class Block:
    """One fenced ``python`` block of the page, with what the page says about it."""

    line: int
    text: str
    skip: str | None
    expected: str | None = None


def read_blocks(text: str) -> list[Block]:
    """The page's ``python`` blocks in order, each with its skip reason and its shown output."""
    blocks: list[Block] = []
    lines = text.splitlines()
    marker: str | None = None
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if SKIP.fullmatch(stripped) or stripped == OUTPUT:
            marker = stripped
        elif stripped.startswith("```"):
            lang, start, body = stripped[3:].strip(), index + 1, []
            index += 1
            while not lines[index].strip().startswith("```"):
                body.append(lines[index])
                index += 1
            code = "\n".join(body) + "\n"
            skip = SKIP.fullmatch(marker or "")
            if marker == OUTPUT:
                blocks[-1].expected = code
            elif lang == "python":
                blocks.append(Block(start, code, skip.group("reason") if skip else None))
            marker = None
        elif stripped:
            marker = None
        index += 1
    return blocks


BLOCKS = read_blocks(DOC.read_text(encoding="utf-8"))
FILES = [block for block in BLOCKS if FILE.fullmatch(block.text.splitlines()[0])]
EXAMPLES = [block for block in BLOCKS if block.skip is None and block not in FILES]


def test_the_page_has_a_runnable_example_per_framework() -> None:
    assert [FILE.fullmatch(block.text.splitlines()[0]) is not None for block in FILES] == [True]
    assert len(EXAMPLES) == 6
    assert all(block.expected for block in EXAMPLES)
    skipped = [block for block in BLOCKS if block.skip is not None]
    assert len(skipped) == 6  # the one-line wiring with a real model, per framework


# LlamaIndex's workflows find their steps with inspect.getmembers on the (pydantic) agent.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
@pytest.mark.parametrize("example", EXAMPLES, ids=[f"line{block.line}" for block in EXAMPLES])
def test_example_prints_what_the_page_shows(
    example: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []
    for block in FILES:
        name = FILE.fullmatch(block.text.splitlines()[0]).group("name")  # type: ignore[union-attr]
        (tmp_path / name).write_text(block.text)
        names.append(Path(name).stem)
    try:
        exec(
            compile(example.text, f"docs/frameworks.md line {example.line}", "exec"), {"__name__": "__main__"}
        )
    finally:
        for name in names:
            sys.modules.pop(name, None)
    out, err = capsys.readouterr()
    assert out.splitlines() == (example.expected or "").splitlines()
    assert err == ""
