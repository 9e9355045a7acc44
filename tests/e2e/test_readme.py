"""The README and docs/ tell the truth: their shell commands and Python examples run as written, printing what they show.

Blocks are read from README.md and every docs/*.md page in order; each page
runs from its own copy of the repository root (the checkout's ``loader``,
``plugins`` and ``bench`` linked in, ``sample_tools`` copied), as a reader who finished the quick
start would:

* a ``bash`` block runs in bash (``set -e``) with this environment's
  ``tool-loader`` on the PATH;
* a ``python`` block whose first line is ``# some/file.py`` is written to that
  file (the reader creates it); any other ``python`` block runs with ``python -c``;
* a fence right after ``<!-- readme-test: output -->`` is the output of the
  runnable block before it: stdout and stderr, compared line by line, with
  clock times, durations and local paths normalised;
* a block right after ``<!-- readme-test: skip: REASON -->`` is not run
  (installs, servers, ``watch``, anything needing credentials), and says why;
* a page's blocks run in order in one test (one page's copy of the root); pages run in parallel;
* a ``json`` or ``toml`` block must parse.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import warm_cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = (README, *sorted((ROOT / "docs").glob("*.md")))
SKIP = re.compile(r"<!-- readme-test: skip(?::\s*(?P<reason>.*?))?\s*-->")
OUTPUT = "<!-- readme-test: output -->"
RUNNABLE = ("bash", "python")
PARSED = ("json", "toml")
COLUMNS = "120"


@dataclass
class Block:
    """One fenced block of a page."""

    page: Path
    line: int
    lang: str
    text: str
    marker: str | None
    skip_reason: str | None = None
    expected: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)} line {self.line}"


def read_blocks(page: Path, text: str) -> list[Block]:
    """Every fenced block with the marker comment just before it; outputs attached to their command."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    marker: str | None = None
    reason: str | None = None
    while index < len(lines):
        stripped = lines[index].strip()
        skip = SKIP.fullmatch(stripped)
        if skip or stripped == OUTPUT:
            marker, reason = ("skip", (skip.group("reason") or "").strip()) if skip else ("output", None)
        elif stripped.startswith("```"):
            lang = stripped[3:].strip()
            body: list[str] = []
            start = index + 1
            index += 1
            while index < len(lines) and not lines[index].strip().startswith("```"):
                body.append(lines[index])
                index += 1
            block = Block(page, start, lang, "\n".join(body) + "\n", marker, reason)
            if marker == "output":
                assert blocks, f"{block.where}: an output block with no command before it"
                blocks[-1].expected = block.text
            else:
                blocks.append(block)
            marker = reason = None
        elif stripped and not stripped.startswith("<!--"):
            marker = reason = None
        index += 1
    return blocks


BLOCKS = [block for page in PAGES for block in read_blocks(page, page.read_text(encoding="utf-8"))]
RUN = [b for b in BLOCKS if b.lang in RUNNABLE]
PARSE = [b for b in BLOCKS if b.lang in PARSED and b.marker != "skip"]


def normalise(text: str, root: Path) -> list[str]:
    """Lines with what differs between runs replaced: clock times, durations, this machine's paths."""
    text = text.replace(str(root), "/path/to/tool-loader")
    # The console script's interpreter may be spelt python, python3 or python3.11 in the same venv.
    venv_bin = re.escape(str(Path(sys.executable).parent))
    text = re.sub(venv_bin + r"/python(\d+(\.\d+)?)?\b", "/path/to/python", text)
    text = re.sub(r"\b\d\d:\d\d:\d\d\b", "HH:MM:SS", text)
    text = re.sub(r"\b\d+(\.\d+)? (ms|s)\b", "N s", text)
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


def root_for(page: Path, base: Path) -> Path:
    """The page's copy of the repository root: the code linked in, sample_tools copied (examples write)."""
    where = base / "tool-loader"
    where.mkdir()
    for name in ("loader", "plugins", "bench", "pyproject.toml", "README.md", "docs"):
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


RUN_PAGES = sorted({b.page for b in RUN if b.marker != "skip"}, key=PAGES.index)


# A page's blocks build on each other (a file written by one is run by the next), so one test runs
# a page's blocks in order; the pages run in parallel under xdist.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", RUN_PAGES, ids=[page.stem for page in RUN_PAGES])
def test_page_runs_as_shown(page: Path, tmp_path: Path) -> None:
    root = root_for(page, tmp_path)
    warm = tmp_path / "warm-bin"
    warm.mkdir()
    path_first = warm if warm_cli.console_script(warm) is not None else None
    for block in (b for b in RUN if b.page == page and b.marker != "skip"):
        run_block(block, root, path_first)


def run_block(block: Block, root: Path, path_first: Path | None = None) -> None:
    """Write the file a block shows, or run the block and compare what it prints with the page."""
    first = block.text.splitlines()[0] if block.text.strip() else ""
    if block.lang == "python" and re.fullmatch(r"# [\w./-]+\.py", first):
        target = root / first[2:]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text, encoding="utf-8")
        return
    command = ["bash", "-e", "-c", block.text] if block.lang == "bash" else [sys.executable, "-c", block.text]
    env = {**_env(), "PYTHONPATH": str(root)}
    if path_first is not None:  # the blocks' `tool-loader` commands run in warm forks (tests/warm_cli.py)
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        command,
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{block.where} failed:\n{block.text}\n{done.stdout}"
    if block.expected is not None:
        assert normalise(done.stdout, root) == normalise(block.expected, root), (
            f"{block.where}: the output differs from what the page shows"
        )


@pytest.mark.parametrize("block", PARSE, ids=[f"{b.page.stem}-line{b.line}-{b.lang}" for b in PARSE])
def test_data_block_parses(block: Block) -> None:
    try:
        json.loads(block.text) if block.lang == "json" else tomllib.loads(block.text)
    except ValueError as exc:
        pytest.fail(f"{block.where}: the {block.lang} block does not parse: {exc}")


def test_every_skip_says_why() -> None:
    unexplained = [b.where for b in BLOCKS if b.marker == "skip" and not b.skip_reason]
    assert not unexplained, (
        f"blocks skipped without a reason (<!-- readme-test: skip: why -->): {unexplained}"
    )


def test_the_blocks_are_found() -> None:
    showing_output = {b.page.stem for b in RUN if b.expected is not None}
    assert {"README", "console", "writing-tools", "python-api", "plugins"} <= showing_output, showing_output
    assert any(b.marker == "skip" for b in RUN)
