"""FunctionTool: calling conventions, return shapes, streaming, context, methods, errors, speed."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import AsyncGenerator, Generator
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from loader.context.tool_context import ToolContext
from loader.errors import InvalidToolNameError, ToolDefinitionError, ToolSignatureError
from loader.tools.function_tool import FunctionTool
from loader.types import AgentTool, ToolResult, ToolUse


def run_stream(
    tool: AgentTool, tool_input: Any, state: dict[str, Any] | None = None, **kwargs: Any
) -> list[Any]:
    tool_use: ToolUse = {"toolUseId": "use-1", "name": tool.tool_name, "input": tool_input}

    async def collect() -> list[Any]:
        return [event async for event in tool.stream(tool_use, {} if state is None else state, **kwargs)]

    return asyncio.run(collect())


def ok(content: list[Any], tool_use_id: str = "use-1") -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "success", "content": content}


# -- the basics -------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def test_is_an_agent_tool_and_still_the_function() -> None:
    tool = FunctionTool(add)
    assert isinstance(tool, AgentTool)
    assert tool.tool_name == "add"
    assert tool.tool_type == "function"
    assert tool.supports_hot_reload is True
    assert tool(1, 2) == 3
    assert tool.__name__ == "add"
    assert tool.__doc__ == add.__doc__
    assert tool.__wrapped__ is add
    assert tool.__module__ == add.__module__
    assert tool.original_function is add
    assert tool.is_async is False and tool.is_generator is False


def test_spec() -> None:
    assert FunctionTool(add).tool_spec == {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "The first number."},
                    "b": {"type": "integer", "description": "The second number."},
                },
                "required": ["a", "b"],
            }
        },
    }


def test_spec_is_protected_from_callers() -> None:
    tool = FunctionTool(add)
    first = tool.tool_spec
    first["name"] = "changed"
    first["inputSchema"]["json"]["properties"].clear()
    assert tool.tool_spec == FunctionTool(add).tool_spec
    assert tool.tool_spec["name"] == "add"


def test_name_and_description_overrides() -> None:
    tool = FunctionTool(add, name="sum-numbers", description="Sums.")
    assert tool.tool_name == "sum-numbers"
    assert tool.tool_spec["name"] == "sum-numbers"
    assert tool.tool_spec["description"] == "Sums."


def test_wrapping_a_tool_again_starts_from_the_function() -> None:
    async def slow_add(a: int, b: int) -> int:
        return a + b

    renamed = FunctionTool(FunctionTool(slow_add), name="plus")
    assert renamed.original_function is slow_add
    assert renamed.is_async
    assert renamed.invoke({"a": 1, "b": 1}, tool_use_id="use-1") == ok([{"json": 2}])


def test_description_falls_back_to_function_name() -> None:
    def undocumented(x: int) -> int:
        return x

    assert FunctionTool(undocumented).tool_spec["description"] == "undocumented"


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dots.not.allowed", "ünïcode"])
def test_invalid_names(name: str) -> None:
    with pytest.raises(InvalidToolNameError):
        FunctionTool(add, name=name)


def located(x: int) -> int:  # located-marker
    return x


def test_source_location_category_tags_and_display() -> None:
    line = next(
        number
        for number, text in enumerate(Path(__file__).read_text().splitlines(), start=1)
        if text.endswith("# located-" + "marker")
    )
    tool = FunctionTool(located, category="math", tags=["numbers", "demo"])
    assert tool.source_file == __file__
    assert tool.source_line == line
    assert tool.category == "math"
    assert tool.tags == ("numbers", "demo")
    props = tool.get_display_properties()
    assert props == {
        "Name": "located",
        "Type": "function",
        "Function": "located",
        "Source": f"{__file__}:{line}",
    }
    props["Name"] = "changed"
    assert tool.get_display_properties()["Name"] == "located"
    assert FunctionTool(located, tags="single").tags == ("single",)
    assert FunctionTool(located).category is None and FunctionTool(located).tags == ()


# -- return shapes ------------------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    celsius: float


@dataclasses.dataclass
class Reading:
    value: int


class Opaque:
    def __str__(self) -> str:
        return "opaque!"


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("hello", [{"text": "hello"}]),
        (42, [{"json": 42}]),
        (1.5, [{"json": 1.5}]),
        (True, [{"json": True}]),
        (None, [{"json": None}]),
        ({"a": [1, 2]}, [{"json": {"a": [1, 2]}}]),
        ([1, "two"], [{"json": [1, "two"]}]),
        ((1, 2), [{"json": [1, 2]}]),
        (Weather(city="Oslo", celsius=3.5), [{"json": {"city": "Oslo", "celsius": 3.5}}]),
        (Reading(value=7), [{"json": {"value": 7}}]),
        (Opaque(), [{"text": "opaque!"}]),
    ],
    ids=lambda v: type(v).__name__,
)
def test_return_shapes(value: Any, content: list[Any]) -> None:
    def produce() -> Any:
        return value

    assert FunctionTool(produce).invoke(tool_use_id="use-1") == ok(content)


def test_tool_result_shaped_return_passes_through_with_the_right_id() -> None:
    def produce() -> dict[str, Any]:
        return {"toolUseId": "wrong", "status": "error", "content": [{"text": "nope"}]}

    assert FunctionTool(produce).invoke(tool_use_id="use-9") == {
        "toolUseId": "use-9",
        "status": "error",
        "content": [{"text": "nope"}],
    }


def test_output_schema_for_model_returns() -> None:
    def forecast(city: str) -> Weather:
        return Weather(city=city, celsius=1.0)

    async def aforecast(city: str) -> Weather:
        return Weather(city=city, celsius=1.0)

    expected = {
        "json": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
            "required": ["city", "celsius"],
        }
    }
    assert FunctionTool(forecast).tool_spec["outputSchema"] == expected
    assert FunctionTool(aforecast).tool_spec["outputSchema"] == expected
    assert "outputSchema" not in FunctionTool(add).tool_spec


# -- input ------------------------------------------------------------------------------------------


class Address(BaseModel):
    street: str
    zip: str = "00000"


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Color(Enum):
    RED = "red"
    BLUE = "blue"


def test_models_dataclasses_and_enums_arrive_as_instances() -> None:
    received: dict[str, Any] = {}

    def ship(address: Address, point: Point, stops: list[Address], color: Color = Color.RED) -> str:
        received.update(address=address, point=point, stops=stops, color=color)
        return "ok"

    result = FunctionTool(ship).invoke(
        {"address": {"street": "Main"}, "point": {"x": 1}, "stops": [{"street": "A"}], "color": "blue"}
    )
    assert result["status"] == "success"
    assert received == {
        "address": Address(street="Main"),
        "point": Point(x=1),
        "stops": [Address(street="A")],
        "color": Color.BLUE,
    }


def test_invalid_input_lists_every_problem() -> None:
    def weather(city: str, days: Annotated[int, Field(ge=1, le=14)] = 3) -> str:
        raise AssertionError("never called with bad input")

    result = FunctionTool(weather).invoke({"days": 20, "colour": "red"}, tool_use_id="use-1")
    problems = [
        {"parameter": "city", "problem": "missing required parameter"},
        {"parameter": "days", "problem": "must be at most 14"},
        {"parameter": "colour", "problem": "unexpected parameter"},
    ]
    assert result == {
        "toolUseId": "use-1",
        "status": "error",
        "content": [
            {
                "text": "Invalid input for tool 'weather':\n"
                "- city: missing required parameter\n"
                "- days: must be at most 14\n"
                "- colour: unexpected parameter"
            },
            {"json": {"errors": problems}},
        ],
    }


def test_nested_problem_paths() -> None:
    def ship(address: Address, stops: list[Point]) -> str:
        return "ok"

    result = FunctionTool(ship).invoke({"address": {"zip": 1}, "stops": [{"x": 1}, {"x": 2}, {"x": "far"}]})
    assert result["content"][1] == {
        "json": {
            "errors": [
                {"parameter": "address.street", "problem": "missing required field"},
                {"parameter": "address.zip", "problem": "must be a string"},
                {"parameter": "stops.2.x", "problem": "must be an integer"},
            ]
        }
    }


def test_missing_input_means_no_arguments() -> None:
    def hello(name: str = "world") -> str:
        return f"hello {name}"

    assert FunctionTool(hello).invoke(tool_use_id="use-1") == ok([{"text": "hello world"}])
    assert run_stream(FunctionTool(hello), None) == [ok([{"text": "hello world"}])]


def test_awkward_parameter_names_reach_the_function() -> None:
    def awkward(json: str, _private: int = 0, model_name: str = "m") -> str:
        return f"{json}-{_private}-{model_name}"

    tool = FunctionTool(awkward)
    assert tool.invoke({"json": "j", "_private": 2, "model_name": "x"}, tool_use_id="use-1") == ok(
        [{"text": "j-2-x"}]
    )


def test_positional_only_parameters() -> None:
    def divide(a: int, b: int, /, *, round_to: int = 2) -> float:
        return round(a / b, round_to)

    assert FunctionTool(divide).invoke({"a": 1, "b": 3, "round_to": 3}, tool_use_id="use-1") == ok(
        [{"json": 0.333}]
    )


# -- input_schema ----------------------------------------------------------------------------


def test_input_schema_dict_validates_with_jsonschema() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 14}},
        "required": ["city"],
        "additionalProperties": False,
    }

    def weather(city, days=1):  # type: ignore[no-untyped-def]
        return f"{city}:{days}"

    tool = FunctionTool(weather, input_schema=schema)
    assert tool.tool_spec["inputSchema"] == {"json": schema}
    assert tool.invoke({"city": "Oslo", "days": 2}, tool_use_id="use-1") == ok([{"text": "Oslo:2"}])
    bad = tool.invoke({"days": 20, "colour": 1})
    assert bad["content"][1] == {
        "json": {
            "errors": [
                {"parameter": "days", "problem": "must be at most 14"},
                {"parameter": "city", "problem": "missing required parameter"},
                {"parameter": "colour", "problem": "unexpected parameter"},
            ]
        }
    }
    schema["properties"].clear()  # the tool keeps its own copy
    assert tool.tool_spec["inputSchema"]["json"]["properties"] != {}


def test_input_schema_dict_in_bedrock_wrapper_and_kwargs() -> None:
    schema = {"json": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}

    def total(**values: int) -> int:
        return sum(values.values())

    tool = FunctionTool(total, input_schema=schema)
    assert tool.tool_spec["inputSchema"] == schema
    assert tool.invoke({"a": 1, "b": 2}, tool_use_id="use-1") == ok([{"json": 3}])


def test_input_schema_dict_without_type_still_needs_an_object() -> None:
    def echo(**values: Any) -> str:
        return "called"

    tool = FunctionTool(echo, input_schema={"properties": {"a": {"type": "integer"}}})
    assert tool.invoke("text")["content"][1] == {
        "json": {"errors": [{"parameter": "(input)", "problem": "must be a JSON object of named parameters"}]}
    }
    assert tool.invoke({"a": 1}, tool_use_id="use-1") == ok([{"text": "called"}])


def test_input_schema_dict_checked_at_decoration() -> None:
    def fn(a: int) -> int:
        return a

    with pytest.raises(ToolDefinitionError, match="not a valid JSON Schema"):
        FunctionTool(fn, input_schema={"type": "object", "properties": {"a": {"type": 5}}})
    with pytest.raises(ToolSignatureError, match="required parameter 'a' is missing from input_schema"):
        FunctionTool(fn, input_schema={"type": "object", "properties": {"b": {"type": "integer"}}})
    with pytest.raises(ToolSignatureError, match="property 'z' is not a parameter"):
        FunctionTool(fn, input_schema={"type": "object", "properties": {"a": {}, "z": {}}})


class WeatherQuery(BaseModel):
    city: str = Field(description="The city.")
    days: int = Field(default=1, ge=1, le=14)


def test_input_schema_model_passes_fields_as_keyword_arguments() -> None:
    def weather(city: str, days: int = 1) -> str:
        return f"{city}:{days}"

    tool = FunctionTool(weather, input_schema=WeatherQuery)
    assert tool.tool_spec["inputSchema"] == {
        "json": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 14,
                    "default": 1,
                    "description": "Parameter days",
                },
            },
            "required": ["city"],
        }
    }
    assert tool.invoke({"city": "Oslo"}, tool_use_id="use-1") == ok([{"text": "Oslo:1"}])
    assert tool.invoke({"city": "Oslo", "days": 30, "x": 1})["content"][1] == {
        "json": {
            "errors": [
                {"parameter": "days", "problem": "must be at most 14"},
                {"parameter": "x", "problem": "unexpected parameter"},
            ]
        }
    }


def test_input_schema_model_passes_the_instance_to_a_single_model_parameter() -> None:
    def weather(query: WeatherQuery) -> str:
        assert isinstance(query, WeatherQuery)
        return f"{query.city}:{query.days}"

    tool = FunctionTool(weather, input_schema=WeatherQuery)
    assert tool.tool_spec["inputSchema"]["json"]["required"] == ["city"]
    assert tool.invoke({"city": "Oslo", "days": 3}, tool_use_id="use-1") == ok([{"text": "Oslo:3"}])


def test_input_schema_model_respects_an_explicit_extra_setting() -> None:
    class Loose(BaseModel):
        model_config = ConfigDict(extra="ignore")
        a: int

    def fn(a: int) -> int:
        return a

    assert FunctionTool(fn, input_schema=Loose).invoke({"a": 1, "b": 2}, tool_use_id="use-1") == ok(
        [{"json": 1}]
    )


def test_input_schema_model_must_match_the_function() -> None:
    def too_few(city: str) -> str:
        return city

    def too_many(city: str, country: str, days: int = 1) -> str:
        return city

    with pytest.raises(ToolSignatureError, match="field 'days'"):
        FunctionTool(too_few, input_schema=WeatherQuery)
    with pytest.raises(ToolSignatureError, match="'country' is not a field"):
        FunctionTool(too_many, input_schema=WeatherQuery)


def test_input_schema_of_the_wrong_kind() -> None:
    with pytest.raises(ToolDefinitionError, match="JSON Schema dict or a pydantic model"):
        FunctionTool(add, input_schema=42)  # type: ignore[arg-type]


# -- exceptions -----------------------------------------------------------------------------------


def broken(x: int) -> int:
    raise ValueError(f"cannot handle {x}")


def test_exception_becomes_error_result_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="loader.tools.function_tool"):
        result = FunctionTool(broken).invoke({"x": 3}, tool_use_id="use-1")
    assert result == {
        "toolUseId": "use-1",
        "status": "error",
        "content": [{"text": "Error: ValueError - cannot handle 3"}],
    }
    [record] = caplog.records
    assert "tool_name=<broken>" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is ValueError


def test_raise_errors_propagates() -> None:
    tool = FunctionTool(broken, raise_errors=True)
    with pytest.raises(ValueError, match="cannot handle 3"):
        tool.invoke({"x": 3})
    with pytest.raises(ValueError, match="cannot handle 3"):
        asyncio.run(tool.ainvoke({"x": 3}))
    with pytest.raises(ValueError, match="cannot handle 3"):
        run_stream(tool, {"x": 3})
    # Invalid input is not the tool's exception: still an error result.
    assert tool.invoke({"x": "three"})["status"] == "error"


def test_async_exception_becomes_error_result() -> None:
    async def fails() -> None:
        raise KeyError("gone")

    assert FunctionTool(fails).invoke(tool_use_id="use-1") == {
        "toolUseId": "use-1",
        "status": "error",
        "content": [{"text": "Error: KeyError - 'gone'"}],
    }


# -- kinds of functions and streaming ---------------------------------------------------------


def count_up(n: int) -> Generator[int, None, str]:
    yield from range(n)
    return f"counted {n}"


def count_no_return(n: int) -> Generator[dict[str, int], None, None]:
    for i in range(n):
        yield {"step": i}


async def acount(n: int) -> AsyncGenerator[str, None]:
    for i in range(n):
        await asyncio.sleep(0)
        yield f"step {i}"


async def adouble(x: int) -> int:
    await asyncio.sleep(0)
    return x * 2


def test_kind_flags() -> None:
    assert (FunctionTool(count_up).is_async, FunctionTool(count_up).is_generator) == (False, True)
    assert (FunctionTool(acount).is_async, FunctionTool(acount).is_generator) == (True, True)
    assert (FunctionTool(adouble).is_async, FunctionTool(adouble).is_generator) == (True, False)


def test_sync_generator_streams_events_then_its_return_value() -> None:
    assert run_stream(FunctionTool(count_up), {"n": 3}) == [0, 1, 2, ok([{"text": "counted 3"}])]
    assert FunctionTool(count_up).invoke({"n": 2}, tool_use_id="use-1") == ok([{"text": "counted 2"}])


def test_sync_generator_without_return_ends_with_its_last_yield() -> None:
    assert run_stream(FunctionTool(count_no_return), {"n": 2}) == [
        {"step": 0},
        {"step": 1},
        ok([{"json": {"step": 1}}]),
    ]
    assert FunctionTool(count_no_return).invoke({"n": 2}, tool_use_id="use-1") == ok([{"json": {"step": 1}}])


def test_async_generator_streams_events_then_its_last_yield() -> None:
    assert run_stream(FunctionTool(acount), {"n": 3}) == [
        "step 0",
        "step 1",
        "step 2",
        ok([{"text": "step 2"}]),
    ]
    assert FunctionTool(acount).invoke({"n": 2}, tool_use_id="use-1") == ok([{"text": "step 1"}])
    assert asyncio.run(FunctionTool(acount).ainvoke({"n": 1}, tool_use_id="use-1")) == ok(
        [{"text": "step 0"}]
    )


def test_functions_stream_only_their_result() -> None:
    assert run_stream(FunctionTool(add), {"a": 1, "b": 2}) == [ok([{"json": 3}])]
    assert run_stream(FunctionTool(adouble), {"x": 4}) == [ok([{"json": 8}])]


def test_invalid_input_streams_one_error_result() -> None:
    [result] = run_stream(FunctionTool(count_up), {"n": "many"})
    assert result["status"] == "error"
    assert result["content"][0]["text"] == "Invalid input for tool 'count_up':\n- n: must be an integer"


def test_generator_failure_mid_stream_ends_with_error_result() -> None:
    def flaky() -> Generator[str, None, None]:
        yield "first"
        raise RuntimeError("lost connection")

    async def aflaky() -> AsyncGenerator[str, None]:
        yield "first"
        raise RuntimeError("lost connection")

    error = {
        "toolUseId": "use-1",
        "status": "error",
        "content": [{"text": "Error: RuntimeError - lost connection"}],
    }
    assert run_stream(FunctionTool(flaky), {}) == ["first", error]
    assert run_stream(FunctionTool(aflaky), {}) == ["first", error]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_abandoned_stream_closes_the_generator(asynchronous: bool) -> None:
    closed = threading.Event()

    def endless() -> Generator[int, None, None]:
        try:
            while True:
                yield 1
        finally:
            closed.set()

    async def aendless() -> AsyncGenerator[int, None]:
        try:
            while True:
                yield 1
        finally:
            closed.set()

    tool = FunctionTool(aendless if asynchronous else endless)

    async def take_one() -> Any:
        tool_use: ToolUse = {"toolUseId": "use-1", "name": tool.tool_name, "input": {}}
        stream = tool.stream(tool_use, {})
        first = await anext(stream)
        await stream.aclose()
        assert closed.is_set()  # closed by aclose itself, not later by garbage collection
        return first

    assert asyncio.run(take_one()) == 1


def test_async_function_invoke_inside_and_outside_a_loop() -> None:
    tool = FunctionTool(adouble)
    assert tool.invoke({"x": 2}, tool_use_id="use-1") == ok([{"json": 4}])

    async def inside() -> ToolResult:
        return tool.invoke({"x": 3}, tool_use_id="use-1")

    assert asyncio.run(inside()) == ok([{"json": 6}])
    assert asyncio.run(tool.ainvoke({"x": 5}, tool_use_id="use-1")) == ok([{"json": 10}])


def test_sync_tools_run_on_the_calling_thread_without_a_loop() -> None:
    seen: list[tuple[int, bool]] = []

    def where() -> str:
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        seen.append((threading.get_ident(), in_loop))
        return "here"

    tool = FunctionTool(where)
    threads_before = threading.active_count()
    tool.invoke()
    assert seen == [(threading.get_ident(), False)]
    asyncio.run(tool.ainvoke())
    run_stream(tool, {})
    assert [thread for thread, _ in seen] == [threading.get_ident()] * 3
    assert threading.active_count() == threads_before


# -- context and agent ----------------------------------------------------------------------------


def test_context_true_injects_tool_context() -> None:
    seen: list[ToolContext] = []

    def whoami(label: str, tool_context: ToolContext) -> str:
        seen.append(tool_context)
        return label

    tool = FunctionTool(whoami, context=True)
    assert "tool_context" not in tool.tool_spec["inputSchema"]["json"]["properties"]
    agent = object()
    assert (
        tool.invoke({"label": "x"}, tool_use_id="use-7", invocation_state={"k": 1}, agent=agent)["status"]
        == "success"
    )
    [context] = seen
    assert context.tool_use == {"toolUseId": "use-7", "name": "whoami", "input": {"label": "x"}}
    assert context.agent is agent
    assert context.invocation_state == {"k": 1, "agent": agent}


def test_named_context_in_stream_shares_the_invocation_state() -> None:
    seen: list[ToolContext] = []

    def remember(ctx: ToolContext) -> str:
        seen.append(ctx)
        ctx.invocation_state["written"] = True
        return "ok"

    state: dict[str, Any] = {"agent": "the-agent"}
    run_stream(FunctionTool(remember, context="ctx"), {}, state)
    [context] = seen
    assert context.tool_use == {"toolUseId": "use-1", "name": "remember", "input": {}}
    assert context.agent == "the-agent"
    assert context.invocation_state is state and state["written"] is True


def test_stream_uses_a_given_tool_context() -> None:
    given = ToolContext(tool_use={"toolUseId": "x", "name": "n", "input": {}}, agent="a")

    def echo(tool_context: ToolContext) -> str:
        assert tool_context is given
        return "same"

    assert run_stream(FunctionTool(echo, context=True), {}, _tool_context=given) == [ok([{"text": "same"}])]


def test_agent_parameter_is_injected_not_schema() -> None:
    def uses_agent(x: int, agent: Any = "default") -> str:
        return f"{x}:{agent}"

    tool = FunctionTool(uses_agent)
    assert tool.tool_spec["inputSchema"]["json"]["properties"] == {
        "x": {"type": "integer", "description": "Parameter x"}
    }
    assert tool.invoke({"x": 1}, tool_use_id="use-1") == ok([{"text": "1:default"}])
    assert tool.invoke({"x": 1}, tool_use_id="use-1", agent="bond") == ok([{"text": "1:bond"}])


def test_context_errors_at_decoration_time() -> None:
    def no_context(x: int) -> int:
        return x

    def undeclared(x: int, tool_context: ToolContext) -> int:
        return x

    with pytest.raises(ToolSignatureError, match="has no parameter 'tool_context'"):
        FunctionTool(no_context, context=True)
    with pytest.raises(ToolSignatureError, match="has no parameter 'ctx'"):
        FunctionTool(no_context, context="ctx")
    with pytest.raises(ToolSignatureError, match="context=True"):
        FunctionTool(undeclared)
    with pytest.raises(ToolDefinitionError, match="context="):
        FunctionTool(no_context, context="  ")


# -- methods ---------------------------------------------------------------------------------------


class Calculator:
    def __init__(self, factor: int) -> None:
        self.factor = factor

    @FunctionTool
    def scale(self, x: int) -> int:
        """Scale a number.

        Args:
            x: The number.
        """
        return x * self.factor

    @FunctionTool
    async def ascale(self, x: int) -> int:
        return x * self.factor


def test_methods_bind_to_instances() -> None:
    calc = Calculator(10)
    bound = calc.scale
    assert isinstance(bound, FunctionTool)
    assert bound(2) == 20
    assert bound.invoke({"x": 3}, tool_use_id="use-1") == ok([{"json": 30}])
    assert Calculator(2).scale.invoke({"x": 3}, tool_use_id="use-1") == ok([{"json": 6}])
    assert bound.tool_spec["inputSchema"]["json"] == {
        "type": "object",
        "properties": {"x": {"type": "integer", "description": "The number."}},
        "required": ["x"],
    }
    assert isinstance(Calculator.scale, FunctionTool)
    assert Calculator.scale(calc, 1) == 10
    assert asyncio.run(calc.ascale(4)) == 40
    assert calc.ascale.invoke({"x": 1}, tool_use_id="use-1") == ok([{"json": 10}])


# -- misuse -------------------------------------------------------------------------------------


def test_star_args_and_kwargs_are_rejected() -> None:
    def star(*values: int) -> int:
        return 0

    def double_star(a: int, **options: Any) -> int:
        return a

    with pytest.raises(ToolSignatureError, match=r"Function 'star': parameter '\*values'"):
        FunctionTool(star)
    with pytest.raises(ToolSignatureError, match=r"Function 'double_star': parameter '\*\*options'"):
        FunctionTool(double_star)


def test_unserialisable_annotation_is_rejected_with_names() -> None:
    def locked(flag: bool, lock: threading.Lock) -> None:
        pass

    with pytest.raises(ToolSignatureError) as caught:
        FunctionTool(locked)
    assert (caught.value.function, caught.value.parameter) == ("locked", "lock")
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)


def test_not_a_function() -> None:
    with pytest.raises(ToolDefinitionError):
        FunctionTool("text")  # type: ignore[arg-type]


# -- the sync path ----------------------------------------------------------------------------------
# Speed is measured by `python -m bench` (call_overhead), not asserted here; this proves the
# mechanism behind it: a sync tool runs on the caller's thread with no event loop.


def test_sync_invoke_runs_on_the_calling_thread_without_an_event_loop() -> None:
    import asyncio
    import threading

    seen: dict[str, Any] = {}

    def where(a: int, b: int) -> int:
        seen["thread"] = threading.current_thread()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            seen["loop"] = None
        else:
            seen["loop"] = "running"
        return a + b

    result = FunctionTool(where).invoke({"a": 1, "b": 2})
    assert result["status"] == "success"
    assert seen == {"thread": threading.current_thread(), "loop": None}
