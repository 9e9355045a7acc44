"""The ``@tool`` decorator: both call forms, options, methods, class dispatch and misuse."""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Callable
from typing import Any, assert_type

import pytest

from loader.errors import InvalidToolNameError, ToolDefinitionError, ToolSignatureError
from loader.tools.decorator import tool
from loader.tools.function_tool import FunctionTool
from loader.types import AgentTool, ToolContext


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool()
def shout(text: str) -> str:
    """Shout."""
    return text.upper()


@tool(name="weather-now", description="Current weather.", category="weather", tags=("live",))
def weather(city: str) -> str:
    return city


@tool
async def aadd(a: int, b: int) -> int:
    return a + b


def test_bare_form() -> None:
    assert isinstance(add, FunctionTool) and isinstance(add, AgentTool)
    assert add(1, 2) == 3
    assert add.tool_name == "add"
    assert add.invoke({"a": 1, "b": 2}, tool_use_id="u") == {
        "toolUseId": "u",
        "status": "success",
        "content": [{"json": 3}],
    }


def test_called_form_without_options() -> None:
    assert isinstance(shout, FunctionTool)
    assert shout("hi") == "HI"
    assert shout.tool_spec["description"] == "Shout."


def test_called_form_with_options() -> None:
    assert weather.tool_name == "weather-now"
    assert weather.tool_spec["name"] == "weather-now"
    assert weather.tool_spec["description"] == "Current weather."
    assert weather.category == "weather"
    assert weather.tags == ("live",)
    assert weather("Oslo") == "Oslo"


def test_async_function_stays_awaitable() -> None:
    assert asyncio.run(aadd(1, 2)) == 3
    assert aadd.invoke({"a": 2, "b": 2}, tool_use_id="u")["content"] == [{"json": 4}]


def test_static_types_of_both_forms() -> None:
    # assert_type is checked by mypy over this file; at runtime it just returns its argument.
    typed: FunctionTool[..., int] = add
    assert typed is add
    assert_type(add(1, 2), int)
    decorator = tool(name="x")
    assert_type(decorator(lambda: 1), FunctionTool[[], int])


def test_context_raise_errors_and_input_schema_options() -> None:
    @tool(context=True, raise_errors=True)
    def strict(x: int, tool_context: ToolContext) -> str:
        if x < 0:
            raise ValueError("negative")
        return tool_context.tool_use["toolUseId"]

    assert strict.invoke({"x": 1}, tool_use_id="use-3")["content"] == [{"text": "use-3"}]
    with pytest.raises(ValueError, match="negative"):
        strict.invoke({"x": -1})

    @tool(input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    def search(q):  # type: ignore[no-untyped-def]
        return q

    assert search.invoke({"q": "x"}, tool_use_id="u")["content"] == [{"text": "x"}]
    assert (
        search.invoke({})["content"][0]["text"]
        == "Invalid input for tool 'search':\n- q: missing required parameter"
    )


class Greeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    @tool
    def greet(self, name: str) -> str:
        """Greet someone.

        Args:
            name: Who to greet.
        """
        return f"{self.greeting}, {name}"


def test_methods() -> None:
    assert Greeter("Hello").greet.invoke({"name": "Ada"}, tool_use_id="u")["content"] == [
        {"text": "Hello, Ada"}
    ]
    assert Greeter("Hi").greet("Bob") == "Hi, Bob"
    assert Greeter("Hi").greet.tool_spec["inputSchema"]["json"] == {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Who to greet."}},
        "required": ["name"],
    }


# -- classes are delegated ---------------------------------------------------------------------


@pytest.fixture
def class_tool_stub(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """Stand in for loader.class_tool, written and tested separately."""
    calls: list[tuple[Any, dict[str, Any]]] = []

    def decorate_class(cls: type, metadata: Any = None, **kwargs: Any) -> type:
        calls.append((cls, {"metadata": metadata, **kwargs}))
        return cls

    stub = types.ModuleType("loader.tools.class_tool")
    stub.decorate_class = decorate_class  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "loader.tools.class_tool", stub)
    return calls


def test_bare_decorator_on_class_delegates(class_tool_stub: list[tuple[Any, dict[str, Any]]]) -> None:
    class Thing:
        def execute(self) -> str:
            return "x"

    assert assert_type(tool(Thing), type[Thing]) is Thing
    assert class_tool_stub == [(Thing, {"metadata": None})]


def test_options_on_class_are_passed_through(class_tool_stub: list[tuple[Any, dict[str, Any]]]) -> None:
    class Thing:
        pass

    decorated = tool(name="thing", category="c", tags=["t"], version="1.0", requires_auth=True)(Thing)
    assert decorated is Thing
    assert class_tool_stub == [
        (
            Thing,
            {
                "metadata": None,
                "name": "thing",
                "category": "c",
                "tags": ["t"],
                "version": "1.0",
                "requires_auth": True,
            },
        )
    ]


def test_positional_metadata_for_classes(class_tool_stub: list[tuple[Any, dict[str, Any]]]) -> None:
    metadata = types.SimpleNamespace(name="meta")

    class Thing:
        pass

    tool(metadata)(Thing)  # type: ignore[call-overload]
    assert class_tool_stub == [(Thing, {"metadata": metadata})]


def test_options_that_do_not_fit(class_tool_stub: list[tuple[Any, dict[str, Any]]]) -> None:
    def fn() -> None:
        pass

    class Thing:
        pass

    with pytest.raises(ToolDefinitionError, match="version apply to class tools only"):
        tool(version="1")(fn)
    with pytest.raises(ToolDefinitionError, match="ToolMetadata describes class tools"):
        tool(types.SimpleNamespace(name="m"))(fn)  # type: ignore[call-overload]
    with pytest.raises(ToolDefinitionError, match="context, raise_errors apply to function tools only"):
        tool(context=True, raise_errors=True)(Thing)
    assert class_tool_stub == []


# -- misuse ---------------------------------------------------------------------------------------


class Plain:
    """A class pydantic cannot validate or describe."""


def test_misuse_fails_at_decoration_time() -> None:
    def star(*args: int) -> None:
        pass

    def kw(**kwargs: int) -> None:
        pass

    def opaque(handle: Plain) -> None:
        pass

    with pytest.raises(ToolSignatureError, match="star"):
        tool(star)
    with pytest.raises(ToolSignatureError, match="kw"):
        tool(kw)
    with pytest.raises(TypeError, match="Function 'opaque': parameter 'handle'"):
        tool(opaque)
    with pytest.raises(InvalidToolNameError):
        tool(name="no spaces allowed")(add.original_function)
    with pytest.raises(ValueError):
        tool(lambda: 1)  # '<lambda>' is not a valid tool name


def test_classmethod_object_is_rejected() -> None:
    def fn(cls: type) -> None:
        pass

    with pytest.raises(ToolDefinitionError, match="below @classmethod"):
        tool(classmethod(fn))  # type: ignore[call-overload]


def test_decorator_returns_a_callable() -> None:
    decorator: Callable[..., Any] = tool(category="x")
    assert callable(decorator)
