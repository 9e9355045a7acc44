"""What the framework adapter tests share: a scripted "model", versioned tool files, the plans, the driver base.

Each framework's driver (``tests/agent_drivers/``) builds the framework's
real agent around its own fake model (the framework's test-model facility,
no network) and a ``Brain``: on every model call the fake tells
the brain which tools it was offered (name -> description) and which results
came back (call id -> text, error flag), and answers with the calls the brain
returns (none: a final answer). A plan decides those calls, and may change
the tool folder from inside the step, after the tools were offered and before
the calls run: the worst moment for a version mix-up.

Tool files say their version twice: the description ("greet version 2.") is
what the model is offered, the result ("greet v2 for ada") what answered.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import eventually, write

from loader.calls.runner import CallLimits
from loader.registry.tool_registry import ToolRegistry
from loader.reload.loader import ToolLoader

__all__ = [
    "CALL_TIMEOUT",
    "FAILING_CALLS",
    "FAILING_TOOLS",
    "MEDIA_CALLS",
    "MEDIA_TOOLS",
    "WEATHER_TOOL",
    "Brain",
    "Call",
    "Driver",
    "Offer",
    "Plan",
    "Result",
    "Step",
    "check_failures",
    "failing_tools_loader",
    "first_step",
    "fuzz_plan",
    "live_plan",
    "mixed_calls",
    "offered_version",
    "own_greet",
    "result_version",
    "rewriting",
    "versioned_tool",
    "wait_serving",
]


def versioned_tool(name: str, version: int) -> str:
    """A tool file whose description and result both carry ``version`` (as literals, not globals)."""
    return (
        "from loader import tool\n\n"
        "@tool\n"
        f"def {name}(who: str) -> str:\n"
        f'    """{name} version {version}."""\n'
        f'    return "{name} v{version} for " + who\n'
    )


FAILING_TOOLS = '''
import asyncio
from loader import tool

@tool
def boom(who: str) -> str:
    """Always fails."""
    raise ValueError("no " + who)

@tool
async def slow(who: str) -> str:
    """Never finishes within the call timeout."""
    await asyncio.sleep(30)
    return "late for " + who
'''
"""Two tools that fail: one raises, one (async) overruns the registry's call timeout."""

FAILING_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("boom", {"who": "ed"}),
    ("boom", {}),
    ("slow", {"who": "fi"}),
]
"""One step's calls of ``FAILING_TOOLS``: a raise, a call missing its argument, a timeout."""

CALL_TIMEOUT = 0.3
"""The call timeout the failing-tools tests give their registry."""


WEATHER_TOOL = '''
from typing import Literal
from loader import tool

@tool
def weather(city: str, days: int = 1, unit: Literal["C", "F"] = "C") -> str:
    """Forecast for a city.

    Args:
        city: Where.
        days: How many days ahead.
        unit: Celsius or Fahrenheit.
    """
    return f"{city} {days} {unit}"
'''
"""A tool with a default, an enum and documented arguments: what the offered JSON schema must keep."""

MEDIA_TOOLS = '''
from loader import tool

@tool
def stats(who: str) -> dict:
    """Numbers."""
    return {"who": who, "count": 3}

@tool
def picture(who: str) -> dict:
    """A picture."""
    return {"status": "success", "content": [
        {"text": "a dot for " + who},
        {"image": {"format": "png", "source": {"bytes": b"PNGDATA"}}},
    ]}
'''
"""A tool answering JSON and one answering text and an image: what each framework makes of them."""

MEDIA_CALLS: list[tuple[str, dict[str, Any]]] = [("stats", {"who": "gi"}), ("picture", {"who": "ha"})]
"""One step's calls of ``MEDIA_TOOLS``."""


def own_greet() -> Callable[[str], str]:
    """A plain function named ``greet``: the agent's own tool, whose name a live tool file also uses."""

    def greet(who: str) -> str:
        """The agent's own greeting."""
        return f"own greeting for {who}"

    return greet


