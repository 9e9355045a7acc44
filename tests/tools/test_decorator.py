"""The ``@tool`` decorator: both call forms, options, methods, classes, local annotations and misuse."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, TypeAlias, assert_type

import pytest

from loader.context.tool_context import ToolContext
from loader.errors import InvalidToolNameError, ToolDefinitionError, ToolSignatureError
from loader.tools.class_tool import ClassTool, get_tool_metadata
from loader.tools.decorator import tool
from loader.tools.function_tool import FunctionTool
from loader.tools.metadata import ToolMetadata, ToolParameter
from loader.tools.options import CLASS_ONLY, FUNCTION_ONLY, ToolOptions
from loader.types import AgentTool


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


# -- classes get class-tool metadata ------------------------------------------------------------


def test_bare_decorator_on_class_attaches_metadata() -> None:
    class ThingTool:
        """Does a thing."""

        def execute(self, params: dict[str, Any]) -> str:
            return "x"

    assert assert_type(tool(ThingTool), type[ThingTool]) is ThingTool
    meta = get_tool_metadata(ThingTool)
    assert meta is not None
    assert (meta.name, meta.description, meta.version) == ("thing_tool", "Does a thing.", "1.0.0")


def test_options_on_class_are_passed_through() -> None:
    class Thing:
        """Thing."""

        def execute(self, params: dict[str, Any]) -> str:
            return "x"

    decorated = tool(
        name="thing",
        category="c",
        tags=["t"],
        version="2.0",
        requires_auth=True,
        parameters={"n": {"type": "integer"}},
        examples=[{"n": 1}],
    )(Thing)
    assert decorated is Thing
    assert get_tool_metadata(Thing) == ToolMetadata(
        name="thing",
        description="Thing.",
        category="c",
        tags=("t",),
        version="2.0",
        requires_auth=True,
        parameters={"n": ToolParameter(type="integer")},
        examples=({"n": 1},),
    )
    assert ClassTool(Thing()).tool_spec["inputSchema"]["json"]["required"] == ["n"]


def test_positional_metadata_for_classes() -> None:
    class Thing:
        def execute(self, params: dict[str, Any]) -> str:
            return "x"

    tool(ToolMetadata(name="meta", description="From metadata."), category="over")(Thing)
    assert get_tool_metadata(Thing) == ToolMetadata(
        name="meta", description="From metadata.", category="over"
    )


def test_options_that_do_not_fit() -> None:
    def fn() -> None:
        pass

    class Thing:
        def execute(self, params: dict[str, Any]) -> str:
            return "x"

    with pytest.raises(ToolDefinitionError, match="version apply to class tools only"):
        tool(version="1")(fn)
    with pytest.raises(ToolDefinitionError, match="ToolMetadata describes class tools"):
        tool(ToolMetadata(name="m"))(fn)  # type: ignore[type-var]
    with pytest.raises(ToolDefinitionError, match="context, raise_errors apply to function tools only"):
        tool(context=True, raise_errors=True)(Thing)
    assert get_tool_metadata(Thing) is None


# -- one options object ---------------------------------------------------------------------------


def test_tool_options_build_the_same_tool_as_keywords() -> None:
    def lookup(q: str) -> str:
        """Look up."""
        return q

    options = ToolOptions(name="find", description="Find it.", category="search", tags=("a", "b"))
    by_options = FunctionTool(lookup, options)
    by_keywords = FunctionTool(
        lookup, name="find", description="Find it.", category="search", tags=("a", "b")
    )
    decorated = tool(name="find", description="Find it.", category="search", tags=("a", "b"))(lookup)
    for made in (by_options, by_keywords, decorated):
        assert (made.tool_name, made.category, made.tags) == ("find", "search", ("a", "b"))
        assert made.tool_spec == by_options.tool_spec
    with pytest.raises(TypeError, match="not both"):
        FunctionTool(lookup, options, name="other")


def test_tool_options_say_which_were_given() -> None:
    options = ToolOptions(name="x", context=True, version="1")
    assert options.given(FUNCTION_ONLY) == ["context"]
    assert options.given(CLASS_ONLY) == ["version"]
    assert options.given_values() == {"name": "x", "context": True, "version": "1"}
    with pytest.raises(AttributeError):
        options.name = "y"  # type: ignore[misc]


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


def test_called_form_returns_a_decorator_that_makes_tools() -> None:
    decorator: Callable[..., Any] = tool(category="x")

    def plain(n: int) -> int:
        """Double."""
        return n * 2

    made = decorator(plain)
    assert isinstance(made, FunctionTool)
    assert (made.tool_name, made.category) == ("plain", "x")
    assert made.invoke({"n": 4}, tool_use_id="u")["content"] == [{"json": 8}]
    assert made(5) == 10


# -- annotations naming local things (this module has ``from __future__ import annotations``) ------


def test_annotations_naming_locals_resolve_at_decoration_time() -> None:
    from dataclasses import dataclass as local_dataclass
    from typing import Annotated as LocalAnnotated

    from pydantic import BaseModel as LocalBase
    from pydantic import Field as LocalField

    class LocalModel(LocalBase):
        x: int

    @local_dataclass
    class LocalPoint:
        x: int
        y: int

    @tool
    def bare(days: LocalAnnotated[int, LocalField(ge=1, le=14)], model: LocalModel) -> str:
        """Bare form."""
        return f"{days} {model.x}"

    @tool(name="called")
    def called(point: LocalPoint, days: LocalAnnotated[int, LocalField(ge=1)] = 1) -> str:
        """Called form."""
        return f"{point.x},{point.y} {days}"

    assert bare.invoke({"days": 3, "model": {"x": 7}})["content"] == [{"text": "3 7"}]
    assert bare.tool_spec["inputSchema"]["json"]["properties"]["days"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 14,
        "description": "Parameter days",
    }
    assert bare.invoke({"days": 20, "model": {"x": 7}})["content"][0] == {
        "text": "Invalid input for tool 'bare':\n- days: must be at most 14"
    }
    assert called.invoke({"point": {"x": 1, "y": 2}})["content"] == [{"text": "1,2 1"}]


def test_methods_naming_class_body_locals_resolve() -> None:
    class Holder:
        Alias: TypeAlias = int

        @tool
        def method(self, n: Alias) -> str:
            """Method."""
            return str(n * 2)

    assert Holder().method.invoke({"n": 4})["content"] == [{"text": "8"}]


def test_an_unresolvable_annotation_still_names_the_parameter() -> None:
    with pytest.raises(ToolSignatureError, match="parameter 'n'") as caught:

        @tool
        def broken(n: NoSuchName) -> str:  # type: ignore[name-defined]  # noqa: F821
            return ""

    assert caught.value.parameter == "n"


def test_module_level_tools_see_module_names_only() -> None:
    # The decorator's own local names ('options', 'target', ...) must never leak into annotations.
    assert add.tool_spec["inputSchema"]["json"]["properties"]["a"]["type"] == "integer"
    source = "from loader import tool\n\n@tool\ndef f(x: 'options') -> str:\n    return ''\n"
    with pytest.raises(ToolSignatureError, match="parameter 'x'"):
        exec(compile(source, "<module-level>", "exec"), {"__name__": "module_level_probe"})


def test_function_tool_built_directly_sees_local_names_too() -> None:
    from pydantic import Field as LocalField

    def bounded(n: Annotated[int, LocalField(le=3)]) -> int:
        """Bounded."""
        return n

    made = FunctionTool(bounded)
    assert made.invoke({"n": 2}, tool_use_id="u")["content"] == [{"json": 2}]
    assert made.invoke({"n": 9})["status"] == "error"
