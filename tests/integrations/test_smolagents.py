"""Live tools in a smolagents ``ToolCallingAgent``: what only smolagents has (the shared scenarios: ``test_every_framework.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_drivers.smolagents_driver import BrainModel, SmolagentsDriver
from live_agents import Brain, first_step, mixed_calls, versioned_tool, wait_serving
from smolagents import CodeAgent  # type: ignore[import-untyped]  # no type hints
from support import MakeLoader, write

from loader.integrations.smolagents import LiveTools, smolagents_inputs


def offers(brain: Brain) -> list[dict[str, str]]:
    return [step.offered for step in brain.steps]


def test_without_a_sync_an_idle_edit_shows_at_the_second_step(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = SmolagentsDriver(loader)
    write(tools_dir / "greet.py", versioned_tool("greet", 2))
    wait_serving(loader, "greet", 2)
    brain = Brain(lambda brain, step: [("greet", {"who": "ed"})] if step.index < 2 else [])
    driver.run(brain, max_steps=4)
    assert [step["greet"] for step in offers(brain)[:2]] == ["greet version 1.", "greet version 2."]
    assert mixed_calls(brain) == []


def test_inputs_keep_the_json_schema_in_smolagents_types(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "weather.py",
        '''
        from typing import Literal
        from pydantic import BaseModel
        from loader import tool

        class Place(BaseModel):
            city: str
            country: str = "NO"

        @tool
        def weather(place: Place, days: int = 1, unit: Literal["C", "F"] = "C", tags: list[str] | None = None) -> str:
            """Forecast for a place.

            Args:
                place: Where.
                days: How many days ahead.
                unit: Celsius or Fahrenheit.
                tags: Labels.
            """
            return f"{place.city} {days} {unit} {tags}"
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    weather = loader.registry.get("weather")
    assert weather is not None
    inputs = smolagents_inputs(weather.tool_spec["inputSchema"]["json"])
    assert inputs["place"]["type"] == "object"
    assert inputs["place"]["properties"]["city"] == {"type": "string"}
    assert "nullable" not in inputs["place"]
    assert inputs["days"] == {
        "type": "integer",
        "description": "How many days ahead.",
        "default": 1,
        "nullable": True,
    }
    assert inputs["unit"]["enum"] == ["C", "F"] and inputs["unit"]["type"] == "string"
    assert inputs["tags"]["nullable"] is True

    driver = SmolagentsDriver(loader)
    brain = Brain(first_step(("weather", {"place": {"city": "Oslo"}, "unit": "F", "tags": None})))
    driver.run(brain, max_steps=3)
    [offered] = driver.model.seen_tools
    assert offered["parameters"]["required"] == ["place"]
    assert driver.results(brain) == {"call_1": ("Oslo 1 F None", False)}


def test_dashed_names_are_offered_with_underscores(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "dashed.py",
        '''
        from loader import tool

        @tool(name="say-hi")
        def say_hi(who: str) -> str:
            """Says hi."""
            return "hi " + who
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    driver = SmolagentsDriver(loader)
    brain = Brain(first_step(("say_hi", {"who": "gi"})))
    driver.run(brain, max_steps=3)
    assert offers(brain)[0] == {"say_hi": "Says hi."}
    assert driver.results(brain) == {"call_1": ("hi gi", False)}


def test_a_code_agent_is_refused_with_the_reason(tools_dir: Path, make_loader: MakeLoader) -> None:
    loader = make_loader(tools_dir, watch=False)
    with pytest.raises(TypeError, match=r"CodeAgent.*once per run"):
        LiveTools(loader).attach(CodeAgent(tools=[], model=BrainModel()))