def failing_tools_loader(folder: Path, make_loader: Callable[..., ToolLoader]) -> ToolLoader:
    """A loader serving ``FAILING_TOOLS`` from a registry with a short call timeout."""
    write(folder / "failing.py", FAILING_TOOLS)
    registry = ToolRegistry(limits=CallLimits(timeout=CALL_TIMEOUT))
    return make_loader(folder, watch=False, registry=registry)


def check_failures(failures: dict[str, tuple[str, bool]]) -> None:
    """The three ``FAILING_CALLS`` results (text, error flag) as the model saw them."""
    assert failures["call_1"] == ("Error: ValueError - no ed", True), failures["call_1"]
    text, error = failures["call_2"]
    assert error and "who" in text, failures["call_2"]
    text, error = failures["call_3"]
    assert error and "did not finish within the 0.3 s call timeout" in text, failures["call_3"]


def offered_version(description: str) -> int:
    found = re.search(r"version (\d+)", description)
    assert found, description
    return int(found.group(1))


def result_version(text: str) -> int:
    found = re.search(r" v(\d+) for ", text)
    assert found, text
    return int(found.group(1))


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the brain asks for."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Result:
    """A tool result as the model saw it: its text and whether the framework marked it an error."""

    text: str
    error: bool


@dataclass
class Step:
    """One model call: what was offered, the calls made."""

    index: int
    offered: dict[str, str]
    calls: list[Call] = field(default_factory=list)


Plan = Callable[["Brain", Step], list[tuple[str, dict[str, Any]]]]
"""Given the brain (its history) and the step just offered, the calls to make (none: answer and stop)."""


def first_step(*calls: tuple[str, dict[str, Any]]) -> Plan:
    """Make ``calls`` at the first step, then answer."""
    return lambda brain, step: list(calls) if step.index == 0 else []


