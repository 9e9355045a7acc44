"""Skills kept as ``skills/<name>/SKILL.md`` and their files: real files, the real watcher."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from support import MakeLoader, eventually, write

from loader import ComponentKind, FileState, Skill, skill_entries

pytestmark = pytest.mark.anyio


def skill_md(name: str, description: str = "Fill in PDF forms.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\nSee references/FORMS.md.\n"


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


BROKEN = {
    "bad name": ("---\nname: Report_V2\ndescription: d\n---\nbody\n", 2, "lowercase letters"),
    "name is not its folder": ("---\nname: other\ndescription: d\n---\nbody\n", 2, "folder's name"),
    "no description": ("---\nname: report\nlicense: MIT\n---\nbody\n", 1, "'description'"),
    "broken YAML": ("---\nname: report\ndescription: [unclosed\n---\nbody\n", 4, "not valid YAML"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_malformed_skill_md_is_reported_with_its_line_and_the_last_good_keeps_serving(
    case: str, tools_dir: Path, make_loader: MakeLoader
) -> None:
    path = write(tools_dir / "skills" / "report" / "SKILL.md", skill_md("report", "The good one."))
    loader = make_loader(tools_dir)
    text, line, words = BROKEN[case]
    write(path, text)
    status = eventually(
        lambda: (s := loader.file_status(path)) is not None and s.state is FileState.FAILED and s,
        message="failed",
    )
    assert status.error is not None
    assert (status.error.exc_type, status.error.file, status.error.line) == ("SkillError", str(path), line)
    assert words in status.error.message
    served = loader.registry.snapshot().component(ComponentKind.SKILL, "report")
    assert isinstance(served, Skill) and served.description == "The good one."


def test_a_manifest_lists_every_file_once_from_one_snapshot_nested_skills_included(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "skills" / "acme" / "billing" / "SKILL.md", skill_md("billing"))
    write(tools_dir / "skills" / "acme" / "billing" / "refunds" / "SKILL.md", skill_md("refunds"))
    write(tools_dir / "skills" / "acme" / "billing" / "refunds" / "email.md", "Dear customer,\n")
    (tools_dir / "skills" / "acme" / "billing" / "logo.png").write_bytes(b"\x89PNG\x00\x01")
    loader = make_loader(tools_dir, watch=False)
    entries = {e.skill.key: e for e in skill_entries(loader.registry.snapshot().components())}
    assert sorted(entries) == ["acme/billing", "acme/billing/refunds"]
    outer, inner = entries["acme/billing"].wire(), entries["acme/billing/refunds"].wire()
    assert [r["uri"] for r in outer["resources"]] == [
        "skill://acme/billing/SKILL.md",
        "skill://acme/billing/logo.png",
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/email.md",
    ]
    assert [r["uri"] for r in inner["resources"]] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/email.md",
    ]
    for file in entries["acme/billing"].files:
        on_disk = (tools_dir / "skills" / file.path).read_bytes()
        assert (file.digest, file.size) == ("sha256:" + hashlib.sha256(on_disk).hexdigest(), len(on_disk))
