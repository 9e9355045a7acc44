"""``skills="on-activation"`` and ``discovery=`` below the frameworks: ``SkillRun`` views and ``ToolOffer``.

Each framework's real agent loop is in ``test_every_framework.py`` and ``test_strands.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_agents import versioned_tool
from support import MakeLoader, eventually, write

from loader.integrations.live import failed, result_text
from loader.integrations.offer import ToolOffer
from loader.integrations.skills import ACTIVATE_SKILL, SkillRun, skill_tools

SKILL_MD = "---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def write_skill(folder: Path, name: str, description: str, body: str, *tools: str) -> None:
    write(
        folder / "skills" / name / "SKILL.md", SKILL_MD.format(name=name, description=description, body=body)
    )
    for tool in tools:
        write(folder / "skills" / name / "tools" / f"{tool}.py", versioned_tool(tool, 1))


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_runs_view_hides_a_skills_tools_until_activate_skill_ran(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write_skill(tools_dir, "pdf-forms", "Fill PDF forms.", "Use fill_form.", "fill_form", "sign_form")
    write_skill(tools_dir, "notes", "Take notes.", "Write short notes.")
    loader = make_loader(tools_dir, watch=False)
    snapshot = loader.registry.snapshot()
    assert skill_tools(snapshot) == {"notes": (), "pdf-forms": ("fill_form", "sign_form")}

    run = SkillRun(loader.registry)
    view = run.view()
    assert view.names() == ("activate_skill", "greet")
    assert view.generation == snapshot.generation
    assert run.view() is view  # nothing changed: the same object, so adapters keep their tools
    description = view.get(ACTIVATE_SKILL).tool_spec["description"]  # type: ignore[union-attr]
    assert description.splitlines()[-2:] == [
        "- notes: Take notes.",
        "- pdf-forms: Fill PDF forms. (tools: fill_form, sign_form)",
    ]

    unknown = view.invoke(ACTIVATE_SKILL, {"name": "pdf"})
    assert failed(unknown)
    assert result_text(unknown) == "Unknown skill: pdf. Skills: notes, pdf-forms"
    assert run.view() is view

    body = view.invoke(ACTIVATE_SKILL, {"name": "pdf-forms"})
    assert result_text(body) == "Use fill_form."
    assert run.activated == {"pdf-forms"}
    after = run.view()
    assert after.names() == ("activate_skill", "fill_form", "greet", "sign_form")
    assert result_text(after.invoke("fill_form", {"who": "ada"})) == "fill_form v1 for ada"
    assert SkillRun(loader.registry).view().names() == ("activate_skill", "greet")  # another run


def test_a_skill_saved_during_a_run_is_offered_hidden_then_activated(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    run = SkillRun(loader.registry)
    assert run.view().names() == ("greet",)  # no skill: no activate_skill

    write_skill(tools_dir, "maps", "Read maps.", "Use find_place.", "find_place")
    eventually(lambda: "find_place" in loader.registry.snapshot() and loader.wait_idle(0.01))
    view = run.view()
    assert view.names() == ("activate_skill", "greet")
    view.invoke(ACTIVATE_SKILL, {"name": "maps"})
    assert run.view().names() == ("activate_skill", "find_place", "greet")


def test_the_options_are_checked_where_the_adapter_is_built(tools_dir: Path, make_loader: MakeLoader) -> None:
    registry = make_loader(tools_dir, watch=False).registry
    with pytest.raises(ValueError, match="discovery must be 'all' or 'search', got 'everything'"):
        ToolOffer(registry, discovery="everything")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="skills must be 'listed' or 'on-activation', got 'lazy'"):
        ToolOffer(registry, skills="lazy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='skills="on-activation" needs discovery="all"'):
        ToolOffer(registry, discovery="search", skills="on-activation")
    search = ToolOffer(registry, discovery="search")
    assert search.step() is search.step()
    assert search.step().names() == ("call_tool", "search_tools")
