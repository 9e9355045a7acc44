"""Fingerprints per registry generation: a result names the tool set that ran, even mid-reload."""

from __future__ import annotations

from pathlib import Path

import anyio
from support import FAST, eventually, write

from loader.fingerprint import tool_set_fingerprint
from loader.mcp.fingerprints import GenerationFingerprints
from loader.registry.changes import RegistryChangeSet
from loader.registry.snapshot import RegistrySnapshot
from loader.reload.loader import ToolLoader

GREET = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone."""
    return "{word} " + name
'''


def test_a_generation_is_fingerprinted_with_the_statuses_published_for_it(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    write(folder / "greet.py", GREET.format(word="hello"))
    loader = ToolLoader([folder], config=FAST)
    loader.scan()
    loader.start()
    fingerprints = GenerationFingerprints(loader)
    try:
        old = loader.fingerprint()
        assert fingerprints(loader.registry.snapshot()) == old
        # Registry listeners run right after the commit, before the loader publishes file statuses.
        committed: list[RegistrySnapshot] = []

        def on_commit(_: RegistryChangeSet) -> None:
            committed.append(loader.registry.snapshot())

        loader.registry.subscribe(on_commit)
        write(folder / "greet.py", GREET.format(word="hi"))  # same spec, new bytes
        eventually(lambda: loader.fingerprint() != old)
        new = loader.fingerprint()
        (snapshot,) = committed
        assert snapshot.invoke("greet", {"name": "ada"})["content"] == [{"text": "hi ada"}]
        assert anyio.run(fingerprints.settled, snapshot) == new
        assert fingerprints(snapshot) == new
    finally:
        fingerprints.close()
        loader.close()


def test_without_a_loader_names_and_specs_decide_at_once() -> None:
    from loader.registry.tool_registry import ToolRegistry
    from loader.tools.function_tool import FunctionTool

    def echo(text: str) -> str:
        """Echo."""
        return text

    registry = ToolRegistry()
    registry.register(FunctionTool(echo))
    fingerprints = GenerationFingerprints(None)
    snapshot = registry.snapshot()
    assert anyio.run(fingerprints.settled, snapshot) == tool_set_fingerprint(snapshot)
