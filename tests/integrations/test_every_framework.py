"""The scenarios every framework adapter must pass, each written once and run through every framework's driver.

Each driver (``tests/agent_drivers/``) runs the framework's real agent loop
around a scripted fake model (no network); see ``live_agents`` for the brain,
the plans and the versioned tool files. What only one framework has stays in
its own module (``test_langchain.py`` ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_drivers import Agent, agents
from live_agents import (
    MEDIA_CALLS,
    MEDIA_TOOLS,
    WEATHER_TOOL,
    Brain,
    Step,
    check_failures,
    failing_tools_loader,
    first_step,
    fuzz_plan,
    live_plan,
    mixed_calls,
    offered_version,
    rewriting,
    versioned_tool,
    wait_serving,
)
from support import MakeLoader, write

from loader.integrations.live import input_schema

# LlamaIndex's workflows find their steps with inspect.getmembers on the (pydantic) agent, which
# touches pydantic's deprecated attributes: upstream noise, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")


@pytest.mark.parametrize("agent", agents(modes=True))
def test_a_save_mid_run_is_seen_at_the_next_step(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = agent.build(loader)
    brain = Brain(live_plan(tools_dir, loader))
    driver.run(brain, max_steps=5)

    assert [step.offered for step in brain.steps] == [
        {"greet": "greet version 1."},
        {"farewell": "farewell version 1.", "greet": "greet version 2."},
        {"greet": "greet version 2."},
    ]
    assert driver.results(brain) == {
        "call_1": ("greet v1 for ada", False),  # offered v1; v2 was live by the time it ran
        "call_2": ("greet v2 for bo", False),
        "call_3": ("farewell v1 for cy", False),  # offered before its file was deleted
    }
    assert mixed_calls(brain) == []
    driver.check_live_run()

    # The same agent, a new run: a change made between runs shows at the first step.
    write(tools_dir / "greet.py", versioned_tool("greet", 3))
    wait_serving(loader, "greet", 3)
    driver.between_runs()
    again = Brain(first_step(("greet", {"who": "di"})))
    driver.run(again, max_steps=3)
    assert again.steps[0].offered == {"greet": "greet version 3."}
    assert driver.results(again) == {"call_1": ("greet v3 for di", False)}


# smolagents offers its own types, not the JSON schema: test_smolagents.py checks its inputs.
@pytest.mark.parametrize("agent", agents(without=["smolagents"]))
def test_the_offered_schema_is_the_tools_json_schema(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    write(tools_dir / "weather.py", WEATHER_TOOL)
    loader = make_loader(tools_dir, watch=False)
    driver = agent.build(loader)
    brain = Brain(first_step(("weather", {"city": "Oslo", "unit": "F"})))
    driver.run(brain, max_steps=3)
    weather = loader.registry.get("weather")
    assert weather is not None
    offered = driver.offered("weather")
    assert offered.parameters == input_schema(weather)
    assert offered.description == weather.tool_spec["description"]
    driver.check_offer("weather")
    assert driver.results(brain) == {"call_1": ("Oslo 1 F", False)}


@pytest.mark.parametrize("agent", agents(modes=True))
def test_failing_tools_come_back_as_error_results_and_the_run_goes_on(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    loader = failing_tools_loader(tools_dir, make_loader)
    driver = agent.build(loader)
    brain = Brain(driver.failing_plan)
    driver.run(brain, max_steps=6)
    assert len(brain.steps) == driver.failing_steps + 1  # the model was asked again after the failures
    check_failures(driver.results(brain))
    driver.check_error_path()


# LlamaIndex's agent takes its own tools beside the live ones: test_llama_index.py checks them.
@pytest.mark.parametrize("agent", agents(without=["llama_index"]))
def test_the_agents_own_tool_wins_a_name_clash(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "farewell.py", versioned_tool("farewell", 1))
    loader = make_loader(tools_dir, watch=False)
    driver = agent.build(loader, own_greet=True)
    brain = Brain(first_step(("greet", {"who": "fa"})))
    driver.run(brain, max_steps=3)
    assert brain.steps[0].offered == {"greet": "The agent's own greeting.", "farewell": "farewell version 1."}
    assert driver.results(brain) == {"call_1": ("own greeting for fa", False)}
    driver.check_own_tool()


# Google ADK and smolagents hand the model text only.
@pytest.mark.parametrize("agent", agents(without=["google_adk", "smolagents"]))
def test_json_and_image_results_become_the_frameworks_content(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    write(tools_dir / "media.py", MEDIA_TOOLS)
    loader = make_loader(tools_dir, watch=False)
    driver = agent.build(loader)
    driver.run(Brain(first_step(*MEDIA_CALLS)), max_steps=3)
    driver.check_media()


FUZZ_STEPS = 25
"""Steps a fuzz run calls at, each racing a newer version: 50 took 10 to 90 s per framework under load."""


@pytest.mark.parametrize("agent", agents())
def test_fuzz_every_call_runs_the_version_its_step_offered(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    path = write(tools_dir / "ver.py", versioned_tool("ver", 0))
    loader = make_loader(tools_dir)
    driver = agent.build(loader)
    brain = Brain(fuzz_plan(loader, "ver", steps=FUZZ_STEPS))
    # A save every 10 ms still outruns a reload (a 50 ms debounce, then an import); one every 5 ms made
    # the loader reload flat out and cost the other tests' CPU (45 s for the six, 10 to 18 s now).
    with rewriting(path, "ver", start=0, every=0.01):
        driver.run(brain, max_steps=FUZZ_STEPS + 10)
    answered = brain.answered()
    assert len(answered) == FUZZ_STEPS
    assert mixed_calls(brain) == []
    # newer every step: each step waited for a newer version than it offered, so the writer wrote at
    # least one version a step (whether it wrote more before the run ended is the machine's pace)
    assert len({offered_version(step.offered["ver"]) for step, _, _ in answered}) == FUZZ_STEPS


@pytest.mark.parametrize("agent", agents())
def test_search_discovery_finds_and_calls_a_tool_saved_after_the_agent_was_built(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    loader = make_loader(tools_dir)
    driver = agent.build(loader, discovery="search")

    def plan(brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        if step.index == 0:
            write(tools_dir / "wave.py", versioned_tool("wave", 1))
            wait_serving(loader, "wave", 1)
            return [("search_tools", {"query": "wave version"})]
        if step.index == 1:  # one call a step: smolagents ends a step at its first failing call
            return [("call_tool", {"name": "wave", "arguments": {"who": "x"}})]
        if step.index == 2:
            return [("call_tool", {"name": "wave_hand", "arguments": {}})]
        return []

    brain = Brain(plan)
    driver.run(brain, max_steps=5)
    assert [set(step.offered) for step in brain.steps] == [{"search_tools", "call_tool"}] * 4
    results = driver.results(brain)
    found, error = results["call_1"]
    assert not error and '"name": "wave"' in found, results["call_1"]
    assert results["call_2"] == ("wave v1 for x", False)
    text, error = results["call_3"]
    assert error and "Unknown tool: wave_hand" in text, results["call_3"]
    assert '"name": "wave"' in brain.results["call_3"].text  # the candidates, as the model read them


SKILL_MD = "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nCall fill_form once per form.\n"


# LlamaIndex's retriever is not told which run asks: test_llama_index.py checks that it refuses.
@pytest.mark.parametrize("agent", agents(modes=True, without=["llama_index"]))
def test_a_skills_tools_are_offered_only_after_activate_skill_and_for_that_run_only(
    tools_dir: Path, make_loader: MakeLoader, agent: Agent
) -> None:
    write(tools_dir / "greet.py", versioned_tool("greet", 1))
    write(tools_dir / "skills" / "pdf-forms" / "SKILL.md", SKILL_MD)
    write(tools_dir / "skills" / "pdf-forms" / "tools" / "fill_form.py", versioned_tool("fill_form", 1))
    loader = make_loader(tools_dir, watch=False)
    assert loader.registry.get("fill_form") is not None  # listed like any tool, outside the adapter
    driver = agent.build(loader, skills="on-activation")

    def plan(brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        calls = {0: [("activate_skill", {"name": "pdf-forms"})], 1: [("fill_form", {"who": "ada"})]}
        return calls.get(step.index, [])

    brain = Brain(plan)
    driver.run(brain, max_steps=4)
    assert [sorted(step.offered) for step in brain.steps] == [
        ["activate_skill", "greet"],
        ["activate_skill", "fill_form", "greet"],
        ["activate_skill", "fill_form", "greet"],
    ]
    assert "- pdf-forms: Fill PDF forms. (tools: fill_form)" in brain.steps[0].offered["activate_skill"]
    assert driver.results(brain) == {
        "call_1": ("Call fill_form once per form.", False),
        "call_2": ("fill_form v1 for ada", False),
    }

    # The same agent, a new run: the skill has to be activated again.
    driver.between_runs()
    again = Brain(first_step(("greet", {"who": "bo"})))
    driver.run(again, max_steps=3)
    assert sorted(again.steps[0].offered) == ["activate_skill", "greet"]
    assert driver.results(again) == {"call_1": ("greet v1 for bo", False)}
