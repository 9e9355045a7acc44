"""Prompts, resources and templates whose functions live in worker processes.

The worker describes each one it discovers (``describe_component``, a
``ComponentMessage``) beside the tools of a load; the loader builds ordinary
``Prompt``/``Resource``/``ResourceTemplate`` objects from that description
(``proxy_component``) whose functions go through the worker exactly as a tool
call does: ``CallRouter.call`` with the component's id (``prompt:review``) as the
tool name, so timeouts, crashes, result-size limits and module versions are
handled once. In the worker, ``ComponentCall`` answers that call: an
``AgentTool`` whose input says what to do (render, read, complete) and whose
result carries the value as one JSON block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ..components.prompts import Complete, Prompt, PromptArgument
from ..components.resources import Content, Resource, ResourceTemplate
from ..results import error_result
from ..types import (
    AgentTool,
    Component,
    ComponentKind,
    ToolGenerator,
    ToolResult,
    ToolSpec,
    ToolUse,
    call_frame,
)
from .calls import CallRouter
from .ledger import ModuleVersion
from .messages import ComponentMessage

__all__ = ["ComponentCall", "describe_component", "proxy_component"]


def describe_component(component: Component) -> ComponentMessage:
    """What the loader needs to list and call ``component`` (worker side)."""
    arguments: list[dict[str, Any]] = []
    values: Mapping[str, tuple[str, ...]] = {}
    complete = False
    if isinstance(component, Prompt):
        arguments = [
            {"name": a.name, "description": a.description, "required": a.required}
            for a in component.arguments
        ]
    if isinstance(component, (Prompt, ResourceTemplate)):
        values = component.values
        complete = component.complete is not None
    return ComponentMessage(
        kind=component.kind.value,
        key=component.key,
        name=str(getattr(component, "name", component.key)),
        title=getattr(component, "title", None),
        description=getattr(component, "description", None),
        mime_type=getattr(component, "mime_type", None),
        arguments=arguments,
        values={name: list(found) for name, found in values.items()},
        complete=complete,
        source_file=component.source_file,
    )


class ComponentCall(AgentTool):
    """Worker side: runs one component's function for a call routed to its id."""

    def __init__(self, component: Component) -> None:
        super().__init__()
        self.component = component

    @property
    def tool_name(self) -> str:
        return self.component.component_id

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": self.tool_name, "description": "", "inputSchema": {"json": {"type": "object"}}}

    @property
    def tool_type(self) -> str:
        return self.component.kind.value

    def _invoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        tool_use_id = tool_use_id or ""
        request = input if isinstance(input, dict) else {}
        try:
            value = self._run(str(request.get("action")), request, invocation_state)
        except BaseException as exc:  # the function's fault, or a question ending the round (InputRequired)
            return error_result(tool_use_id, f"Error: {self.tool_name} raised {type(exc).__name__}: {exc}")
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": value}]}

    def _run(self, action: str, request: Mapping[str, Any], state: dict[str, Any] | None) -> Any:
        component = self.component
        arguments = {str(k): str(v) for k, v in dict(request.get("arguments") or {}).items()}
        if action == "render" and isinstance(component, Prompt):
            return component.messages(arguments, state)
        if action == "read" and isinstance(component, Resource):
            return component.read()
        if action == "read" and isinstance(component, ResourceTemplate):
            return component.read_with(arguments)
        if action == "complete" and isinstance(component, (Prompt, ResourceTemplate)):
            return component.completions(str(request.get("argument")), str(request.get("typed", "")))
        raise LookupError(f"{self.tool_name} cannot {action}")

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        yield self.invoke(tool_use.get("input"), tool_use_id=tool_use["toolUseId"])


class _Remote:
    """Loader side: calls one component's function in a worker, through the tools' call path."""

    def __init__(self, component_id: str, recipe: tuple[ModuleVersion, ...], router: CallRouter) -> None:
        self._id = component_id
        self._recipe = recipe
        self._router = router

    def ask(self, request: dict[str, Any], state: dict[str, Any] | None = None) -> Any:
        """The value the worker's ``ComponentCall`` computed.

        Raises:
            RuntimeError: The function raised, or its worker failed (the error result's text).
        """
        tool_use, frame = call_frame(self._id, request, None, state, None)
        result = self._router.call(self._id, self._recipe, tool_use, frame)
        content = result.get("content") or [{}]
        first = content[0]
        if result.get("status") != "success" or "json" not in first:
            raise RuntimeError(str(first.get("text", f"{self._id} failed in its worker")))
        return first["json"]

    def render(self, arguments: dict[str, str], state: dict[str, Any] | None) -> Any:
        return self.ask({"action": "render", "arguments": arguments}, state)

    def read(self, **arguments: str) -> Content:
        return cast(Content, self.ask({"action": "read", "arguments": arguments}))

    def complete(self, argument: str, typed: str) -> list[str]:
        found = self.ask({"action": "complete", "argument": argument, "typed": typed})
        return [str(value) for value in found] if isinstance(found, list) else []


def proxy_component(
    message: ComponentMessage, recipe: tuple[ModuleVersion, ...], router: CallRouter
) -> Component | None:
    """The loader's stand-in for a component a worker described (None for a kind it does not know)."""
    kind = message.get("kind")
    remote = _Remote(f"{kind}:{message['key']}", recipe, router)
    values = {str(k): tuple(str(v) for v in found) for k, found in dict(message.get("values") or {}).items()}
    complete: Complete | None = remote.complete if message.get("complete") else None
    key = str(message["key"])
    described = {
        "title": message.get("title"),
        "description": message.get("description"),
        "source_file": message.get("source_file"),
    }
    if kind == ComponentKind.PROMPT.value:
        arguments = tuple(
            PromptArgument(str(a.get("name")), a.get("description"), bool(a.get("required")))
            for a in message.get("arguments") or ()
        )
        return Prompt(key, remote.render, arguments=arguments, values=values, complete=complete, **described)
    described.update(name=str(message.get("name") or key), mime_type=message.get("mime_type"))
    if kind == ComponentKind.RESOURCE.value:
        return Resource(key, remote.read, **described)
    if kind == ComponentKind.RESOURCE_TEMPLATE.value:
        return ResourceTemplate(key, remote.read, values=values, complete=complete, **described)
    return None
