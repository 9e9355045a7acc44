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
from typing import Any, Literal

from ..results import exception_result
from ..tools.description import DescribedTool, ToolDescription
from ..types import ToolGenerator, ToolResult, ToolUse, call_frame
from .calls import CallRouter
from .ledger import ModuleVersion

__all__ = ["ProxyTool", "ToolDescription"]


class ProxyTool(DescribedTool):
    """Stands in for one version of a tool that lives in worker processes."""

    def __init__(
        self, description: ToolDescription, recipe: tuple[ModuleVersion, ...], router: CallRouter
    ) -> None:
        super().__init__()
        self.description = description  # made by the worker: ``_describe`` never runs
        self.recipe = recipe
        self._router = router

    # -- what listings and models read: the description, and these -------------------------
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
    def serial(self) -> int:
        """The version of the tool's module this proxy runs."""
        return self.recipe[-1].serial

    def get_display_properties(self) -> dict[str, str]:
        return {**self.description.display, "Isolation": "process"}

    # -- calls -------------------------------------------------------------------------------
    def _invoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
    ) -> ToolResult:
        """Run the tool in a worker, on the calling thread (no event loop needed)."""
        tool_use, state = call_frame(self.tool_name, input, tool_use_id, invocation_state, agent)
        return self._router.call(self.tool_name, self.recipe, tool_use, state)

    async def _ainvoke(
        self, input: Any, tool_use_id: str | None, invocation_state: dict[str, Any] | None, agent: Any
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
