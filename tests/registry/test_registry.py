"""ToolRegistry: names, lookups, calls, snapshots, generations, events, batches, cleanup, concurrency."""

from __future__ import annotations

import asyncio
import gc
import logging
import random
import threading
import weakref
from collections.abc import Callable
from typing import Any, Literal

import pytest
from support import eventually

from loader.errors import DuplicateToolError, InvalidToolNameError, ToolNameMismatchError, ToolNotFoundError
from loader.registry.changes import ChangeKind, RegistryChange, RegistryChangeSet
from loader.registry.snapshot import RegistryEntry, RegistrySnapshot
from loader.registry.tool_registry import ToolRegistry
from loader.tools.class_tool import ClassTool, decorate_class
from loader.tools.decorator import tool
from loader.types import AgentTool, ToolChoiceTool, ToolGenerator, ToolResult, ToolSpec, ToolUse

WAIT = 10.0


class Echo(AgentTool):
    """A tiny tool that answers with its label, or fails in the ways it is told to."""

    def __init__(
        self,
        name: str,
        label: str = "",
        *,
        description: str = "echoes",
        category: str | None = None,
        tags: tuple[str, ...] = (),
        raises: BaseException | None = None,
        returns: Any = None,
        cleanup_error: bool = False,
    ) -> None:
        super().__init__()
        self._name = name
        self.label = label or name
        self._description = description
        self._category = category
        self._tags = tags
        self._raises = raises
        self._returns = returns
        self._cleanup_error = cleanup_error
        self.cleanups = 0

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def tool_spec(self) -> ToolSpec:
        return {
            "name": self._name,
            "description": self._description,
            "inputSchema": {"json": {"type": "object"}},
        }

    @property
    def tool_type(self) -> str:
        return "test"

    @property
    def category(self) -> str | None:
        return self._category

    @property
    def tags(self) -> tuple[str, ...]:
        return self._tags

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        if self._raises is not None:
            raise self._raises
        if invocation_state.get("live") and self.cleanups:
            raise AssertionError(f"{self.label} called through the registry after its cleanup")
        if self._returns is not None:
            yield self._returns
            return
        yield {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": self.label}]}

    def cleanup(self) -> None:
        self.cleanups += 1
        if self._cleanup_error:
            raise RuntimeError("cleanup broke")


def text(result: ToolResult) -> str:
    return str(result["content"][0].get("text"))


def recorder(registry: ToolRegistry) -> list[RegistryChangeSet]:
    seen: list[RegistryChangeSet] = []
    registry.subscribe(seen.append)
    return seen


class TestNames:
    def test_register_get_and_listings(self) -> None:
        registry = ToolRegistry()
        b, a = Echo("b"), Echo("a")
        registry.register(b, source="/tools/b.py")
        registry.register(a)
        assert registry.names() == ("a", "b")
        assert registry.list() == [a, b]
        assert list(registry) == [a, b]
        assert len(registry) == 2
        assert "a" in registry and "c" not in registry and 3 not in registry
        assert registry.get("b") is b and registry.get("c") is None
        assert registry.source_of("b") == "/tools/b.py" and registry.source_of("a") is None

    def test_duplicate(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("weather"), source="/tools/w.py")
        with pytest.raises(DuplicateToolError) as info:
            registry.register(Echo("weather"))
        assert (info.value.name, info.value.existing_name, info.value.existing_source) == (
            "weather",
            "weather",
            "/tools/w.py",
        )
        assert registry.generation == 1

    def test_normalised_duplicate_and_lookup(self) -> None:
        registry = ToolRegistry()
        tool = Echo("my_tool")
        registry.register(tool)
        with pytest.raises(DuplicateToolError, match="as 'my_tool'") as info:
            registry.register(Echo("my-tool"))
        assert info.value.existing_name == "my_tool"
        assert registry.get("my-tool") is tool
        assert "my-tool" in registry
        assert text(registry.invoke("my-tool")) == "my_tool"

    def test_exact_name_wins_over_normalised(self) -> None:
        snapshot = RegistrySnapshot(1, [])
        assert snapshot.get("x") is None
        registry = ToolRegistry()
        registry.register(Echo("a-b"))
        assert registry.get("a-b") is registry.get("a_b")

    def test_invalid_objects(self) -> None:
        registry = ToolRegistry()
        with pytest.raises(TypeError, match="AgentTool"):
            registry.register("nope")
        with pytest.raises(InvalidToolNameError):
            registry.register(Echo("bad name"))
        assert registry.generation == 0

    def test_replace_is_an_upsert(self) -> None:
        registry = ToolRegistry()
        v1, v2 = Echo("t", "v1"), Echo("t", "v2")
        assert registry.replace(v1, source="one") is None
        assert registry.replace(v2, source="two") is v1
        assert registry.get("t") is v2 and registry.source_of("t") == "two"
        assert v1.cleanups == 1 and v2.cleanups == 0

    def test_replace_across_spellings(self) -> None:
        registry = ToolRegistry()
        old = Echo("my_tool")
        registry.register(old)
        seen = recorder(registry)
        new = Echo("my-tool")
        assert registry.replace(new) is old
        assert registry.names() == ("my-tool",)
        assert [(c.kind, c.name) for c in seen[0].changes] == [
            (ChangeKind.REMOVED, "my_tool"),
            (ChangeKind.ADDED, "my-tool"),
        ]

    def test_unregister(self) -> None:
        registry = ToolRegistry()
        tool = Echo("t")
        registry.register(tool)
        assert registry.unregister("t") is tool
        assert registry.names() == ()
        assert tool.cleanups == 1
        with pytest.raises(ToolNotFoundError) as info:
            registry.unregister("t")
        assert info.value.name == "t"


class TestSearchAndConfig:
    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        registry.register(
            Echo("weather", description="Forecast the WEATHER", category="Data", tags=("api", "geo"))
        )
        registry.register(Echo("maps", description="Draw maps", category="data", tags=("geo",)))
        registry.register(Echo("shell", description="Run commands", category="System"))
        return registry

    def names(self, tools: list[AgentTool]) -> list[str]:
        return [tool.tool_name for tool in tools]

    def test_search(self) -> None:
        registry = self.registry()
        assert self.names(registry.search()) == ["maps", "shell", "weather"]
        assert self.names(registry.search("weather")) == ["weather"]
        assert self.names(registry.search("MAP")) == ["maps"]
        assert self.names(registry.search("forecast")) == ["weather"]
        assert self.names(registry.search(category="DATA")) == ["maps", "weather"]
        assert self.names(registry.search(tags=["geo"])) == ["maps", "weather"]
        assert self.names(registry.search(tags=["geo", "API"])) == ["weather"]
        assert self.names(registry.search(tags="api")) == ["weather"]
        assert self.names(registry.search("cast", category="data", tags=["geo"])) == ["weather"]
        assert registry.search("nothing") == []

    def test_specs_and_tool_config(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("b", description="B"))
        registry.register(Echo("a", description="A"))
        specs: list[ToolSpec] = [
            {"name": "a", "description": "A", "inputSchema": {"json": {"type": "object"}}},
            {"name": "b", "description": "B", "inputSchema": {"json": {"type": "object"}}},
        ]
        assert registry.specs() == specs
        assert registry.tool_config() == {
            "tools": [{"toolSpec": specs[0]}, {"toolSpec": specs[1]}],
            "toolChoice": {"auto": {}},
        }
        choice: dict[Literal["tool"], ToolChoiceTool] = {"tool": {"name": "a"}}
        assert registry.tool_config(choice)["toolChoice"] == {"tool": {"name": "a"}}


class TestInvoke:
    def test_success(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("a"))
        assert registry.invoke("a", {}, tool_use_id="u1") == {
            "toolUseId": "u1",
            "status": "success",
            "content": [{"text": "a"}],
        }
        assert asyncio.run(registry.ainvoke("a", tool_use_id="u2"))["toolUseId"] == "u2"

    def test_unknown_tool(self) -> None:
        registry = ToolRegistry()
        assert text(registry.invoke("x")) == "Unknown tool: x. Available tools: none"
        registry.register(Echo("b"))
        registry.register(Echo("a"))
        result = registry.invoke("x", tool_use_id="u")
        assert result == {
            "toolUseId": "u",
            "status": "error",
            "content": [{"text": "Unknown tool: x. Available tools: a, b"}],
        }
        assert text(asyncio.run(registry.ainvoke("x"))).startswith("Unknown tool: x. Available tools: a, b")

    def test_tool_raising_inside_stream(self, caplog: pytest.LogCaptureFixture) -> None:
        registry = ToolRegistry()
        registry.register(Echo("boom", raises=RuntimeError("kaput")))
        with caplog.at_level(logging.ERROR, logger="loader.registry"):
            result = registry.invoke("boom", tool_use_id="u")
        assert result == {
            "toolUseId": "u",
            "status": "error",
            "content": [{"text": "Error: RuntimeError - kaput"}],
        }
        assert "tool_name=<boom> | tool call raised RuntimeError" in caplog.text
        assert text(asyncio.run(registry.ainvoke("boom"))) == "Error: RuntimeError - kaput"

    def test_tool_returning_garbage(self) -> None:
        class Odd(Echo):
            def invoke(self, input: Any = None, **kwargs: Any) -> ToolResult:
                return 42  # type: ignore[return-value]

        registry = ToolRegistry()
        registry.register(Echo("silent", returns=42))
        registry.register(Odd("odd"))
        assert text(registry.invoke("silent")) == "Error: the tool finished without producing a result"
        assert text(registry.invoke("odd")) == "Error: tool odd returned int, not a ToolResult"

    def test_result_gets_the_callers_id(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("fixed", returns={"toolUseId": "other", "status": "success", "content": []}))
        assert registry.invoke("fixed", tool_use_id="mine")["toolUseId"] == "mine"


class TestSnapshots:
    def test_snapshot_is_immutable_and_pinned_after_replace(self) -> None:
        registry = ToolRegistry()
        v1 = Echo("t", "v1")
        registry.register(v1, source="s1")
        snapshot = registry.snapshot()
        registry.replace(Echo("t", "v2"), source="s2")
        registry.register(Echo("u"))
        assert snapshot.generation == 1 and registry.generation == 3
        assert snapshot.names() == ("t",) and len(snapshot) == 1
        assert snapshot.get("t") is v1 and snapshot.source_of("t") == "s1"
        assert text(snapshot.invoke("t")) == "v1"
        assert text(asyncio.run(snapshot.ainvoke("t"))) == "v1"
        assert text(registry.invoke("t")) == "v2"
        assert snapshot.tools() == (v1,) and list(snapshot) == [v1] and "t" in snapshot

    def test_snapshot_pinned_after_unregister(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("t", "v1"))
        snapshot = registry.snapshot()
        registry.unregister("t")
        assert text(snapshot.invoke("t")) == "v1"
        assert text(registry.invoke("t")).startswith("Unknown tool: t")
        assert text(snapshot.invoke("zzz")) == "Unknown tool: zzz. Available tools: t"

    def test_a_narrowed_snapshot_drops_and_adds_tools_at_the_same_generation(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("a"), source="sa")
        registry.register(Echo("b"))
        snapshot = registry.snapshot()
        extra = Echo("c", "extra")
        narrowed = snapshot.narrowed(["b"], [RegistryEntry("c", extra, "sc")])
        assert narrowed.generation == snapshot.generation == registry.generation
        assert narrowed.names() == ("a", "c") and snapshot.names() == ("a", "b")
        assert narrowed.source_of("a") == "sa" and narrowed.source_of("c") == "sc"
        assert text(narrowed.invoke("c")) == "extra"
        assert text(narrowed.invoke("b")).startswith("Unknown tool: b")
        assert [hit.name for hit in narrowed.search_tools("echoes")] == ["a", "c"]
        assert narrowed.components() == snapshot.components()
        with pytest.raises(ToolNotFoundError):
            snapshot.narrowed(["zzz"])

    def test_snapshot_specs_and_config(self) -> None:
        registry = ToolRegistry()
        registry.register(Echo("a", description="A"))
        snapshot = registry.snapshot()
        assert snapshot.specs() == registry.specs()
        assert snapshot.tool_config() == registry.tool_config()

    def test_listings_stay_sorted_across_many_commits(self) -> None:
        """Each snapshot's listing derives from its predecessor's: check it against a plain sort."""
        rng = random.Random(7)
        registry = ToolRegistry()
        present: dict[str, Echo] = {}
        pinned: list[tuple[RegistrySnapshot, tuple[str, ...]]] = []
        for step in range(600):
            with registry.batch() as batch:
                for _ in range(rng.choice((1, 1, 2, 40))):
                    name = f"tool_{rng.randrange(300)}"
                    if name in present and rng.random() < 0.5:
                        batch.unregister(name)
                        del present[name]
                    else:
                        present[name] = Echo(name, str(step))
                        batch.replace(present[name])
            snapshot = registry.snapshot()
            if rng.random() < 0.3:  # readers list only now and then, so deltas pile up
                assert snapshot.names() == tuple(sorted(present))
                assert [t.tool_name for t in snapshot.tools()] == sorted(present)
                assert all(snapshot.get(n) is present[n] for n in present)
            if step % 50 == 0:
                pinned.append((snapshot, tuple(sorted(present))))
        assert registry.names() == tuple(sorted(present))
        for snapshot, expected in pinned:
            assert snapshot.names() == expected

    def test_generation_is_monotonic(self) -> None:
        registry = ToolRegistry()
        tool = Echo("a")
        generations = [registry.generation]
        registry.register(tool)
        generations.append(registry.generation)
        with pytest.raises(DuplicateToolError):
            registry.register(Echo("a"))
        generations.append(registry.generation)
        registry.replace(tool)  # same object, same source: no change
        generations.append(registry.generation)
        registry.replace(tool, source="elsewhere")
        generations.append(registry.generation)
        registry.unregister("a")
        generations.append(registry.generation)
        assert generations == [0, 1, 1, 1, 2, 3]
        assert tool.cleanups == 1


class TestEventsAndBatches:
    def test_single_changes(self) -> None:
        registry = ToolRegistry()
        seen = recorder(registry)
        v1, v2 = Echo("t", "v1"), Echo("t", "v2")
        registry.register(v1, source="f.py")
        registry.replace(v2, source="f.py")
        registry.unregister("t")
        assert seen == [
            RegistryChangeSet(1, (RegistryChange(ChangeKind.ADDED, "t", v1, None, "f.py"),)),
            RegistryChangeSet(2, (RegistryChange(ChangeKind.REPLACED, "t", v2, v1, "f.py"),)),
            RegistryChangeSet(3, (RegistryChange(ChangeKind.REMOVED, "t", None, v2, "f.py"),)),
        ]

    def test_one_change_set_per_batch(self) -> None:
        registry = ToolRegistry()
        old_a, old_b, new_a, c = Echo("a"), Echo("b"), Echo("a", "new"), Echo("c")
        registry.register(old_a, source="x.py")
        registry.register(old_b, source="x.py")
        seen = recorder(registry)
        with registry.batch() as batch:
            assert batch.replace(new_a, source="x.py") is old_a
            assert batch.unregister("b") is old_b
            batch.register(c, source="x.py")
            assert (
                batch.names() == ("a", "c") and "c" in batch and len(batch) == 2 and batch.get("a") is new_a
            )
            assert registry.names() == ("a", "b")  # readers still see the old state
        assert registry.generation == 3
        assert seen == [
            RegistryChangeSet(
                3,
                (
                    RegistryChange(ChangeKind.REPLACED, "a", new_a, old_a, "x.py"),
                    RegistryChange(ChangeKind.REMOVED, "b", None, old_b, "x.py"),
                    RegistryChange(ChangeKind.ADDED, "c", c, None, "x.py"),
                ),
            )
        ]
        assert (old_a.cleanups, old_b.cleanups, new_a.cleanups) == (1, 1, 0)

    def test_errors_surface_at_the_staging_call(self) -> None:
        registry = ToolRegistry()
        with registry.batch() as batch:
            batch.register(Echo("a"))
            with pytest.raises(DuplicateToolError):
                batch.register(Echo("a"))
            with pytest.raises(ToolNotFoundError):
                batch.unregister("zzz")
        assert registry.names() == ("a",)

    def test_rollback_on_exception(self) -> None:
        registry = ToolRegistry()
        keep = Echo("keep")
        registry.register(keep)
        seen = recorder(registry)
        with pytest.raises(RuntimeError, match="abort"), registry.batch() as batch:
            batch.unregister("keep")
            batch.register(Echo("new"))
            raise RuntimeError("abort")
        assert registry.names() == ("keep",) and registry.generation == 1
        assert seen == [] and keep.cleanups == 0
        with pytest.raises(RuntimeError, match="batch is closed"):
            batch.register(Echo("late"))

    def test_batch_that_changes_nothing_commits_nothing(self) -> None:
        registry = ToolRegistry()
        seen = recorder(registry)
        with registry.batch():
            pass
        with registry.batch() as batch:
            batch.register(Echo("temp"))
            batch.unregister("temp")
        assert registry.generation == 0 and seen == []

    def test_batch_exposes_what_it_committed(self) -> None:
        registry = ToolRegistry()
        seen = recorder(registry)
        old = Echo("a")
        registry.register(old)
        new, added = Echo("a", "new"), Echo("b")
        with registry.batch() as batch:
            batch.replace(new, source="x.py")
            batch.register(added, source="x.py")
            assert batch.committed is None  # nothing is committed while the block runs
        assert batch.committed is seen[-1]
        assert batch.committed == RegistryChangeSet(
            2,
            (
                RegistryChange(ChangeKind.REPLACED, "a", new, old, "x.py"),
                RegistryChange(ChangeKind.ADDED, "b", added, None, "x.py"),
            ),
        )

    def test_batch_that_commits_nothing_or_fails_has_no_change_set(self) -> None:
        registry = ToolRegistry()
        with registry.batch() as empty:
            pass
        assert empty.committed is None
        with pytest.raises(RuntimeError, match="abort"), registry.batch() as failed:
            failed.register(Echo("a"))
            raise RuntimeError("abort")
        assert failed.committed is None and registry.names() == ()

    def test_writing_to_the_registry_inside_its_own_batch_is_refused(self) -> None:
        registry = ToolRegistry()
        with registry.batch(), pytest.raises(RuntimeError, match="already open in this thread"):
            registry.register(Echo("a"))
        registry.register(Echo("a"))
        assert registry.names() == ("a",)

    def test_listener_exception_is_isolated(self, caplog: pytest.LogCaptureFixture) -> None:
        registry = ToolRegistry()

        def broken(change_set: RegistryChangeSet) -> None:
            raise ValueError("listener bug")

        registry.subscribe(broken)
        seen = recorder(registry)
        with caplog.at_level(logging.ERROR, logger="loader.registry"):
            registry.register(Echo("a"))
        assert [s.generation for s in seen] == [1]
        assert "listener raised" in caplog.text
        assert registry.names() == ("a",)

    def test_unsubscribe(self) -> None:
        registry = ToolRegistry()
        seen: list[RegistryChangeSet] = []
        unsubscribe = registry.subscribe(seen.append)
        registry.register(Echo("a"))
        unsubscribe()
        unsubscribe()
        registry.register(Echo("b"))
        assert [s.generation for s in seen] == [1]

    def test_listener_commits_are_delivered_after_the_current_change_set(self) -> None:
        registry = ToolRegistry()
        order: list[tuple[str, int]] = []

        def first(change_set: RegistryChangeSet) -> None:
            order.append(("first", change_set.generation))
            if change_set.generation == 1:
                registry.register(Echo("from-listener"))

        def second(change_set: RegistryChangeSet) -> None:
            order.append(("second", change_set.generation))

        registry.subscribe(first)
        registry.subscribe(second)
        registry.register(Echo("a"))
        assert order == [("first", 1), ("second", 1), ("first", 2), ("second", 2)]

    def test_delivery_order_under_concurrent_writers(self) -> None:
        registry = ToolRegistry()
        seen: list[int] = []
        registry.subscribe(lambda change_set: seen.append(change_set.generation))
        threads_count, per_thread = 8, 40
        barrier = threading.Barrier(threads_count)
        errors: list[BaseException] = []

        def writer(index: int) -> None:
            try:
                barrier.wait(WAIT)
                for n in range(per_thread):
                    registry.register(Echo(f"t{index}_{n}"))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert errors == []
        assert seen == list(range(1, threads_count * per_thread + 1))


def gated_tool(name: str, label: str, log: list[str]) -> tuple[ClassTool, threading.Event, threading.Event]:
    """A class tool whose execute waits for ``release``; ``started`` is set once a call is inside."""
    started, release = threading.Event(), threading.Event()

    class Gated:
        """Waits for the test."""

        def execute(self, params: dict[str, Any]) -> str:
            started.set()
            assert release.wait(WAIT)
            return label

        def cleanup(self) -> None:
            log.append(label)

    decorate_class(Gated, name=name)
    return ClassTool(Gated()), started, release


class TestCleanup:
    @pytest.mark.parametrize("through", ["registry", "snapshot", "narrowed"])
    def test_cleanup_waits_for_in_flight_calls(self, through: str) -> None:
        registry = ToolRegistry()
        log: list[str] = []
        old, started, release = gated_tool("slow", "old", log)
        registry.register(old)
        snapshot = registry.snapshot()
        results: list[ToolResult] = []
        callers = {
            "registry": registry.invoke,
            "snapshot": snapshot.invoke,
            "narrowed": snapshot.narrowed().invoke,
        }
        caller = callers[through]
        thread = threading.Thread(target=lambda: results.append(caller("slow")))
        thread.start()
        assert started.wait(WAIT)
        new, _, new_release = gated_tool("slow", "new", log)
        new_release.set()
        assert registry.replace(new) is old
        assert log == []
        release.set()
        thread.join(WAIT)
        assert not thread.is_alive()
        assert [text(r) for r in results] == ["old"]
        assert log == ["old"]
        assert text(registry.invoke("slow")) == "new"
        assert log == ["old"]

    def test_cleanup_after_the_last_of_several_calls(self) -> None:
        registry = ToolRegistry()
        log: list[str] = []
        tool, started, release = gated_tool("slow", "old", log)
        registry.register(tool)
        results: list[ToolResult] = []
        threads = [threading.Thread(target=lambda: results.append(registry.invoke("slow"))) for _ in range(3)]
        for thread in threads:
            thread.start()
        assert started.wait(WAIT)
        registry.unregister("slow")
        assert log == []
        release.set()
        for thread in threads:
            thread.join(WAIT)
        assert len(results) == 3 and log == ["old"]

    def test_async_cleanup_runs_on_the_callers_loop(self) -> None:
        registry = ToolRegistry()
        log: list[str] = []

        async def scenario() -> None:
            started, release = asyncio.Event(), asyncio.Event()
            loop = asyncio.get_running_loop()

            class AsyncGated:
                """Async gate."""

                async def execute(self, params: dict[str, Any]) -> str:
                    started.set()
                    await release.wait()
                    return "done"

                async def cleanup(self) -> None:
                    assert asyncio.get_running_loop() is loop
                    log.append("cleaned")

            decorate_class(AsyncGated, name="agate")
            registry.register(ClassTool(AsyncGated()))
            task = asyncio.create_task(registry.ainvoke("agate"))
            await asyncio.wait_for(started.wait(), WAIT)
            registry.unregister("agate")
            assert log == []
            release.set()
            result = await asyncio.wait_for(task, WAIT)
            assert text(result) == "done"
            assert log == ["cleaned"]

        asyncio.run(scenario())

    def test_readded_tool_is_not_cleaned_up(self) -> None:
        registry = ToolRegistry()
        log: list[str] = []
        tool, started, release = gated_tool("slow", "kept", log)
        registry.register(tool)
        thread = threading.Thread(target=lambda: registry.invoke("slow"))
        thread.start()
        assert started.wait(WAIT)
        registry.unregister("slow")
        registry.register(tool)
        release.set()
        thread.join(WAIT)
        assert log == []

    def test_same_object_under_two_names_is_cleaned_when_the_last_goes(self) -> None:
        class Alias(Echo):
            def __init__(self) -> None:
                super().__init__("first")
                self.current = "first"

            @property
            def tool_name(self) -> str:
                return self.current

        registry = ToolRegistry()
        tool = Alias()
        registry.register(tool)
        tool.current = "second"
        registry.register(tool)
        registry.unregister("first")
        assert tool.cleanups == 0
        registry.unregister("second")
        assert tool.cleanups == 1

    def test_cleanup_failure_is_logged_not_raised(self, caplog: pytest.LogCaptureFixture) -> None:
        registry = ToolRegistry()
        tool = Echo("a", cleanup_error=True)
        registry.register(tool)
        with caplog.at_level(logging.ERROR, logger="loader.registry"):
            registry.unregister("a")
        assert tool.cleanups == 1
        assert "tool_name=<a> | cleanup failed" in caplog.text

    def test_close(self) -> None:
        registry = ToolRegistry()
        a, b = Echo("a"), Echo("b")
        registry.register(a)
        registry.register(b)
        seen = recorder(registry)
        registry.close()
        registry.close()
        assert registry.closed and registry.names() == () and registry.generation == 3
        assert (a.cleanups, b.cleanups) == (1, 1)
        assert [(c.kind, c.name) for s in seen for c in s.changes] == [
            (ChangeKind.REMOVED, "a"),
            (ChangeKind.REMOVED, "b"),
        ]
        assert len(seen) == 1
        with pytest.raises(RuntimeError, match="registry is closed"):
            registry.register(Echo("c"))
        with registry.batch() as batch:
            assert batch.names() == ()
            with pytest.raises(RuntimeError, match="registry is closed"):
                batch.unregister("a")
        assert registry.generation == 3
        assert text(registry.invoke("a")).startswith("Unknown tool: a")


def test_concurrency_stress() -> None:
    """Writers churn while readers call and snapshot; nothing raises and every view is consistent."""
    registry = ToolRegistry()
    names = [f"tool_{i}" for i in range(6)]
    delivered: list[int] = []
    registered: dict[int, Echo] = {}

    def listen(change_set: RegistryChangeSet) -> None:
        delivered.append(change_set.generation)
        for change in change_set.changes:
            if isinstance(change.tool, Echo):
                registered[id(change.tool)] = change.tool

    registry.subscribe(listen)
    errors: list[BaseException] = []
    writers_done = threading.Event()
    start = threading.Barrier(7)

    def guarded(body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                start.wait(WAIT)
                body()
            except BaseException as exc:
                errors.append(exc)

        return run

    def writer(seed: int) -> Callable[[], None]:
        def body() -> None:
            rng = random.Random(seed)
            for step in range(300):
                name = rng.choice(names)
                action = rng.choice(("register", "replace", "unregister", "batch"))
                try:
                    if action == "register":
                        registry.register(Echo(name, f"{seed}-{step}"))
                    elif action == "replace":
                        registry.replace(Echo(name, f"{seed}-{step}"))
                    elif action == "unregister":
                        registry.unregister(name)
                    else:
                        with registry.batch() as batch:
                            for other in rng.sample(names, 2):
                                batch.replace(Echo(other, f"{seed}-{step}"))
                except (DuplicateToolError, ToolNotFoundError):
                    pass

        return body

    def reader(seed: int) -> Callable[[], None]:
        def body() -> None:
            rng = random.Random(seed)
            last = -1
            rounds = 0
            while rounds < 300 or not writers_done.is_set():
                rounds += 1
                snapshot = registry.snapshot()
                assert snapshot.generation >= last
                last = snapshot.generation
                assert snapshot.names() == tuple(sorted(snapshot.names()))
                assert [tool.tool_name for tool in snapshot.tools()] == list(snapshot.names())
                assert len(snapshot) == len(snapshot.names())
                for name in snapshot.names():
                    assert snapshot.get(name) is not None
                name = rng.choice(names)
                pinned = snapshot.invoke(name)
                if name in snapshot.names():
                    assert pinned["status"] == "success", pinned
                else:
                    assert text(pinned).startswith(f"Unknown tool: {name}")
                live = registry.invoke(name, invocation_state={"live": True})
                assert live["status"] == "success" or text(live).startswith(f"Unknown tool: {name}")

        return body

    writers = [threading.Thread(target=guarded(writer(i))) for i in range(3)]
    readers = [threading.Thread(target=guarded(reader(100 + i))) for i in range(4)]
    for thread in writers + readers:
        thread.start()
    for thread in writers:
        thread.join(WAIT * 3)
    writers_done.set()
    for thread in readers:
        thread.join(WAIT)
    assert not any(thread.is_alive() for thread in writers + readers)
    assert errors == []
    assert delivered == list(range(1, registry.generation + 1))
    assert registry.names() == tuple(sorted(registry.names()))
    registry.close()
    assert registered and all(tool.cleanups == 1 for tool in registered.values())


@tool(
    name="currency-convert",
    description="Convert an amount between currencies.",
    parameters={"amount": {"type": "number", "description": "How much to convert."}},
)
class CurrencyConvertTool:
    """The agent-framework seed's shape: a decorated class, instantiated with its secret by the caller."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.cleanups = 0

    def execute(self, params: dict[str, Any]) -> str:
        return f"{params['amount']} converted with {self.api_key}"

    def cleanup(self) -> None:
        self.cleanups += 1


class TestDecoratedInstances:
    """An instance of a ``@tool`` class is accepted wherever a tool is, as that very instance."""

    def test_register_an_instance_directly_and_call_it(self) -> None:
        registry = ToolRegistry()
        converter = CurrencyConvertTool("sk-1")
        registry.register(converter)
        registered = registry.get("currency-convert")
        assert isinstance(registered, ClassTool) and registered.instance is converter
        assert text(registry.invoke("currency-convert", {"amount": 3})) == "3 converted with sk-1"
        assert (
            text(asyncio.run(registry.ainvoke("currency_convert", {"amount": 4}))) == "4 converted with sk-1"
        )

    def test_the_seeds_two_argument_form_checks_the_name(self) -> None:
        registry = ToolRegistry()
        converter = CurrencyConvertTool("sk-2")
        registry.register("currency-convert", converter)
        assert registry.get("currency-convert").instance is converter  # type: ignore[union-attr]
        with pytest.raises(ToolNameMismatchError, match=r"'exchange'.*named 'currency-convert'"):
            ToolRegistry().register("exchange", CurrencyConvertTool("sk-3"))
        with pytest.raises(TypeError, match="AgentTool"):
            ToolRegistry().register("currency-convert")
        with pytest.raises(TypeError, match="AgentTool or an instance of a @tool class, got Undecorated"):
            ToolRegistry().register(Undecorated())

    def test_replace_and_batch_take_instances_and_cleanup_runs_once_on_unregister(self) -> None:
        registry = ToolRegistry()
        first, second = CurrencyConvertTool("sk-a"), CurrencyConvertTool("sk-b")
        with registry.batch() as batch:
            batch.register(first, source="seed")
        generation = registry.generation
        # The same instance again: the same ClassTool, so nothing changes and nothing is cleaned up.
        assert registry.replace(first, source="seed") is registry.get("currency-convert")
        assert registry.generation == generation and first.cleanups == 0
        displaced = registry.replace("currency-convert", second)
        assert isinstance(displaced, ClassTool) and displaced.instance is first
        assert first.cleanups == 1 and second.cleanups == 0
        assert text(registry.invoke("currency-convert", {"amount": 1})) == "1 converted with sk-b"
        registry.unregister("currency-convert")
        assert second.cleanups == 1 and first.cleanups == 1


class Undecorated:
    def execute(self, params: dict[str, Any]) -> str:
        return "no metadata"


def test_an_unregistered_instance_is_not_kept_alive_by_its_wrapper_cache() -> None:
    registry = ToolRegistry()
    converter = CurrencyConvertTool("sk-gc")
    registry.register(converter)
    registry.unregister("currency-convert")
    gone = weakref.ref(converter)
    del converter
    gc.collect()
    assert gone() is None


class _SpyLock:
    """Stands in for the registry's write lock: notes every thread that asks for it, then waits as it would."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock
        self.asked: list[int] = []

    def __enter__(self) -> _SpyLock:
        self.asked.append(threading.get_ident())
        self._lock.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()


def test_a_second_writer_provably_waits_while_a_batch_is_open() -> None:
    """Deterministic: the first writer is held inside its batch until the second has asked for the lock."""
    registry = ToolRegistry()
    spy = _SpyLock(registry._write_lock)
    registry._write_lock = spy  # type: ignore[assignment]
    committed: list[list[str]] = []
    registry.subscribe(lambda change_set: committed.append([c.name for c in change_set.changes]))
    inside, release, second_done = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with registry.batch() as batch:
            batch.register(Echo("a"))
            inside.set()
            release.wait(WAIT)

    def second() -> None:
        registry.register(Echo("b"))
        second_done.set()

    writer = threading.Thread(target=first)
    writer.start()
    assert inside.wait(WAIT)
    other = threading.Thread(target=second)
    other.start()
    eventually(lambda: other.ident in spy.asked or second_done.is_set(), WAIT)
    assert not second_done.is_set(), "the second writer committed while a batch was open"
    assert registry.generation == 0
    release.set()
    writer.join(WAIT)
    other.join(WAIT)
    assert committed == [["a"], ["b"]] and registry.generation == 2
