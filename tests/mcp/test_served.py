"""What the server answers from: the loader's post-commit record, where tools and file hashes agree."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
from mcp import Client
from support import FAST, eventually, write

from loader.fingerprint import tool_set_fingerprint
from loader.mcp import MCPToolServer
from loader.mcp.wire import FINGERPRINT_META_KEY
from loader.registry.changes import RegistryChangeSet
from loader.reload.loader import ToolLoader
from loader.reload.published import Published
from loader.tools.function_tool import FunctionTool

GREET = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone."""
    return "{word} " + name
'''


def test_each_record_pairs_a_snapshot_with_the_statuses_of_that_commit(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    write(folder / "greet.py", GREET.format(word="hello"))
    loader = ToolLoader([folder], config=FAST)
    loader.scan()
    loader.start()
    records: list[Published] = []
    at_commit: list[Published] = []

    def on_commit(_: RegistryChangeSet) -> None:
        # Registry listeners run right after the commit, before the loader publishes the statuses:
        # the record published then is still the previous one, whole.
        at_commit.append(loader.published)

    loader.registry.subscribe(on_commit)
    loader.subscribe_published(records.append)
    try:
        first = loader.published
        write(folder / "greet.py", GREET.format(word="hi"))  # same spec, new bytes: only hashes differ
        eventually(lambda: loader.published.generation > first.generation)
        # On a loaded machine a batch can read the file empty mid-save: it publishes its statuses first, and
        # if the save's second half comes after the file's grace the empty file is a commit of its own. Every
        # record must pair up all the same, and each commit's listener sees the record before it, whole.
        eventually(
            lambda: bool(records) and "hi ada" in str(records[-1].snapshot.invoke("greet", {"name": "ada"}))
        )
        published = records[-1]
        generations = [r.generation for r in records]
        assert generations == sorted(generations) and published.generation > first.generation
        assert len(at_commit) == len({g for g in generations if g > first.generation})
        assert at_commit[0].generation == first.generation
        for record in [*records, *at_commit]:
            assert record.fingerprint == tool_set_fingerprint(record.snapshot, record.statuses.values())
        assert published.snapshot.invoke("greet", {"name": "ada"})["content"] == [{"text": "hi ada"}]
        statuses = list(published.statuses.values())
        assert published.fingerprint == tool_set_fingerprint(published.snapshot, statuses)
        assert first.fingerprint == tool_set_fingerprint(first.snapshot, first.statuses.values())
        assert loader.fingerprint() == published.fingerprint
    finally:
        loader.close()


def test_a_tool_registered_directly_is_published_and_served(tmp_path: Path) -> None:
    """A commit that is not the loader's own (a tool registered by hand) is published too."""

    def echo(text: str) -> str:
        """Echo."""
        return text

    folder = tmp_path / "tools"
    write(folder / "greet.py", GREET.format(word="hello"))
    loader = ToolLoader([folder], config=FAST)
    loader.scan()
    records: list[Published] = []
    loader.subscribe_published(records.append)
    try:
        loader.registry.register(FunctionTool(echo))
        assert [r.snapshot.names() for r in records] == [("echo", "greet")]
        assert loader.published.snapshot is loader.registry.snapshot()
        server = MCPToolServer(loader.registry, loader=loader)

        async def listed() -> tuple[list[str], object]:
            async with Client(server.server) as client:
                result = await client.list_tools()
                return [tool.name for tool in result.tools], (result.meta or {}).get(FINGERPRINT_META_KEY)

        names, fingerprint = anyio.run(listed)
        assert names == ["echo", "greet"]
        assert fingerprint == loader.fingerprint()
    finally:
        loader.close()


def test_a_direct_commit_during_a_batch_is_published_by_the_end_of_it(tmp_path: Path) -> None:
    """A commit that lands while the loader holds its batch lock is not lost: published right after."""

    def echo(text: str) -> str:
        """Echo."""
        return text

    folder = tmp_path / "tools"
    write(folder / "greet.py", GREET.format(word="hello"))
    loader = ToolLoader([folder], config=FAST)
    loader.scan()
    loader.start()
    try:
        entered, release = threading.Event(), threading.Event()

        def hold_the_batch() -> None:
            entered.set()
            release.wait(10)

        loader.subscribe(lambda event: hold_the_batch() if event.path.name == "greet.py" else None)
        write(folder / "greet.py", GREET.format(word="hi"))
        assert entered.wait(10)  # the loader is inside a batch, its lock held, announcing
        loader.registry.register(FunctionTool(echo))
        assert "echo" not in loader.published.snapshot  # not published under the batch's feet
        release.set()
        eventually(lambda: "echo" in loader.published.snapshot)
        assert loader.published.snapshot is loader.registry.snapshot()
    finally:
        release.set()
        loader.close()


def test_without_a_loader_names_and_specs_decide_at_once() -> None:
    from loader.registry.tool_registry import ToolRegistry

    def echo(text: str) -> str:
        """Echo."""
        return text

    registry = ToolRegistry()
    registry.register(FunctionTool(echo))
    server = MCPToolServer(registry)
    assert server.served().snapshot is registry.snapshot()
    assert server.fingerprint() == tool_set_fingerprint(registry.snapshot())
