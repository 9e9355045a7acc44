"""The README tells the truth: its shell commands and Python examples run as written, printing what it shows.

Blocks are read from README.md in order and run from a copy of the repository
root (the checkout's ``loader``, ``plugins`` and ``sample_tools`` linked in), as
a reader who finished the quick start would:

* a ``bash`` block runs in bash (``set -e``) with this environment's
  ``tool-loader`` on the PATH;
* a ``python`` block whose first line is ``# some/file.py`` is written to that
  file (the reader creates it); any other ``python`` block runs with ``python -c``;
* a fence right after ``<!-- readme-test: output -->`` is the output of the
  runnable block before it: stdout and stderr, compared line by line, with
  clock times, durations and local paths normalised;
* a block right after ``<!-- readme-test: skip -->`` is not run (installs,
  servers, ``watch``, anything needing credentials).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SKIP = "<!-- readme-test: skip -->"
OUTPUT = "<!-- readme-test: output -->"
COLUMNS = "120"


@dataclass
class Block:
    """One fenced block of the README."""

    line: int
    lang: str
    text: str
    marker: str | None
    expected: str | None = None


def read_blocks(text: str) -> list[Block]:
    """Every fenced block with the marker comment just before it; outputs attached to their command."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    marker: str | None = None
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if stripped in (SKIP, OUTPUT):
            marker = stripped
        elif stripped.startswith("```"):
            lang = stripped[3:].strip()
            body: list[str] = []
            start = index + 1
            index += 1
            while index < len(lines) and not lines[index].strip().startswith("```"):
                body.append(lines[index])
                index += 1
            block = Block(start, lang, "\n".join(body) + "\n", marker)
            if marker == OUTPUT:
                assert blocks, f"README line {start}: an output block with no command before it"
                blocks[-1].expected = block.text
            else:
                blocks.append(block)
            marker = None
        elif stripped:
            marker = None if not stripped.startswith("<!--") else marker
        index += 1
    return blocks


BLOCKS = [b for b in read_blocks(README.read_text(encoding="utf-8")) if b.lang in ("bash", "python")]


def normalise(text: str, root: Path) -> list[str]:
    """Lines with what differs between runs replaced: clock times, durations, this machine's paths."""
    text = text.replace(str(root), "/path/to/tool-loader").replace(sys.executable, "/path/to/python")
    text = re.sub(r"\b\d\d:\d\d:\d\d\b", "HH:MM:SS", text)
    text = re.sub(r"\b\d+(\.\d+)? (ms|s)\b", "N s", text)
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository root: the code linked in, sample_tools copied (examples may write)."""
    import shutil

    where = tmp_path_factory.mktemp("readme") / "tool-loader"
    where.mkdir()
    for name in ("loader", "plugins", "pyproject.toml", "README.md"):
        (where / name).symlink_to(ROOT / name)
    shutil.copytree(
        ROOT / "sample_tools", where / "sample_tools", ignore=shutil.ignore_patterns("__pycache__")
    )
    return where


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_LOADER_") and k != "FORCE_COLOR"}
    env.update(
        COLUMNS=COLUMNS,
        NO_COLOR="1",
        TERM="dumb",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{b.line}-{b.lang}" for b in BLOCKS])
def test_readme_block(block: Block, root: Path) -> None:
    if block.marker == SKIP:
        pytest.skip("marked readme-test: skip (installs, servers or credentials)")
    first = block.text.splitlines()[0] if block.text.strip() else ""
    if block.lang == "python" and re.fullmatch(r"# [\w./-]+\.py", first):
        target = root / first[2:]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text, encoding="utf-8")
        return
    command = ["bash", "-e", "-c", block.text] if block.lang == "bash" else [sys.executable, "-c", block.text]
    done = subprocess.run(
        command,
        cwd=root,
        env={**_env(), "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"README line {block.line} failed:\n{block.text}\n{done.stdout}"
    if block.expected is not None:
        assert normalise(done.stdout, root) == normalise(block.expected, root), (
            f"README line {block.line}: the output differs from what the README shows"
        )


def test_the_blocks_are_found() -> None:
    assert any(b.expected for b in BLOCKS), "no README command shows its output"
    assert any(b.marker == SKIP for b in BLOCKS)
