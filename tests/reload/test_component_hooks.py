"""The ``tool_loader_component_*`` hooks: fired from each commit's one change set, beside the tool hooks."""

from __future__ import annotations

import threading
from pathlib import Path

from support import MakeLoader, eventually, function_tool_source, write

from loader import AgentTool, Component, hookimpl
from loader.registry.changes import RegistryChangeSet

PROMPT = "---\ndescription: Say hello.\n---\nHello {{who}}\n"
SKILL = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\n# pdf\n"


class Heard:
    """Every component and tool hook call, as ``(hook, kind, key or name, file name)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, str]] = []
        self.lock = threading.Lock()

    def _add(self, hook: str, kind: str, key: str, path: Path) -> None:
        with self.lock:
            self.calls.append((hook, kind, key, path.name))

    def take(self) -> list[tuple[str, str, str, str]]:
        with self.lock:
            taken, self.calls = self.calls, []
        return taken

    @hookimpl
    def tool_loader_component_added(self, component: Component, path: Path) -> None:
        self._add("added", component.kind.value, component.key, path)

    @hookimpl
    def tool_loader_component_replaced(self, component: Component, previous: Component, path: Path) -> None:
        assert (previous.kind, previous.key) == (component.kind, component.key)
        assert previous is not component
        self._add("replaced", component.kind.value, component.key, path)

    @hookimpl
    def tool_loader_component_removed(self, component: Component, path: Path) -> None:
        self._add("removed", component.kind.value, component.key, path)

    @hookimpl
    def tool_loader_tool_added(self, tool: AgentTool, path: Path) -> None:
        self._add("added", "tool", tool.tool_name, path)


def test_each_component_change_of_a_commit_calls_its_hook_once(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    heard = Heard()
    write(tools_dir / "prompts" / "greet.md", PROMPT)
    write(tools_dir / "kit.py", function_tool_source("kit"))
    loader = make_loader(tools_dir, plugins=[heard])
    assert sorted(heard.take()) == [
        ("added", "prompt", "greet", "greet.md"),
        ("added", "tool", "kit", "kit.py"),
    ]

    write(tools_dir / "prompts" / "greet.md", PROMPT.replace("Hello", "Hi"))
    eventually(lambda: heard.calls, message="the replaced prompt announced")
    assert heard.take() == [("replaced", "prompt", "greet", "greet.md")]

    write(tools_dir / "skills" / "pdf" / "SKILL.md", SKILL)
    eventually(lambda: len(heard.calls) >= 2, message="the skill announced")
    assert sorted(heard.take()) == [
        ("added", "skill", "pdf", "SKILL.md"),
        ("added", "skill-file", "skill://pdf/SKILL.md", "SKILL.md"),
    ]

    (tools_dir / "prompts" / "greet.md").unlink()
    eventually(lambda: heard.calls, timeout=30, message="the removed prompt announced")
    assert heard.take() == [("removed", "prompt", "greet", "greet.md")]
    assert loader.registry.snapshot().components()  # the skill stays


def test_the_hooks_say_what_the_registry_change_set_says(tools_dir: Path, make_loader: MakeLoader) -> None:
    """Derived from the same object: every hook call is one ``ComponentChange`` of a commit, none more."""
    heard = Heard()
    write(tools_dir / "resources" / "a.txt", "a\n")
    loader = make_loader(tools_dir, plugins=[heard])
    heard.take()
    committed: list[RegistryChangeSet] = []
    loader.registry.subscribe(committed.append)
    write(tools_dir / "resources" / "b.txt", "b\n")
    write(tools_dir / "resources" / "a.txt", "a, again\n")
    eventually(lambda: len(heard.calls) >= 2, message="both changes announced")
    assert loader.wait_idle()
    from_change_sets = sorted(
        (str(change.kind), change.current.kind.value, change.current.key, Path(change.source or "?").name)
        for change_set in committed
        for change in change_set.components
    )
    assert sorted(heard.take()) == from_change_sets
    assert [kind for kind, *_ in from_change_sets] == ["added", "replaced"]
