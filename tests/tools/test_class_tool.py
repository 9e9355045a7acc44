"""Class-based tools: decoration, metadata errors, ClassTool calls, create_tool, helpers."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest

from loader.errors import InvalidToolNameError, ToolDefinitionError, ToolValidationError
from loader.registry.tool_registry import ToolRegistry
from loader.tools.class_tool import ClassTool, create_tool, decorate_class, get_tool_metadata, is_tool
from loader.tools.metadata import ToolMetadata, ToolParameter
from loader.tools.params import validate_tool_params
from loader.types import AgentTool, ToolGenerator, ToolSpec, ToolUse

WEATHER_PARAMS: dict[str, Any] = {
    "city": {"type": "string", "description": "City name"},
    "days": {"type": "integer", "min": 1, "max": 14, "default": 3},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "required": False},
}


class WeatherForecastTool:
    """Forecast the weather.

    Indented detail line.
    """

    def execute(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"city": params["city"], "days": params["days"], "thread": threading.get_ident()}


decorate_class(WeatherForecastTool, parameters=WEATHER_PARAMS, category="Weather", tags=["forecast", "api"])


def texts(result: Any) -> list[str]:
    return [block["text"] for block in result["content"] if "text" in block]


def jsons(result: Any) -> list[Any]:
    return [block["json"] for block in result["content"] if "json" in block]


class TestDecoration:
    def test_returns_the_class_itself_with_metadata(self) -> None:
        class Plain:
            """Doc."""

            def execute(self, params: dict[str, Any]) -> str:
                return "ok"

        assert decorate_class(Plain) is Plain
        meta = get_tool_metadata(Plain)
        assert meta is not None
        assert (meta.name, meta.description, meta.parameters) == ("plain", "Doc.", {})
        assert isinstance(Plain(), Plain)

    def test_name_is_snake_case_and_description_the_cleaned_docstring(self) -> None:
        meta = get_tool_metadata(WeatherForecastTool)
        assert meta is not None
        assert meta.name == "weather_forecast_tool"
        assert meta.description == "Forecast the weather.\n\nIndented detail line."
        assert meta.parameters["days"] == ToolParameter(type="integer", min=1, max=14, default=3)

    @pytest.mark.parametrize(
        ("cls_name", "tool_name"), [("HTTPClient", "http_client"), ("MyAPITool2", "my_api_tool2")]
    )
    def test_snake_case(self, cls_name: str, tool_name: str) -> None:
        cls = type(cls_name, (), {"execute": lambda self, params: None, "__doc__": "d"})
        meta = get_tool_metadata(decorate_class(cls))
        assert meta is not None and meta.name == tool_name

    def test_no_docstring_falls_back_to_the_name(self, caplog: pytest.LogCaptureFixture) -> None:
        class NoDoc:
            def execute(self, params: dict[str, Any]) -> None:
                return None

        with caplog.at_level(logging.WARNING, logger="loader.tools.class_tool"):
            decorate_class(NoDoc, name="nodoc")
        meta = get_tool_metadata(NoDoc)
        assert meta is not None and meta.description == "nodoc"
        assert "tool_name=<nodoc> | no description or docstring" in caplog.text

    def test_docstring_is_not_inherited(self) -> None:
        class Base:
            """Base doc."""

        class Child(Base):
            def execute(self, params: dict[str, Any]) -> None:
                return None

        meta = get_tool_metadata(decorate_class(Child))
        assert meta is not None and meta.description == "child"

    def test_metadata_object_with_keyword_overrides(self) -> None:
        base = ToolMetadata(name="base", description="from metadata", version="2.0.0")

        class Overridden:
            def execute(self, params: dict[str, Any]) -> None:
                return None

        meta = get_tool_metadata(decorate_class(Overridden, base, category="ops", tags=["x"]))
        assert meta == ToolMetadata(
            name="base", description="from metadata", version="2.0.0", category="ops", tags=("x",)
        )

    def test_subclass_inherits_metadata_and_can_be_redecorated(self) -> None:
        class Sub(WeatherForecastTool):
            pass

        assert get_tool_metadata(Sub) is get_tool_metadata(WeatherForecastTool)
        decorate_class(Sub, name="sub_tool", description="Sub.", parameters={"q": {"type": "string"}})
        meta = get_tool_metadata(Sub)
        assert meta is not None and meta.name == "sub_tool"
        with pytest.raises(ToolValidationError, match=r"^Missing required parameter: q$"):
            Sub().validate({})  # type: ignore[attr-defined]
        with pytest.raises(ToolValidationError, match=r"^Missing required parameter: city$"):
            WeatherForecastTool().validate({})  # type: ignore[attr-defined]

    def test_generated_validate_raises_like_the_reference(self) -> None:
        instance = WeatherForecastTool()
        assert instance.validate({"city": "Paris"}) is None  # type: ignore[attr-defined]
        with pytest.raises(ToolValidationError) as caught:
            instance.validate({"days": 40, "x": 1})  # type: ignore[attr-defined]
        assert str(caught.value) == (
            "Missing required parameter: city\nParameter days must be at most 14\nUnexpected parameter: x"
        )
        assert [(p.parameter, p.problem) for p in caught.value.problems] == [
            ("city", "missing required parameter"),
            ("days", "must be at most 14"),
            ("x", "unexpected parameter"),
        ]
        assert isinstance(caught.value, ValueError)

    def test_generated_validate_with_an_input_schema_raises_too(self) -> None:
        class Schema:
            """Schema."""

            def execute(self, params: dict[str, Any]) -> None:
                return None

        decorate_class(
            Schema,
            input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        )
        with pytest.raises(ToolValidationError, match=r"^Parameter n must be an integer$"):
            Schema().validate({"n": True})  # type: ignore[attr-defined]
        with pytest.raises(
            ToolValidationError, match=r"^Tool input must be a JSON object of named parameters$"
        ):
            Schema().validate([1])  # type: ignore[attr-defined]

    def test_custom_validate_is_kept(self) -> None:
        class Custom:
            """D."""

            def execute(self, params: dict[str, Any]) -> None:
                return None

            def validate(self, params: dict[str, Any]) -> list[str]:
                return ["custom"]

        decorate_class(Custom)
        assert Custom().validate({}) == ["custom"]


class TestDefinitionErrors:
    def make(self, **kwargs: Any) -> type:
        class Broken:
            """D."""

            def execute(self, params: dict[str, Any]) -> None:
                return None

        return decorate_class(Broken, **kwargs)

    def test_missing_execute(self) -> None:
        class NoExecute:
            """D."""

        with pytest.raises(ToolDefinitionError, match="NoExecute' has no execute method"):
            decorate_class(NoExecute)

    def test_execute_must_take_params(self) -> None:
        class TooFew:
            def execute(self) -> None:
                return None

        with pytest.raises(ToolDefinitionError, match=r"TooFew': execute must accept \(self, params\)"):
            decorate_class(TooFew)

    def test_not_a_class(self) -> None:
        with pytest.raises(ToolDefinitionError, match="expects a class"):
            decorate_class(len)  # type: ignore[arg-type]

    def test_invalid_name(self) -> None:
        with pytest.raises(InvalidToolNameError) as info:
            self.make(name="bad name")
        assert str(info.value) == (
            "Tool class 'TestDefinitionErrors.make.<locals>.Broken': Invalid tool name 'bad name': "
            "use 1 to 64 characters from letters, digits, '_' and '-'"
        )
        assert info.value.name == "bad name"

    @pytest.mark.parametrize(
        ("parameters", "message"),
        [
            ({"days": {"type": "int"}}, "parameter 'days' field 'type': unknown type 'int'; use one of"),
            (
                {"days": {"type": "integer", "min": 9, "max": 1}},
                "parameter 'days': min (9) is greater than max (1)",
            ),
            (
                {"code": {"type": "string", "pattern": "[A-"}},
                "parameter 'code': pattern '[A-' is not a valid regex",
            ),
            (
                {"a": {"type": "object", "properties": {"zip": {"type": "number", "min": 2, "max": 1}}}},
                "parameter 'a.zip': min (2) is greater than max (1)",
            ),
            (
                {"t": {"type": "array", "items": {"type": "bogus"}}},
                "parameter 't.items' field 'type': unknown type",
            ),
            ({"n": {"type": "integer", "default": "x"}}, "parameter 'n': default 'x' is invalid"),
        ],
    )
    def test_bad_parameters_name_class_and_parameter(self, parameters: dict[str, Any], message: str) -> None:
        with pytest.raises(ToolDefinitionError) as info:
            self.make(parameters=parameters)
        assert "Tool class 'TestDefinitionErrors.make.<locals>.Broken': invalid tool metadata" in str(
            info.value
        )
        assert message in str(info.value)


class TestClassTool:
    def test_properties_and_spec(self) -> None:
        tool = ClassTool.from_class(WeatherForecastTool)
        assert (tool.tool_name, tool.tool_type, tool.supports_hot_reload) == (
            "weather_forecast_tool",
            "class",
            True,
        )
        assert (tool.category, tool.tags) == ("Weather", ("forecast", "api"))
        assert tool.metadata is get_tool_metadata(WeatherForecastTool)
        assert tool.tool_spec == {
            "name": "weather_forecast_tool",
            "description": "Forecast the weather.\n\nIndented detail line.",
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name"},
                        "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
                        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    },
                    "required": ["city"],
                    "additionalProperties": False,
                }
            },
        }

    def test_spec_copies_are_independent(self) -> None:
        tool = ClassTool.from_class(WeatherForecastTool)
        tool.tool_spec["inputSchema"]["json"]["properties"].clear()
        assert "city" in tool.tool_spec["inputSchema"]["json"]["properties"]

    def test_explicit_schemas(self) -> None:
        input_schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

        class Search:
            """Search."""

            def execute(self, params: dict[str, Any]) -> str:
                return str(params["q"])

        decorate_class(Search, input_schema=input_schema, output_schema={"type": "string"})
        tool = ClassTool(Search())
        expected: ToolSpec = {
            "name": "search",
            "description": "Search.",
            "inputSchema": {"json": input_schema},
            "outputSchema": {"json": {"type": "string"}},
        }
        assert tool.tool_spec == expected
        assert tool.invoke({"q": "x"})["status"] == "success"
        bad = tool.invoke({})
        assert texts(bad) == ["Invalid input for tool 'search':\nMissing required parameter: q"]

    def test_display_properties_and_source(self) -> None:
        tool = ClassTool.from_class(WeatherForecastTool)
        assert tool.get_display_properties() == {
            "Name": "weather_forecast_tool",
            "Type": "class",
            "Version": "1.0.0",
            "Category": "Weather",
            "Tags": "forecast, api",
            "Class": f"{__name__}.WeatherForecastTool",
        }
        assert tool.source_file == __file__
        assert tool.source_line is not None
        with open(__file__, encoding="utf-8") as handle:
            assert handle.readlines()[tool.source_line - 1].startswith("class WeatherForecastTool")

    def test_wrapping_errors(self) -> None:
        with pytest.raises(TypeError, match=r"use ClassTool\.from_class"):
            ClassTool(WeatherForecastTool)
        with pytest.raises(ToolDefinitionError, match="not decorated with @tool"):
            ClassTool(object())
        with pytest.raises(ToolDefinitionError, match="not decorated with @tool"):
            ClassTool.from_class(dict)

    def test_from_class_passes_arguments(self) -> None:
        class Greeter:
            """Greet."""

            def __init__(self, greeting: str) -> None:
                self.greeting = greeting

            def execute(self, params: dict[str, Any]) -> str:
                return f"{self.greeting} {params['who']}"

        decorate_class(Greeter, parameters={"who": {"type": "string"}})
        tool = ClassTool.from_class(Greeter, "hello")
        assert tool.invoke({"who": "you"}, tool_use_id="t1") == {
            "toolUseId": "t1",
            "status": "success",
            "content": [{"text": "hello you"}],
        }


class TestCalls:
    def test_sync_execute_runs_in_the_calling_thread_with_defaults(self) -> None:
        tool = ClassTool.from_class(WeatherForecastTool)
        result = tool.invoke({"city": "Paris"}, tool_use_id="id-1")
        assert result == {
            "toolUseId": "id-1",
            "status": "success",
            "content": [{"json": {"city": "Paris", "days": 3, "thread": threading.get_ident()}}],
        }

    def test_stream_yields_one_result(self) -> None:
        tool = ClassTool.from_class(WeatherForecastTool)
        use: ToolUse = {"toolUseId": "s1", "name": tool.tool_name, "input": {"city": "Oslo", "days": 2}}

        async def collect() -> list[Any]:
            return [event async for event in tool.stream(use, {})]

        events = asyncio.run(collect())
        assert len(events) == 1
        assert events[0]["toolUseId"] == "s1"
        assert jsons(events[0])[0]["days"] == 2

    def test_invalid_input_result(self) -> None:
        tool = ClassTool.from_class(WeatherForecastTool)
        result = tool.invoke({"days": 20, "unit": "kelvin", "zzz": True}, tool_use_id="bad")
        assert result == {
            "toolUseId": "bad",
            "status": "error",
            "content": [
                {
                    "text": "Invalid input for tool 'weather_forecast_tool':\n"
                    "Missing required parameter: city\n"
                    "Parameter days must be at most 14\n"
                    "Parameter unit must be one of: celsius, fahrenheit\n"
                    "Unexpected parameter: zzz"
                },
                {
                    "json": {
                        "errors": [
                            {"parameter": "city", "problem": "missing required parameter"},
                            {"parameter": "days", "problem": "must be at most 14"},
                            {"parameter": "unit", "problem": "must be one of: celsius, fahrenheit"},
                            {"parameter": "zzz", "problem": "unexpected parameter"},
                        ]
                    }
                },
            ],
        }

    def test_non_object_input(self) -> None:
        result = ClassTool.from_class(WeatherForecastTool).invoke([1, 2])
        assert jsons(result) == [
            {
                "errors": [
                    {"parameter": "(input)", "problem": "must be a JSON object of named parameters, not list"}
                ]
            }
        ]

    def test_async_execute(self) -> None:
        class Slowish:
            """Async."""

            async def execute(self, params: dict[str, Any]) -> str:
                await asyncio.sleep(0)
                return f"got {params['n']}"

        decorate_class(Slowish, parameters={"n": {"type": "integer"}})
        tool = ClassTool(Slowish())
        assert texts(tool.invoke({"n": 1})) == ["got 1"]
        assert texts(asyncio.run(tool.ainvoke({"n": 2}))) == ["got 2"]

        async def inside_a_loop() -> Any:
            return tool.invoke({"n": 3})

        assert texts(asyncio.run(inside_a_loop())) == ["got 3"]

    def test_execute_raising(self, caplog: pytest.LogCaptureFixture) -> None:
        class Boom:
            """Boom."""

            def execute(self, params: dict[str, Any]) -> None:
                raise RuntimeError("kaput")

        decorate_class(Boom)
        with caplog.at_level(logging.ERROR, logger="loader.tools.class_tool"):
            result = ClassTool(Boom()).invoke({})
        assert result["status"] == "error"
        assert texts(result) == ["Error: RuntimeError - kaput"]
        record = next(r for r in caplog.records if "tool_name=<boom>" in r.getMessage())
        assert record.exc_info is not None and record.exc_info[0] is RuntimeError

    def test_async_execute_raising(self) -> None:
        class AsyncBoom:
            """Boom."""

            async def execute(self, params: dict[str, Any]) -> None:
                raise KeyError("k")

        decorate_class(AsyncBoom)
        assert texts(asyncio.run(ClassTool(AsyncBoom()).ainvoke({}))) == ["Error: KeyError - 'k'"]


class TestCustomValidate:
    @staticmethod
    def tool_with(validate: Any) -> ClassTool:
        calls: list[dict[str, Any]] = []

        class Checked:
            """Checked."""

            def execute(self, params: dict[str, Any]) -> str:
                calls.append(params)
                return "ran"

        Checked.validate = validate  # type: ignore[attr-defined]
        decorate_class(Checked, parameters={"n": {"type": "integer", "default": 1}})
        return ClassTool(Checked())

    @pytest.mark.parametrize("outcome", [None, True, [], ()])
    def test_valid_outcomes(self, outcome: Any) -> None:
        tool = self.tool_with(lambda self, params: outcome)
        assert texts(tool.invoke({})) == ["ran"]

    @pytest.mark.parametrize(
        ("outcome", "problems"),
        [
            (["too big", "too odd"], ["too big", "too odd"]),
            (False, ["Validation failed"]),
            ("one problem", ["one problem"]),
            ({"valid": False, "errors": ["ref style"]}, ["ref style"]),
        ],
    )
    def test_invalid_outcomes(self, outcome: Any, problems: list[str]) -> None:
        result = self.tool_with(lambda self, params: outcome).invoke({}, tool_use_id="v")
        assert result == {
            "toolUseId": "v",
            "status": "error",
            "content": [
                {"text": "Invalid input for tool 'checked':\n" + "\n".join(problems)},
                {"json": {"errors": [{"parameter": "(input)", "problem": p} for p in problems]}},
            ],
        }

    def test_value_error_is_a_problem(self) -> None:
        def validate(self: Any, params: dict[str, Any]) -> None:
            raise ValueError(f"n={params['n']} is unlucky")

        assert texts(self.tool_with(validate).invoke({})) == [
            "Invalid input for tool 'checked':\nn=1 is unlucky"
        ]

    def test_tool_validation_error_keeps_each_problem(self) -> None:
        def validate(self: Any, params: dict[str, Any]) -> None:
            validate_tool_params(params, {"n": {"type": "integer", "max": 0}})

        result = self.tool_with(validate).invoke({}, tool_use_id="v")
        assert texts(result) == ["Invalid input for tool 'checked':\nParameter n must be at most 0"]
        assert jsons(result) == [{"errors": [{"parameter": "n", "problem": "must be at most 0"}]}]

    def test_other_exceptions_are_failures(self) -> None:
        def validate(self: Any, params: dict[str, Any]) -> None:
            raise LookupError("db down")

        assert texts(self.tool_with(validate).invoke({})) == ["Error: LookupError - db down"]

    def test_unsupported_return_is_a_failure(self) -> None:
        assert texts(self.tool_with(lambda self, params: 42).invoke({}))[0].startswith(
            "Error: TypeError - validate() returned int"
        )

    def test_async_validate(self) -> None:
        async def validate(self: Any, params: dict[str, Any]) -> list[str]:
            return [] if params["n"] < 5 else ["n too big"]

        tool = self.tool_with(validate)
        assert texts(tool.invoke({"n": 2})) == ["ran"]
        assert texts(asyncio.run(tool.ainvoke({"n": 7}))) == ["Invalid input for tool 'checked':\nn too big"]

    def test_declared_parameters_are_checked_first(self) -> None:
        seen: list[Any] = []
        tool = self.tool_with(lambda self, params: seen.append(params))
        assert texts(tool.invoke({"n": "x"})) == [
            "Invalid input for tool 'checked':\nParameter n must be of type integer"
        ]
        assert seen == []


class TestCleanup:
    def test_no_cleanup_method(self) -> None:
        assert ClassTool.from_class(WeatherForecastTool).cleanup() is None

    def test_sync_and_async_cleanup_via_registry_replace(self) -> None:
        log: list[str] = []

        class Sync:
            """S."""

            def execute(self, params: dict[str, Any]) -> None:
                return None

            def cleanup(self) -> None:
                log.append("sync")

        class Async:
            """A."""

            def execute(self, params: dict[str, Any]) -> None:
                return None

            async def cleanup(self) -> None:
                await asyncio.sleep(0)
                log.append("async")

        decorate_class(Sync, name="shared")
        decorate_class(Async, name="shared")
        registry = ToolRegistry()
        registry.register(ClassTool(Sync()))
        registry.replace(ClassTool(Async()))
        assert log == ["sync"]
        registry.replace(ClassTool(Sync()))
        assert log == ["sync", "async"]
        registry.close()
        assert log == ["sync", "async", "sync"]


class TestCreateTool:
    def test_sync_function(self) -> None:
        def double(params: dict[str, Any]) -> int:
            return int(params["n"]) * 2

        tool = create_tool({"name": "double", "parameters": {"n": {"type": "integer"}}}, double)
        assert tool.tool_spec == {
            "name": "double",
            "description": "double",
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                    "additionalProperties": False,
                }
            },
        }
        assert jsons(tool.invoke({"n": 4})) == [8]
        assert texts(tool.invoke({})) == ["Invalid input for tool 'double':\nMissing required parameter: n"]
        assert tool.get_display_properties()["Class"].endswith("test_sync_function.<locals>.double")
        assert tool.source_file == __file__

    def test_async_function_and_metadata_object(self) -> None:
        async def shout(params: dict[str, Any]) -> str:
            return str(params["text"]).upper()

        meta = ToolMetadata(
            name="shout", description="Shout.", parameters={"text": ToolParameter(type="string")}
        )
        tool = create_tool(meta, shout)
        assert tool.metadata == meta
        assert texts(tool.invoke({"text": "hi"})) == ["HI"]

    def test_invalid(self) -> None:
        with pytest.raises(
            ToolDefinitionError, match=r"create_tool\('x'\): invalid tool metadata: parameter 'n'"
        ):
            create_tool({"name": "x", "parameters": {"n": {"type": "nope"}}}, lambda params: None)
        with pytest.raises(InvalidToolNameError, match="create_tool"):
            create_tool({"name": "x y"}, lambda params: None)
        with pytest.raises(ToolDefinitionError, match="execute_fn must be callable"):
            create_tool({"name": "x"}, "nope")  # type: ignore[arg-type]


class _Plain(AgentTool):
    @property
    def tool_name(self) -> str:
        return "plain"

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": "plain", "description": "p", "inputSchema": {"json": {"type": "object"}}}

    @property
    def tool_type(self) -> str:
        return "test"

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        yield {"toolUseId": tool_use["toolUseId"], "status": "success", "content": []}


def test_get_tool_metadata_and_is_tool() -> None:
    meta = get_tool_metadata(WeatherForecastTool)
    assert meta is not None
    wrapped = ClassTool.from_class(WeatherForecastTool)
    assert get_tool_metadata(WeatherForecastTool()) is meta
    assert get_tool_metadata(wrapped) is meta
    assert get_tool_metadata(_Plain()) is None
    assert get_tool_metadata(object) is None
    assert get_tool_metadata(None) is None
    for yes in (WeatherForecastTool, WeatherForecastTool(), wrapped, _Plain()):
        assert is_tool(yes)
    for no in (object, object(), _Plain, len, "weather_forecast_tool"):
        assert not is_tool(no)


class TestNumbers:
    """A number is never a bool; NaN and infinities only where the schema allows them."""

    @staticmethod
    def tool(**options: Any) -> ClassTool:
        class Numbers:
            """Numbers."""

            def execute(self, params: dict[str, Any]) -> str:
                return "ran"

        decorate_class(Numbers, **options)
        return ClassTool(Numbers())

    @pytest.mark.parametrize("value", [True, False])
    def test_bool_refused_for_declared_numbers(self, value: bool) -> None:
        tool = self.tool(
            parameters={
                "i": {"type": "integer", "required": False},
                "n": {"type": "number", "required": False},
            }
        )
        assert jsons(tool.invoke({"i": value, "n": value})) == [
            {
                "errors": [
                    {"parameter": "i", "problem": "must be of type integer"},
                    {"parameter": "n", "problem": "must be of type number"},
                ]
            }
        ]

    @pytest.mark.parametrize("value", [float("nan"), float("inf")])
    def test_non_finite_refused_for_declared_numbers(self, value: float) -> None:
        tool = self.tool(parameters={"n": {"type": "number"}})
        assert texts(tool.invoke({"n": value})) == [
            "Invalid input for tool 'numbers':\nParameter n must be a finite number"
        ]

    def test_input_schema_follows_the_same_rule_and_can_allow_non_finite(self) -> None:
        tool = self.tool(
            input_schema={
                "type": "object",
                "properties": {"n": {"type": "number"}, "free": {"type": "number", "allowNonFinite": True}},
            }
        )
        assert texts(tool.invoke({"n": True})) == [
            "Invalid input for tool 'numbers':\nParameter n must be a number"
        ]
        assert texts(tool.invoke({"n": float("nan")})) == [
            "Invalid input for tool 'numbers':\nParameter n must be a finite number"
        ]
        assert texts(tool.invoke({"n": 1.5, "free": float("inf")})) == ["ran"]
