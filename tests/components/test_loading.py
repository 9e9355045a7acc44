"""Prompts and resources in tool files follow the tools' contract: one commit, last good kept, no ghosts."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import MakeLoader, eventually, write

from loader import ComponentKind, FileState, Prompt, RegistryChangeSet, Resource

PROMPT_AND_TOOL = """
from loader import prompt, resource, tool

@tool
def shout(text: str) -> str:
    \"\"\"Shout.\"\"\"
    return text.upper()

@prompt
def greet(name: str) -> str:
    return "VERSION " + name

@resource("data://motd")
def motd() -> str:
    return "VERSION"
"""


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Every contract holds where a prompt's or resource's function runs in a worker too."""
    return str(request.param)


def source(version: str) -> str:
    return PROMPT_AND_TOOL.replace("VERSION", version)


def prompt_text(snapshot_prompt: object, name: str = "Ann") -> str:
    assert isinstance(snapshot_prompt, Prompt)
    return str(snapshot_prompt.messages({"name": name})[0]["content"]["text"])


def test_tools_prompts_and_resources_of_a_save_go_live_in_one_commit(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "kit.py", source("v1"))
    ld = make_loader(tools_dir)
    snapshot = ld.registry.snapshot()
    assert snapshot.names() == ("shout",)
    assert [c.component_id for c in snapshot.components()] == ["prompt:greet", "resource:data://motd"]
    assert ld.status()[0].components == ("prompt:greet", "resource:data://motd")
    seen: list[RegistryChangeSet] = []
    ld.registry.subscribe(seen.append)

    write(tools_dir / "kit.py", source("v2"))
    eventually(lambda: seen, message="the save committed")
    assert len(seen) == 1
    change_set = seen[0]
    assert [c.name for c in change_set.changes] == ["shout"]
    assert sorted(c.current.component_id for c in change_set.components) == [
        "prompt:greet",
        "resource:data://motd",
    ]
    now = ld.registry.snapshot()
    assert now.generation == change_set.generation == snapshot.generation + 1
    assert prompt_text(now.component(ComponentKind.PROMPT, "greet")) == "v2 Ann"
    motd = now.component(ComponentKind.RESOURCE, "data://motd")
    assert isinstance(motd, Resource) and motd.read() == "v2"
    # the old snapshot still pins the old versions
    assert prompt_text(snapshot.component(ComponentKind.PROMPT, "greet")) == "v1 Ann"


def test_a_broken_save_keeps_the_last_good_prompt(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "kit.py", source("v1"))
    ld = make_loader(tools_dir)
    write(tools_dir / "kit.py", source("v2") + "\ndef broken(:\n")
    eventually(lambda: ld.status()[0].state is FileState.FAILED, message="the broken save reported")
    assert ld.status()[0].components == ("prompt:greet", "resource:data://motd")
    assert prompt_text(ld.registry.snapshot().component(ComponentKind.PROMPT, "greet")) == "v1 Ann"


def test_no_ghosts_after_a_rename_or_a_delete(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "kit.py", source("v1"))
    ld = make_loader(tools_dir)
    write(tools_dir / "kit.py", source("v1").replace("def greet", "def welcome"))
    eventually(lambda: ld.registry.snapshot().component(ComponentKind.PROMPT, "welcome"), message="renamed")
    assert ld.registry.snapshot().component(ComponentKind.PROMPT, "greet") is None
    (tools_dir / "kit.py").unlink()
    eventually(lambda: not ld.registry.snapshot().components(), message="deleted file's components gone")
    assert ld.registry.names() == ()


def test_two_files_claiming_one_prompt_name_are_a_conflict(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "a.py", "from loader import prompt\n\n@prompt\ndef greet() -> str:\n    return 'a'\n")
    write(tools_dir / "b.py", "from loader import prompt\n\n@prompt\ndef greet() -> str:\n    return 'b'\n")
    ld = make_loader(tools_dir, watch=False)
    by_name = {s.path.name: s for s in ld.status()}
    assert by_name["a.py"].components == ("prompt:greet",)
    assert by_name["b.py"].state is FileState.CONFLICT
    assert by_name["b.py"].conflicts == (("prompt:greet", tools_dir / "a.py"),)
    greet = ld.registry.snapshot().component(ComponentKind.PROMPT, "greet")
    assert isinstance(greet, Prompt) and greet.messages()[0]["content"]["text"] == "a"
    ld.close()
    assert not ld.registry.snapshot().components()
