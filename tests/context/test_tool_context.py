"""The tool context through the Python API: a caller's handlers reach every tool style, sync and async."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest

from loader import (
    AnswerAction,
    ContextCapability,
    ContextHandlers,
    ContextUnavailableError,
    LogEntry,
    LogLevel,
    ModelAnswer,
    ModelQuestion,
    ProgressUpdate,
    Root,
    RootsAnswer,
    RootsQuestion,
    ToolContext,
    ToolRegistry,
    UserAnswer,
    UserQuestion,
    tool,
)
from loader.tools.class_tool import ClassTool, decorate_class
from loader.tools.module_tool import ModuleTool
from loader.types import ToolSpec


class Recorder(ContextHandlers):
    """Handlers that remember everything and answer every question."""

    def __init__(self, content: dict[str, Any] | None = None) -> None:
        self.progress_updates: list[ProgressUpdate] = []
        self.entries: list[LogEntry] = []
        self.questions: list[Any] = []
        self.threads: list[str] = []
        self.content = content if content is not None else {"name": "Ada"}

    def progress(self, update: ProgressUpdate) -> None:
        self.threads.append(threading.current_thread().name)
        self.progress_updates.append(update)

    def log(self, entry: LogEntry) -> None:
        self.entries.append(entry)

    def ask_user(self, question: UserQuestion) -> UserAnswer:
        self.questions.append(question)
        return UserAnswer(AnswerAction.ACCEPT, dict(self.content))

    def ask_model(self, question: ModelQuestion) -> ModelAnswer:
        self.questions.append(question)
        return ModelAnswer(f"echo: {question.messages[-1].text}", model="test-model")

    def list_roots(self, question: RootsQuestion) -> RootsAnswer:
        self.questions.append(question)
        return RootsAnswer((Root("file:///work", "work"),))


NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool(context=True)
def greeter(tool_context: ToolContext) -> str:
    """Report progress, log, and greet the user by the name they give."""
    tool_context.report_progress(1, 2, "asking")
    tool_context.log("info", "about to ask", {"step": 1})
    answer = tool_context.ask_user("What is your name?", NAME_SCHEMA)
    tool_context.report_progress(2, 2)
    assert answer.content is not None
    return f"hello {answer.content['name']}"


@tool(context=True)
async def agreeter(tool_context: ToolContext) -> str:
    """The async form of every context call."""
    await tool_context.areport_progress(1, 3)
    await tool_context.alog(LogLevel.WARNING, "careful")
    answer = await tool_context.aask_user("Name?", NAME_SCHEMA)
    reply = await tool_context.aask_model("Say hi", max_tokens=20)
    roots = await tool_context.alist_roots()
    assert answer.content is not None
    return f"{answer.content['name']} / {reply.text} / {roots[0].uri}"


@tool(context=True)
def several(tool_context: ToolContext) -> list[str]:
    """Several questions at once; the answers come back in order."""
    user, model, roots = tool_context.ask(
        [
            tool_context.user_question("Name?", NAME_SCHEMA, key="user_name"),
            tool_context.model_question("Greeting?", max_tokens=10),
            tool_context.roots_question(),
        ]
    )
    assert isinstance(user, UserAnswer) and isinstance(model, ModelAnswer) and isinstance(roots, RootsAnswer)
    return [str(user.content), model.text, roots.roots[0].uri]


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    for function_tool in (greeter, agreeter, several):
        registry.register(function_tool)
    return registry


def text(result: Any) -> str:
    return str(result["content"][0].get("text", result["content"][0].get("json")))


def test_a_sync_tool_reaches_the_callers_handlers(registry: ToolRegistry) -> None:
    recorder = Recorder()
    result = registry.invoke("greeter", {}, context_handlers=recorder)
    assert result["status"] == "success", result
    assert text(result) == "hello Ada"
    assert recorder.progress_updates == [ProgressUpdate(1, 2, "asking"), ProgressUpdate(2, 2)]
    assert recorder.entries == [LogEntry(LogLevel.INFO, "about to ask", {"step": 1}, "greeter")]
    (question,) = recorder.questions
    assert question == UserQuestion("ask_user-1", "What is your name?", NAME_SCHEMA)


def test_an_async_tool_reaches_them_on_its_loop(registry: ToolRegistry) -> None:
    recorder = Recorder()
    result = asyncio.run(registry.ainvoke("agreeter", {}, context_handlers=recorder))
    assert text(result) == "Ada / echo: Say hi / file:///work", result
    assert [type(q).__name__ for q in recorder.questions] == [
        "UserQuestion",
        "ModelQuestion",
        "RootsQuestion",
    ]
    assert [q.key for q in recorder.questions] == ["ask_user-1", "ask_model-2", "list_roots-3"]
    assert recorder.entries[0].level is LogLevel.WARNING


def test_a_sync_tool_called_from_async_code_calls_its_handlers_on_its_own_thread(
    registry: ToolRegistry,
) -> None:
    recorder = Recorder()

    async def main() -> Any:
        loop_thread = threading.current_thread().name
        result = await registry.ainvoke("greeter", {}, context_handlers=recorder)
        return loop_thread, result

    loop_thread, result = asyncio.run(main())
    assert result["status"] == "success"
    assert recorder.threads and loop_thread not in recorder.threads


def test_several_questions_are_answered_in_order(registry: ToolRegistry) -> None:
    recorder = Recorder()
    result = registry.invoke("several", {}, context_handlers=recorder)
    assert result["content"][0]["json"] == ["{'name': 'Ada'}", "echo: Greeting?", "file:///work"]
    assert [q.key for q in recorder.questions] == ["user_name", "ask_model-1", "list_roots-2"]


def test_without_handlers_progress_and_logs_go_to_logging_and_questions_fail_clearly(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="loader.tool_context"):
        result = registry.invoke("greeter", {})
    assert result["status"] == "error"
    assert text(result) == (
        "Error: ContextUnavailableError - cannot ask the user: nobody answers questions in this call "
        "(its caller gave no context handlers)"
    )
    logged = [r.getMessage() for r in caplog.records if r.name == "loader.tool_context"]
    assert "progress=<1>, total=<2> | asking" in logged
    assert "tool_name=<greeter> | about to ask" in logged


def test_an_accepted_answer_must_match_the_schema(registry: ToolRegistry) -> None:
    result = registry.invoke("greeter", {}, context_handlers=Recorder(content={"name": 7}))
    assert result["status"] == "error"
    assert "the answer to 'ask_user-1' does not match its schema (name: 7 is not of type 'string')" in text(
        result
    )


def test_capabilities_follow_the_methods_a_handler_overrides() -> None:
    class ProgressOnly(ContextHandlers):
        def progress(self, update: ProgressUpdate) -> None:
            pass

    assert ProgressOnly().capabilities == frozenset()
    assert Recorder().capabilities == set(ContextCapability)
    context = ToolContext({"toolUseId": "t", "name": "n", "input": {}})
    assert not (context.can_ask_user or context.can_ask_model or context.can_list_roots)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.log("loud", "x"), "log level must be one of debug, info, notice, warning"),
        (lambda c: c.report_progress(float("nan")), "report_progress: progress must be a finite number"),
        (lambda c: c.ask_user(""), "ask_user: message must be a non-empty string"),
        (lambda c: c.ask_user("q", {"type": "array"}), "ask_user: schema must describe an object"),
        (lambda c: c.ask_model("q", max_tokens=0), "ask_model: max_tokens must be a positive integer"),
        (lambda c: c.ask_model([], max_tokens=5), "ask_model: messages must not be empty"),
    ],
)
def test_bad_arguments_name_the_call_and_the_parameter(call: Any, message: str) -> None:
    context = ToolContext({"toolUseId": "t", "name": "n", "input": {}})
    with pytest.raises(ValueError, match=message):
        call(context)


class Greeter:
    """A class tool whose execute takes the context."""

    def execute(self, params: dict[str, Any], tool_context: ToolContext) -> str:
        tool_context.log("notice", "class tool here")
        answer = tool_context.ask_user("Name?", NAME_SCHEMA)
        assert answer.content is not None
        return f"class {params['greeting']} {answer.content['name']}"


def test_a_class_tool_gets_the_context_when_execute_asks_for_it() -> None:
    cls = decorate_class(Greeter, name="class_greeter", parameters={"greeting": {"type": "string"}})
    recorder = Recorder()
    registry = ToolRegistry()
    registry.register(ClassTool.from_class(cls))
    result = registry.invoke("class_greeter", {"greeting": "hi"}, context_handlers=recorder)
    assert text(result) == "class hi Ada", result
    assert recorder.entries == [LogEntry(LogLevel.NOTICE, "class tool here", None, "class_greeter")]


def module_spec(name: str) -> ToolSpec:
    return {"name": name, "description": "Greets.", "inputSchema": {"json": {"type": "object"}}}


def module_greeter(tool_use: dict[str, Any], tool_context: ToolContext, **kwargs: Any) -> str:
    tool_context.report_progress(5)
    return f"module {sorted(kwargs)}"


def plain_module(tool_use: dict[str, Any]) -> str:
    return "plain"


def test_a_module_tool_gets_the_context_as_tool_context_and_never_the_handlers_as_a_keyword() -> None:
    recorder = Recorder()
    registry = ToolRegistry()
    registry.register(ModuleTool(module_spec("module_greeter"), module_greeter))
    registry.register(ModuleTool(module_spec("plain"), plain_module))
    result = registry.invoke("module_greeter", {}, invocation_state={"x": 1}, context_handlers=recorder)
    assert text(result) == "module ['x']", result
    assert recorder.progress_updates == [ProgressUpdate(5)]
    assert text(registry.invoke("plain", {}, context_handlers=recorder)) == "plain"


def test_handlers_ride_in_the_invocation_state_for_callers_below_the_registry() -> None:
    recorder = Recorder()
    from loader import CONTEXT_HANDLERS_KEY

    result = greeter.invoke({}, invocation_state={CONTEXT_HANDLERS_KEY: recorder})
    assert text(result) == "hello Ada"


def test_the_default_handlers_refuse_each_kind_of_question() -> None:
    context = ToolContext({"toolUseId": "t", "name": "n", "input": {}})
    with pytest.raises(ContextUnavailableError, match="cannot ask the model") as refused:
        context.ask_model("x", max_tokens=1)
    assert refused.value.capability == ContextCapability.ASK_MODEL
    with pytest.raises(ContextUnavailableError, match="cannot list the client's roots"):
        context.list_roots()


def test_the_tool_sees_the_callers_state_without_the_handlers() -> None:
    seen: list[dict[str, Any]] = []

    @tool(context=True)
    def peek(tool_context: ToolContext) -> str:
        seen.append(tool_context.invocation_state)
        return "ok"

    recorder = Recorder()
    registry = ToolRegistry()
    registry.register(peek)
    registry.invoke("peek", {}, invocation_state={"request": 1}, context_handlers=recorder)
    state: dict[str, Any] = {"request": 2}
    peek.invoke({}, invocation_state=state)
    assert seen == [{"request": 1}, {"request": 2}]
