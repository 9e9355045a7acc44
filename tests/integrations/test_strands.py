"""Strands Agents both ways: loader tools in a real ``Agent`` (driven by a scripted model, no network),
and Strands tool files (``from strands import tool``, ``strands_tools`` modules) in the loader.
"""

from __future__ import annotations

import copy
import importlib
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import strands
from strands import Agent
from strands.models import Model
from strands.tools import normalize_tool_spec
from strands.tools.loader import load_tools_from_module
from support import eventually, write

from loader.integrations.strands import LoaderToolProvider, StrandsFunctionTool, StrandsToolAdapter
from loader.reload.loader import ToolLoader
from loader.types import ToolUse

GREET_V1 = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"
'''

GREET_V2 = '''
from loader import tool

@tool
def greet(name: str) -> str:
    """Greet someone, loudly."""
    return f"HELLO {name.upper()}!"

@tool
def farewell(name: str) -> str:
    """Say goodbye."""
    return f"bye {name}"
'''


class ScriptedModel(Model):
    """A Strands model that replays scripted assistant turns and records the tools it was offered."""

    def __init__(self, *turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.offered: list[list[str]] = []

    def script(self, *turns: list[dict[str, Any]]) -> None:
        self.turns.extend(turns)

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> Any:
        return {}

    def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> Any:
        raise NotImplementedError

    async def stream(  # type: ignore[override]
        self,
        messages: Any,
        tool_specs: list[Any] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.offered.append(sorted(spec["name"] for spec in tool_specs or []))
        content = self.turns.pop(0)
        stop_reason = "end_turn"
        yield {"messageStart": {"role": "assistant"}}
        for block in content:
            if "text" in block:
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
                yield {"contentBlockStop": {}}
            if "toolUse" in block:
                stop_reason = "tool_use"
                use = block["toolUse"]
                yield {
                    "contentBlockStart": {
                        "start": {"toolUse": {"name": use["name"], "toolUseId": use["toolUseId"]}}
                    }
                }
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
                yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": stop_reason}}


def use(tool_name: str, tool_use_id: str, /, **tool_input: Any) -> list[dict[str, Any]]:
    """An assistant turn calling one tool."""
    return [{"toolUse": {"name": tool_name, "toolUseId": tool_use_id, "input": tool_input}}]


def say(text: str) -> list[dict[str, Any]]:
    return [{"text": text}]


def results(agent: Agent, *, whole: bool = False) -> dict[str, tuple[str, str]]:
    """Every tool result in the conversation: toolUseId -> (status, first text; ``whole``: every block's text)."""
    found: dict[str, tuple[str, str]] = {}
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                result = block["toolResult"]
                texts = [item.get("text") or json.dumps(item.get("json")) for item in result["content"]]
                found[result["toolUseId"]] = (result["status"], "\n".join(texts) if whole else texts[0])
    return found


def changed(loader: ToolLoader, since: int) -> Callable[[], bool]:
    return lambda: loader.registry.generation > since and loader.wait_idle(0.01)


# -- loader tools in a Strands agent -------------------------------------------------


def test_agent_sees_edits_additions_and_removals_on_its_next_turn(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "greet.py", GREET_V1)
    loader = make_loader(tools_dir)
    model = ScriptedModel(use("greet", "t1", name="ada"), say("done"))
    agent = Agent(model=model, plugins=[LoaderToolProvider(loader)], callback_handler=None)

    agent("greet ada")
    assert results(agent)["t1"] == ("success", "hello ada")
    assert model.offered == [["greet"], ["greet"]]

    generation = loader.registry.generation
    write(tools_dir / "greet.py", GREET_V2)
    eventually(changed(loader, generation), message="greet.py reloaded")
    model.script(use("greet", "t2", name="ada"), use("farewell", "t3", name="ada"), say("done"))
    agent("again")
    assert results(agent)["t2"] == ("success", "HELLO ADA!")
    assert results(agent)["t3"] == ("success", "bye ada")
    assert model.offered[2:] == [["farewell", "greet"]] * 3

    generation = loader.registry.generation
    (tools_dir / "greet.py").unlink()
    eventually(changed(loader, generation), message="greet.py removal applied")
    model.script(use("greet", "t4", name="ada"), say("done"))
    agent("once more")
    assert model.offered[5:] == [[], []]
    assert results(agent)["t4"] == ("error", "Unknown tool: greet")
    assert "greet" not in agent.tool_registry.registry


CONTEXT_TOOL = '''
from loader import ToolContext, tool

NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


@tool(context=True)
def chatty(tool_context: ToolContext) -> str:
    """Report progress, log, and ask the user when someone can answer."""
    tool_context.report_progress(1, 2, "working")
    tool_context.log("info", "a note")
    if not tool_context.can_ask_user:
        return "nobody to ask"
    answer = tool_context.ask_user("Name?", NAME)
    return f"hi {(answer.content or {}).get('name')}"
'''


class StreamEvents:
    """A Strands callback handler keeping the tool stream events."""

    def __init__(self) -> None:
        self.data: list[Any] = []

    def __call__(self, **event: Any) -> None:
        if "tool_stream_event" in event:
            self.data.append(event["tool_stream_event"]["data"])


def test_progress_and_logs_are_tool_stream_events_and_questions_reach_the_callers_handlers(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    from loader import AnswerAction, ContextHandlers, UserAnswer, UserQuestion

    write(tools_dir / "chatty.py", CONTEXT_TOOL)
    loader = make_loader(tools_dir, watch=False)
    events = StreamEvents()
    model = ScriptedModel(use("chatty", "t1"), say("done"))
    agent = Agent(model=model, plugins=[LoaderToolProvider(loader)], callback_handler=events)
    agent("go")
    assert results(agent)["t1"] == ("success", "nobody to ask")
    assert events.data == [
        {"progress": {"progress": 1, "total": 2, "message": "working"}},
        {"log": {"level": "info", "message": "a note", "data": None, "logger": "chatty"}},
    ]

    class Asker(ContextHandlers):
        def ask_user(self, question: UserQuestion) -> UserAnswer:
            return UserAnswer(AnswerAction.ACCEPT, {"name": "Ada"})

    model.script(use("chatty", "t2"), say("done"))
    agent("again", invocation_state={"tool_context_handlers": Asker()})
    assert results(agent)["t2"] == ("success", "hi Ada")


def test_tool_provider_form_serves_edits(tools_dir: Path, make_loader: Callable[..., ToolLoader]) -> None:
    write(tools_dir / "greet.py", GREET_V1)
    loader = make_loader(tools_dir)
    model = ScriptedModel(use("greet", "t1", name="bo"), say("done"))
    agent = Agent(model=model, tools=[LoaderToolProvider(loader)], callback_handler=None)
    agent("hi")
    assert results(agent)["t1"] == ("success", "hello bo")

    generation = loader.registry.generation
    write(tools_dir / "greet.py", GREET_V2)
    eventually(changed(loader, generation), message="greet.py reloaded")
    model.script(use("greet", "t2", name="bo"), say("done"))
    agent("hi again")
    assert results(agent)["t2"] == ("success", "HELLO BO!")
    spec = agent.tool_registry.registry["greet"].tool_spec
    assert spec == {
        "name": "greet",
        "description": "Greet someone, loudly.",
        "inputSchema": {
            "json": {
                "properties": {"name": {"description": "Parameter name", "type": "string"}},
                "required": ["name"],
                "type": "object",
            }
        },
    }


def test_an_agents_own_tool_keeps_its_name(tools_dir: Path, make_loader: Callable[..., ToolLoader]) -> None:
    @strands.tool
    def greet(name: str) -> str:
        """The agent's own greeting."""
        return f"own {name}"

    write(tools_dir / "greet.py", GREET_V1)
    write(tools_dir / "echo.py", GREET_V1.replace("greet", "echo"))
    loader = make_loader(tools_dir)
    model = ScriptedModel(use("greet", "t1", name="cy"), say("done"))
    agent = Agent(model=model, tools=[greet], plugins=[LoaderToolProvider(loader)], callback_handler=None)
    agent("hi")
    assert results(agent)["t1"] == ("success", "own cy")
    assert model.offered[0] == ["echo", "greet"]
    assert isinstance(agent.tool_registry.registry["echo"], StrandsToolAdapter)


def test_one_provider_keeps_several_agents_in_step(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "greet.py", GREET_V2)
    loader = make_loader(tools_dir)
    provider = LoaderToolProvider(loader)
    first = Agent(model=ScriptedModel(), plugins=[provider], callback_handler=None)
    second = Agent(model=ScriptedModel(), plugins=[provider], callback_handler=None)
    assert {"farewell", "greet"} <= first.tool_registry.registry.keys()
    assert {"farewell", "greet"} <= second.tool_registry.registry.keys()

    generation = loader.registry.generation
    write(tools_dir / "greet.py", GREET_V1)
    eventually(changed(loader, generation), message="farewell removed")
    for agent in (first, second):
        provider.sync(agent)
        assert "farewell" not in agent.tool_registry.registry
        assert isinstance(agent.tool_registry.registry["greet"], StrandsToolAdapter)


def test_provider_accepts_a_bare_registry_and_lists_adapters(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "greet.py", GREET_V2)
    loader = make_loader(tools_dir, watch=False)
    provider = LoaderToolProvider(loader.registry, name="mine")
    assert provider.name == "mine"
    assert provider.registry is loader.registry
    adapters = provider.adapters()
    assert [adapter.tool_name for adapter in adapters] == ["farewell", "greet"]
    greet = loader.registry.get("greet")
    assert greet is not None
    assert adapters[1].tool_spec == greet.tool_spec
    assert adapters[1].tool_spec is not greet.tool_spec


def test_search_discovery_finds_and_calls_a_tool_saved_after_the_provider_was_built(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "greet.py", GREET_V1)
    loader = make_loader(tools_dir)
    model = ScriptedModel()
    agent = Agent(
        model=model, plugins=[LoaderToolProvider(loader, discovery="search")], callback_handler=None
    )

    generation = loader.registry.generation
    write(tools_dir / "wave.py", GREET_V1.replace("greet", "wave").replace("Greet", "Wave at"))
    eventually(changed(loader, generation), message="wave.py loaded")
    model.script(
        use("search_tools", "t1", query="wave at someone"),
        use("call_tool", "t2", name="wave", arguments={"name": "x"}),
        use("call_tool", "t3", name="wave_hand", arguments={}),
        say("done"),
    )
    agent("wave")
    assert model.offered == [["call_tool", "search_tools"]] * 4
    found = results(agent, whole=True)
    assert found["t1"][0] == "success" and '"name": "wave"' in found["t1"][1]
    assert found["t2"] == ("success", "hello x")
    assert found["t3"][0] == "error"
    assert "Unknown tool: wave_hand" in found["t3"][1] and '"name": "wave"' in found["t3"][1]


SKILL_MD = "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nCall fill_form once per form.\n"


def test_a_skills_tools_are_offered_only_after_activate_skill_and_for_that_invocation_only(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(tools_dir / "greet.py", GREET_V1)
    write(tools_dir / "skills" / "pdf-forms" / "SKILL.md", SKILL_MD)
    write(
        tools_dir / "skills" / "pdf-forms" / "tools" / "fill_form.py", GREET_V1.replace("greet", "fill_form")
    )
    loader = make_loader(tools_dir, watch=False)
    model = ScriptedModel(
        use("activate_skill", "t1", name="pdf-forms"), use("fill_form", "t2", name="ada"), say("done")
    )
    provider = LoaderToolProvider(loader, skills="on-activation")
    agent = Agent(model=model, plugins=[provider], callback_handler=None)
    agent("fill the form")
    assert model.offered == [
        ["activate_skill", "greet"],
        ["activate_skill", "fill_form", "greet"],
        ["activate_skill", "fill_form", "greet"],
    ]
    assert results(agent)["t1"] == ("success", "Call fill_form once per form.")
    assert results(agent)["t2"] == ("success", "hello ada")

    model.script(use("greet", "t3", name="bo"), say("done"))
    agent("again")  # a new invocation: the skill has to be activated again
    assert model.offered[3:] == [["activate_skill", "greet"]] * 2
    assert results(agent)["t3"] == ("success", "hello bo")

    with pytest.raises(ValueError, match="use Agent\\(plugins=\\[provider\\]\\)"):
        Agent(model=ScriptedModel(), tools=[provider], callback_handler=None)


# -- Strands tool files in the loader ----------------------------------------------

STRANDS_TOOLS = '''
from strands import tool
from strands_tools.current_time import current_time  # re-exported: not this file's tool

