"""The documentation holds together: links resolve, the README stays a landing page, CI runs its test command.

The code blocks of README.md and docs/*.md are run by ``test_readme.py``; this
file checks what lies around them: every relative link (and ``#anchor``) in
README.md, ARCHITECTURE.md and docs/*.md, the README's length and its links to
every docs page, the agreement of the README's test command with ``.ci/run``,
and that docs/console.md names every command and option of the real parser.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from loader.console.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = (README, ROOT / "ARCHITECTURE.md", *sorted(DOCS.glob("*.md")))
README_MAX_LINES = 350
LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
SHARED_OPTIONS = "## Options several commands share"
GLOBAL_OPTIONS = {"-h", "--help", "-v", "--verbose", "-q", "--quiet", "--no-color"}

pytestmark = pytest.mark.skipif(not DOCS.is_dir(), reason="the docs ship with the repository only")


def _prose(text: str) -> str:
    """The page without fenced blocks and inline code, where link syntax is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of ``page``, numbered as GitHub numbers repeated headings."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading is None:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file, or whose anchor in that file, does not exist."""
    broken: list[str] = []
    for match in LINK.finditer(_prose(page.read_text(encoding="utf-8"))):
        target = match.group("target")
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target} (no heading #{anchor} in {resolved.name})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    assert page.is_file(), f"{page.name} is missing"
    assert broken_links(page) == [], f"{page.relative_to(ROOT)}: broken links"


def test_a_broken_link_or_anchor_is_noticed(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading: yes\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n[fine](other.md#a-code-heading-yes) [here](#title) [web](https://example.com)\n"
        "[gone](missing.md) [no anchor](other.md#nope) `[in code](missing.md)`\n"
        "```\n[in a fence](missing.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md (no such file)",
        "other.md#nope (no heading #nope in other.md)",
    ]


def test_the_readme_is_a_landing_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; keep it under {README_MAX_LINES} and move reference to docs/"
    )


def test_the_readme_links_every_docs_page() -> None:
    linked = {
        (README.parent / m.group("target").partition("#")[0]).resolve()
        for m in LINK.finditer(_prose(README.read_text(encoding="utf-8")))
    }
    missing = [page.name for page in sorted(DOCS.glob("*.md")) if page.resolve() not in linked]
    assert missing == [], f"README.md does not link these docs pages: {missing}"


def _readme_command(needle: str) -> str:
    """The one README bash line that contains ``needle``."""
    text = README.read_text(encoding="utf-8")
    found = [line for line in text.splitlines() if needle in line and line.startswith("python3 -m venv")]
    assert len(found) == 1, f"README.md should hold exactly one command with {needle!r}, found {found}"
    return found[0]


def test_ci_runs_the_readme_test_command() -> None:
    steps = [step.strip() for step in _readme_command(".venv/bin/pytest").split("&&")]
    ci = [line.strip().replace(" -q ", " ") for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    positions = [ci.index(step) if step in ci else -1 for step in steps]
    assert -1 not in positions, f".ci/run lacks a step of the README's test command: {steps} vs {ci}"
    assert positions == sorted(positions), "the steps run in another order in .ci/run"


def test_the_readme_keeps_the_main_job() -> None:
    assert _readme_command("tool-loader watch sample_tools") == (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/tool-loader watch sample_tools"
    )


def _sections(text: str) -> dict[str, str]:
    """The page cut at its headings: heading line -> the text under it (up to the next heading)."""
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_the_console_reference_names_every_command_and_option() -> None:
    sections = _sections((DOCS / "console.md").read_text(encoding="utf-8"))
    shared = sections.get(SHARED_OPTIONS, "")
    assert shared, f"docs/console.md has no {SHARED_OPTIONS!r} section"
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing: list[str] = []
    for name, parser in commands.choices.items():
        own = "".join(body for heading, body in sections.items() if f"`{name}`" in heading)
        if not own:
            missing.append(f"a ### `{name}` section")
            continue
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option not in GLOBAL_OPTIONS:
                    if f"`{option}" not in own and f"`{option}" not in shared:
                        missing.append(f"{name} {option}")
    assert missing == [], f"docs/console.md does not document: {missing}"
