"""``ProxyTool``: an ``AgentTool`` in the loader's process whose code runs in a worker process.

It answers everything a listing or a model request needs (spec, kind, source,
display properties) from the description the import worker sent, without a
round trip; only calls go to a worker. Calls have the same shapes as in-process:
``invoke``/``ainvoke`` return a ``ToolResult``, ``stream`` yields the tool's
events and then the result.

What crosses to the worker with a call: the ``ToolUse`` and the JSON-safe
entries of the invocation state. What does not: ``agent`` (and any other live
object), which a tool in a worker sees as absent.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..results import exception_result
from ..tools.metadata import ToolMetadata
from ..types import AgentTool, ToolExample, ToolGenerator, ToolResult, ToolSpec, ToolUse, call_frame
from .calls import CallRouter
from .ledger import ModuleVersion
from .messages import ToolMessage
from .protocol import decode_value

__all__ = ["ProxyTool", "ToolDescription"]


@dataclass(frozen=True, slots=True)
class ToolDescription:
    """What the import worker reports about one discovered tool."""

    name: str
    spec: ToolSpec
    tool_type: str
    is_async: bool
    streaming: bool
    source_file: str | None
    source_line: int | None
    version: str | None
    category: str | None
    tags: tuple[str, ...]
    display: dict[str, str]
    hot_reload: bool
    metadata: ToolMetadata | None
    examples: tuple[ToolExample, ...] = ()

    @classmethod
    def from_message(cls, data: ToolMessage) -> ToolDescription:
        raw_metadata = data.get("metadata")
        return cls(
            name=str(data["name"]),
            spec=decode_value(data["spec"]),
            tool_type=str(data["type"]),
            is_async=bool(data.get("is_async")),
            streaming=bool(data.get("streaming")),
            source_file=data.get("source_file"),
            source_line=data.get("source_line"),
            version=data.get("version"),
            category=data.get("category"),
            tags=tuple(str(t) for t in data.get("tags") or ()),
            display={str(k): str(v) for k, v in (data.get("display") or {}).items()},
            hot_reload=bool(data.get("hot_reload")),
            metadata=None if raw_metadata is None else ToolMetadata.model_validate(raw_metadata),
            examples=tuple(_example(e) for e in data.get("examples") or () if isinstance(e, dict)),
        )


def _example(data: dict[str, Any]) -> ToolExample:
    """One example as ``describe`` sent it (``expected_output`` absent when the example gives none)."""
    params = decode_value(data.get("params"))
    example = ToolExample(params if isinstance(params, dict) else {}, str(data.get("description") or ""))
    if "expected_output" in data:
        example = replace(example, expected_output=decode_value(data["expected_output"]))
    return example


class ProxyTool(AgentTool):
    """Stands in for one version of a tool that lives in worker processes."""

    def __init__(
        self, description: ToolDescription, recipe: tuple[ModuleVersion, ...], router: CallRouter
    ) -> None:
        super().__init__()
        self.description = description
        self.recipe = recipe
        self._router = router

    # -- what listings and models read ------------------------------------------------------
    @property
    def tool_name(self) -> str:
        return self.description.name

    @property
    def tool_spec(self) -> ToolSpec:
        """A fresh copy each time, as in-process tools give."""
        return decode_value(self.description.spec)  # type: ignore[no-any-return]

    @property
    def tool_type(self) -> str:
        return self.description.tool_type

    @property
    def supports_hot_reload(self) -> bool:
        return self.description.hot_reload

    @property
    def enforces_call_timeout(self) -> bool:
        """Its call worker is killed at the call timeout, so a synchronous caller may call it directly."""
        return True

    @property
    def is_async(self) -> bool:
        """Always: a proxy's ``ainvoke`` awaits its worker without blocking the loop, so callers
        run it on their own loop (where cancelling the call stops the worker) rather than on a
        thread. Whether the tool's own body is ``async`` is ``description.is_async``."""
        return True

    @property
    def isolation(self) -> Literal["thread", "process"]:
        """Its code runs in worker processes."""
        return "process"

    @property
    def is_generator(self) -> bool:
        """Whether the tool streams events."""
        return self.description.streaming

    @property
    def source_file(self) -> str | None:
        return self.description.source_file

    @property
    def source_line(self) -> int | None:
        return self.description.source_line

    @property
    def version(self) -> str | None:
        """A class tool's declared version."""
        return self.description.version

    @property
    def metadata(self) -> ToolMetadata | None:
        """A class tool's ``ToolMetadata`` (None for other kinds)."""
        return self.description.metadata

    @property
    def category(self) -> str | None:
        return self.description.category

    @property
    def tags(self) -> tuple[str, ...]:
        return self.description.tags

    @property
    def examples(self) -> tuple[ToolExample, ...]:
        """The tool's examples, as its worker read them: the gate runs them through this proxy."""
        return self.description.examples

    @property
    def serial(self) -> int:
        """The version of the tool's module this proxy runs."""
        return self.recipe[-1].serial

    def get_display_properties(self) -> dict[str, str]:
        props = dict(self.description.display)
        props["Isolation"] = "process"
        return props

    # -- calls -------------------------------------------------------------------------------
    def invoke(
        self,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the tool in a worker, on the calling thread (no event loop needed)."""
        tool_use, state = call_frame(self.tool_name, input, tool_use_id, invocation_state, agent)
        return self._router.call(self.tool_name, self.recipe, tool_use, state)

    async def ainvoke(
        self,
        input: Any = None,
        *,
        tool_use_id: str | None = None,
        invocation_state: dict[str, Any] | None = None,
        agent: Any = None,
    ) -> ToolResult:
        """Run the tool in a worker without blocking the loop; cancelling stops the worker.

        The call waits on a thread of its own, not the loop's shared executor (a few threads): calls
        waiting in line for their tool file's share of the workers must not hold up other tools'.
        """
        tool_use, state = call_frame(self.tool_name, input, tool_use_id, invocation_state, agent)
        cancel = threading.Event()
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[ToolResult] = loop.create_future()

        def settle(outcome: ToolResult | BaseException) -> None:
            if answer.done():
                return
            if isinstance(outcome, BaseException):
                answer.set_exception(outcome)
            else:
                answer.set_result(outcome)

        def run() -> None:
            outcome: ToolResult | BaseException
            try:
                outcome = self._router.call(self.tool_name, self.recipe, tool_use, state, cancel=cancel)
            except BaseException as exc:  # a tool raising through: raised in the caller, as in-process
                outcome = exc
            try:
                loop.call_soon_threadsafe(settle, outcome)
            except RuntimeError:  # the caller's loop is gone: it gave up on this call
                cancel.set()

        _call_thread(self.tool_name, run)
        try:
            return await answer
        except asyncio.CancelledError:
            cancel.set()
            raise

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        """The tool's events as the worker sends them, then the ``ToolResult``."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue()
        cancel = threading.Event()

        def post(item: tuple[bool, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the consumer's loop is gone: it gave up on this call
                cancel.set()

        def on_event(event: Any) -> None:
            post((False, event))

        def run() -> None:
            try:
                result = self._router.call(
                    self.tool_name, self.recipe, tool_use, invocation_state, on_event=on_event, cancel=cancel
                )
            except BaseException as exc:  # handed to the consumer as an error result
                result = exception_result(tool_use["toolUseId"], exc)
            post((True, result))

        _call_thread(self.tool_name, run)
        try:
            while True:
                final, value = await queue.get()
                yield value
                if final:
                    return
        finally:
            cancel.set()

    def cleanup(self) -> Awaitable[None] | None:
        """Run the tool's own ``cleanup()`` in each worker that made an instance of this version."""
        self._router.cleanup(self.tool_name, self.serial)
        return None


def _call_thread(tool_name: str, run: Callable[[], None]) -> None:
    """Start ``run`` on a thread of its own, in the caller's context (so the call carries the
    caller's trace to the worker)."""
    context = contextvars.copy_context()
    threading.Thread(
        target=context.run, args=(run,), name=f"tool-loader-call-{tool_name}", daemon=True
    ).start()
