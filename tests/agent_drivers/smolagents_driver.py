"""smolagents: a ``ToolCallingAgent`` with ``LiveTools`` attached, driven by a ``Model`` subclass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from live_agents import FAILING_CALLS, Brain, Driver, Result, Step
from smolagents import Tool, ToolCallingAgent, tool  # type: ignore[import-untyped]  # no type hints
from smolagents.agents import ToolOutput  # type: ignore[import-untyped]
from smolagents.memory import ActionStep  # type: ignore[import-untyped]
from smolagents.models import (  # type: ignore[import-untyped]
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    get_tool_json_schema,
)
from smolagents.monitoring import LogLevel  # type: ignore[import-untyped]

from loader.integrations.discovery import DiscoveryMode
from loader.integrations.skills import SkillsMode
from loader.integrations.smolagents import LiveTool, LiveTools
from loader.reload.loader import ToolLoader

HINT_AFTER = "LiveToolError: "
"""smolagents wraps a failing tool's error in its own words and a hint; the error text follows this."""


class BrainModel(Model):  # type: ignore[misc]  # smolagents ships no type hints
    """A smolagents model whose tool calls come from the current brain; the final answer ends a run."""

    def __init__(self) -> None:
        super().__init__(model_id="brain")
        self.brain: Brain | None = None
        self.results: dict[str, Result] = {}
        self.seen_tools: list[dict[str, Any]] = []
        self.system_prompts: list[str] = []

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Tool] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        assert self.brain is not None
        tools = [t for t in tools_to_call_from or [] if t.name != "final_answer"]
        self.seen_tools = [get_tool_json_schema(t)["function"] for t in tools]
        first = messages[0]
        system = first.content if isinstance(first, ChatMessage) else first["content"]
        self.system_prompts.append(str(system))
        calls = self.brain.decide({t.name: t.description for t in tools}, self.results)
        if not calls:
            final = ChatMessageToolCallFunction(name="final_answer", arguments={"answer": "done"})
            return ChatMessage(
                role=MessageRole.ASSISTANT,
                tool_calls=[ChatMessageToolCall(function=final, id="final", type="function")],
            )
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            tool_calls=[
                ChatMessageToolCall(
                    function=ChatMessageToolCallFunction(name=c.name, arguments=c.args),
                    id=c.id,
                    type="function",
                )
                for c in calls
            ],
        )


class SmolagentsDriver(Driver):
    """One ``ToolCallingAgent`` with ``LiveTools`` attached, built once; each ``run`` resets its memory.

    smolagents has one way to run an agent: ``mode`` is ``"run"``.
    """

    failing_steps = len(FAILING_CALLS)  # one call per step: smolagents ends a step at its first failing call

    def __init__(
        self,
        loader: ToolLoader,
        *,
        tools: Sequence[Tool] = (),
        mode: str = "run",
        discovery: DiscoveryMode = "all",
        skills: SkillsMode = "listed",
    ) -> None:
        self.model = BrainModel()
        self.live = LiveTools(loader, discovery=discovery, skills=skills)
        self.agent = self.live.attach(
            ToolCallingAgent(tools=list(tools), model=self.model, verbosity_level=LogLevel.OFF)
        )

    def run(self, brain: Brain, max_steps: int) -> None:
        self.model.brain = brain
        results = self.model.results = {}
        for event in self.agent.run("go", stream=True, max_steps=max_steps + 5):
            if isinstance(event, ToolOutput) and event.id is not None:
                results[event.id] = Result(event.observation, False)
            elif isinstance(event, ActionStep) and event.error is not None and event.model_output_message:
                for call in event.model_output_message.tool_calls or []:  # a failed step records none
                    results.setdefault(call.id, Result(str(event.error), True))
        brain.record(results)  # the last step's results: no model call follows to hand them over

    @staticmethod
    def own_greet() -> Tool:
        @tool  # type: ignore[untyped-decorator]
        def greet(who: str) -> str:
            """The agent's own greeting.

            Args:
                who: Whom to greet.
            """
            return f"own greeting for {who}"

        return greet

    def results(self, brain: Brain) -> dict[str, tuple[str, bool]]:
        """The calls' results (not the final answer's), a failing tool's error without smolagents' words."""
        return {
            call_id: (_error_text(result.text) if result.error else result.text, result.error)
            for call_id, result in brain.results.items()
            if call_id != "final"
        }

    def failing_plan(self, brain: Brain, step: Step) -> list[tuple[str, dict[str, Any]]]:
        return FAILING_CALLS[step.index : step.index + 1]

    def between_runs(self) -> None:
        # The final-answer step synced last; an edit since shows once synced again.
        self.live.sync(self.agent)

    def check_live_run(self) -> None:
        # The system prompt follows the tools: the third step's prompt no longer lists farewell.
        prompts = self.model.system_prompts
        assert "farewell" in prompts[1] and "farewell" not in prompts[2]

    def check_error_path(self) -> None:
        assert self.model.brain is not None
        # smolagents checks arguments against its inputs itself: the missing one never reaches the tool.
        assert self.model.brain.results["call_2"] == Result("Argument who is required", True)

    def check_own_tool(self) -> None:
        assert not isinstance(self.agent.tools["greet"], LiveTool)


def _error_text(text: str) -> str:
    """The tool's error, without the words and hint smolagents puts around it."""
    if HINT_AFTER not in text:
        return text
    return text.split(HINT_AFTER, 1)[1].split("\n", 1)[0]