@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count.
    """
    return len(text.split())

@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()

@tool
async def countdown(start: int):
    """Count down to zero, streaming each number."""
    for number in range(start, -1, -1):
        yield number
'''


def test_strands_decorated_functions_load_as_tools(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    path = write(tools_dir / "text_tools.py", STRANDS_TOOLS)
    loader = make_loader(tools_dir)
    registry = loader.registry
    assert registry.names() == ("countdown", "shout", "word_count")
    tool = registry.get("word_count")
    assert isinstance(tool, StrandsFunctionTool)
    assert tool.tool_type == "function"
    assert tool.get_display_properties() == {
        "Name": "word_count",
        "Type": "function",
        "Framework": "Strands @tool",
        "Function": "word_count",
        "Source": str(path),
    }
    assert tool.tool_spec == {
        "name": "word_count",
        "description": "Count the words in a text.",
        "inputSchema": {
            "json": {
                "properties": {"text": {"description": "The text to count.", "type": "string"}},
                "required": ["text"],
                "type": "object",
            }
        },
    }
    assert tool.tool_spec == tool.strands_tool.tool_spec
    assert registry.invoke("word_count", {"text": "one two three"})["content"] == [{"text": "3"}]
    assert registry.invoke("shout", {"text": "hey"})["content"] == [{"text": "HEY"}]
    bad = registry.invoke("word_count", {})
    assert bad["status"] == "error"
    assert "text" in bad["content"][0]["text"]

    generation = registry.generation
    write(path, STRANDS_TOOLS.replace("len(text.split())", "len(text.split()) * 10"))
    eventually(changed(loader, generation), message="text_tools.py reloaded")
    assert registry.invoke("word_count", {"text": "one two three"})["content"] == [{"text": "30"}]


async def collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in stream]


def test_strands_tool_streams_unwrap_into_our_events(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    import anyio

    write(tools_dir / "text_tools.py", STRANDS_TOOLS)
    loader = make_loader(tools_dir, watch=False)
    tool = loader.registry.get("countdown")
    assert tool is not None
    tool_use: ToolUse = {"toolUseId": "c1", "name": "countdown", "input": {"start": 2}}
    events = anyio.run(collect, tool.stream(tool_use, {}))
    assert events == [2, 1, 0, {"toolUseId": "c1", "status": "success", "content": [{"text": "0"}]}]


# Modules of strands-agents-tools that import without credentials, network or missing optional packages.
COVERED = (
    "agent_graph batch bright_data calculator cron current_time editor environment exa file_read "
    "file_write generate_image generate_image_stability graph handoff_to_user http_request image_reader "
    "journal load_tool mcp_client memory nova_reels python_repl retrieve shell slack sleep speak stop "
    "swarm tavily think use_agent use_aws use_llm workflow"
).split()

SKIPPED = {
    "a2a_client": "needs the a2a package",
    "chat_video": "needs twelvelabs",
    "search_video": "needs twelvelabs",
    "diagram": "needs graphviz",
    "elasticsearch_memory": "needs elasticsearch",
    "mem0_memory": "needs mem0",
    "mongodb_memory": "needs pymongo",
    "rss": "needs feedparser",
    "use_computer": "needs opencv (cv2)",
    "agent_core_memory": "defines a provider class, no module-level tool",
    "browser": "a package with relative imports, not a single tool file",
    "code_interpreter": "a package with relative imports, not a single tool file",
}


def test_strands_agents_tools_modules_load_with_strands_own_specs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_loader: Callable[..., ToolLoader]
) -> None:
    # Some modules create folders at import (slack_events/ in the cwd, ~/.strands/workflows).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    package = Path(importlib.import_module("strands_tools").__file__ or "").parent
    every_module = {path.stem for path in package.glob("*.py")} | {
        p.name for p in package.iterdir() if p.is_dir()
    }
    every_module -= {"__init__", "__pycache__", "utils"}
    assert every_module == set(COVERED) | set(SKIPPED)

    folder = tmp_path / "strands_tools_copy"
    folder.mkdir()
    for name in COVERED:
        shutil.copy(package / f"{name}.py", folder / f"{name}.py")
    loader = make_loader(folder, watch=False)
    statuses = {status.path.stem: status for status in loader.status()}
    assert {name: str(status.state) for name, status in statuses.items()} == dict.fromkeys(COVERED, "loaded")

    for name in COVERED:
        theirs = {
            tool.tool_name: tool.tool_spec
            for tool in load_tools_from_module(importlib.import_module(f"strands_tools.{name}"), name)
        }
        ours = {}
        for tool_name in statuses[name].tools:
            registered = loader.registry.get(tool_name)
            assert registered is not None, tool_name
            ours[tool_name] = registered.tool_spec
        expected = {tool_name: _bedrock_wrapped(spec) for tool_name, spec in theirs.items()}
        assert ours == expected, name


def _bedrock_wrapped(spec: Any) -> Any:
    """Strands' spec, with a bare input schema wrapped as ``{"json": ...}`` exactly as Strands itself does.

    One module (generate_image_stability) writes its TOOL_SPEC input schema
    without the Bedrock wrapper; Strands wraps it when the agent registers the
    tool (``normalize_tool_spec``), the loader when it loads it.
    """
    if "json" in spec["inputSchema"]:
        return spec
    wrapped = {**spec, "inputSchema": {"json": spec["inputSchema"]}}
    assert normalize_tool_spec(copy.deepcopy(spec)) == wrapped
    return wrapped


def test_everything_else_works_without_strands(tools_dir: Path, tmp_path: Path) -> None:
    write(tools_dir / "greet.py", GREET_V1)
    write(
        tools_dir / "legacy.py",
        """
        TOOL_SPEC = {"name": "legacy", "description": "A module tool.", "inputSchema": {"json": {}}}

        def legacy(tool_use, **kwargs):
            return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "ok"}]}
        """,
    )
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["strands"] = None  # as if Strands were not installed
        from loader.reload.loader import ToolLoader, LoaderConfig
        loader = ToolLoader([{str(tools_dir)!r}], config=LoaderConfig(entry_point_plugins=False))
        report = loader.scan()
        print(sorted(loader.registry.names()), [str(s.state) for s in report.files])
        print(loader.registry.invoke("greet", {{"name": "x"}})["content"])
        try:
            import loader.integrations.strands
        except ImportError as exc:
            print("ImportError:", exc)
        print("strands imported:", "strands.tools" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['greet', 'legacy'] ['loaded', 'loaded']",
        "[{'text': 'hello x'}]",
        "ImportError: loader.integrations.strands needs Strands Agents: pip install 'strands-agents>=1.35'",
        "strands imported: False",
    ]