class Brain:
    """The scripted side of a fake model: records every step's offer, calls and the results that came back."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.steps: list[Step] = []
        self.results: dict[str, Result] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def record(self, results: dict[str, Result]) -> None:
        """Keep the results of calls (the first one seen for each id)."""
        with self._lock:
            for call_id, result in results.items():
                self.results.setdefault(call_id, result)

    def decide(self, offered: dict[str, str], results: dict[str, Result]) -> list[Call]:
        """Called by the fake model once per model call."""
        self.record(results)
        with self._lock:
            step = Step(len(self.steps), dict(offered))
            self.steps.append(step)
        wanted = self.plan(self, step)
        step.calls = [Call(f"call_{next(self._ids)}", name, args) for name, args in wanted]
        return step.calls

    def answered(self) -> list[tuple[Step, Call, Result]]:
        """Every call that got a result, with the step that made it."""
        return [
            (step, call, self.results[call.id])
            for step in self.steps
            for call in step.calls
            if call.id in self.results
        ]


def mixed_calls(brain: Brain) -> list[tuple[int, str, int, int]]:
    """Calls answered by another version than the one their step offered: (step, tool, offered, answered)."""
    mixed = []
    for step, call, result in brain.answered():
        offered = offered_version(step.offered[call.name])
        answered = result_version(result.text)
        if offered != answered:
            mixed.append((step.index, call.name, offered, answered))
    return mixed


@dataclass(frozen=True, slots=True)
class Offer:
    """One tool as the framework put it to the model."""

    description: str
    parameters: dict[str, Any]


class Driver:
    """One framework's agent, built once around a loader and a brain-driven fake model.

    ``tests/integrations/test_every_framework.py`` runs the same scenarios
    through every driver; the ``check_*`` hooks hold what only some frameworks
    add to a scenario (the default adds nothing), so a scenario is written once
    and still says everything each framework promises.
    """

    failing_steps = 1
    """How many steps ``failing_plan`` spreads ``FAILING_CALLS`` over."""

    def run(self, brain: Brain, max_steps: int) -> None:
        """Run the agent once (a fresh conversation) until the brain stops calling tools."""
        raise NotImplementedError

    @staticmethod
    def own_greet() -> Any:
        """``own_greet`` as this framework's own tool, for the agent's tool list."""
        raise NotImplementedError("this framework's agents take no own tool named like a live one")

    def results(self, brain: Brain) -> dict[str, tuple[str, bool]]:
        """Each call's result as the model saw it: its text and whether the framework marked it an error."""
        return {call_id: (result.text, result.error) for call_id, result in brain.results.items()}

    def offered(self, name: str) -> Offer:
        """Tool ``name`` as the last model call was offered it."""
        raise NotImplementedError(f"{type(self).__name__} does not show the offered schemas")

    def failing_plan(self, brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        """``FAILING_CALLS`` in ``failing_steps`` steps (most frameworks: all in the first)."""
        return FAILING_CALLS if step.index == 0 else []

    def between_runs(self) -> None:
        """What a user must do for an edit made between two runs to show at the next run's first step."""

    def check_live_run(self) -> None:
        """What else holds after ``live_plan`` ran."""

    def check_offer(self, name: str) -> None:
        """What else holds of how tool ``name`` was offered."""

    def check_error_path(self) -> None:
        """How the framework marked the ``FAILING_CALLS`` results as errors."""

    def check_media(self) -> None:
        """What the framework made of the ``MEDIA_CALLS`` results (call_1: stats for gi, call_2: picture for ha)."""
        raise NotImplementedError(f"{type(self).__name__} has no media results to check")

    def check_own_tool(self) -> None:
        """What else holds after the agent's own ``greet`` won over the live one."""


def wait_serving(loader: ToolLoader, name: str, version: int | None) -> None:
    """Wait until the registry serves ``version`` of tool ``name`` (None: no such tool) and the loader is idle."""

    def serving() -> bool:
        tool = loader.registry.get(name)
        if version is None:
            return tool is None
        return tool is not None and tool.tool_spec["description"] == f"{name} version {version}."

    eventually(lambda: serving() and loader.wait_idle(0.01), message=f"{name} at version {version}")


def live_plan(folder: Path, loader: ToolLoader) -> Plan:
    """Edit, add and delete files from inside the model's steps; each step calls what it was offered.

    * step 0 (offered greet v1): greet.py becomes v2 and farewell.py appears; calls greet.
    * step 1 (offered farewell v1, greet v2): farewell.py is deleted; calls greet and farewell.
    * step 2 (offered greet v2): answers.
    """

    def plan(brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        if step.index == 0:
            write(folder / "greet.py", versioned_tool("greet", 2))
            write(folder / "farewell.py", versioned_tool("farewell", 1))
            wait_serving(loader, "greet", 2)
            wait_serving(loader, "farewell", 1)
            return [("greet", {"who": "ada"})]
        if step.index == 1:
            (folder / "farewell.py").unlink()
            wait_serving(loader, "farewell", None)
            return [("greet", {"who": "bo"}), ("farewell", {"who": "cy"})]
        return []

    return plan


def fuzz_plan(loader: ToolLoader, name: str, steps: int) -> Plan:
    """Call ``name`` at every step, but only once the registry serves a newer version than the step offered.

    Each call then races a newer version (a rewriter thread keeps saving the
    file), so a call that reached the registry's current tool would show.
    """

    def plan(brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        if len(brain.steps) > steps:
            return []
        offered = step.offered[name]
        eventually(
            lambda: (
                (tool := loader.registry.get(name)) is not None and tool.tool_spec["description"] != offered
            ),
            message=f"a newer {name} than {offered!r}",
        )
        return [(name, {"who": f"step {step.index}"})]

    return plan


@contextmanager
def rewriting(path: Path, name: str, start: int, every: float = 0.005) -> Iterator[Callable[[], int]]:
    """Rewrite ``path`` with a new version of tool ``name`` every ``every`` seconds while the block runs.

    Yields a function returning how many versions were written.
    """
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        for version in itertools.count(start + 1):
            if stop.wait(every):
                return
            path.write_text(versioned_tool(name, version))
            written[0] += 1

    thread = threading.Thread(target=writer, name="rewriter", daemon=True)
    thread.start()
    try:
        yield lambda: written[0]
    finally:
        stop.set()
        thread.join(timeout=10)
