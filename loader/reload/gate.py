"""Examples as a gate: a candidate version of a file only goes live if its tools' examples pass.

The loader calls ``gate_error`` with a file's freshly discovered tools before
they reach the registry; a failure becomes the file's error (state
``rejected``) and the last good version keeps serving. Each example runs on
its own one-thread call lane, so a stuck tool costs the timeout, not the
loader; an example past its timeout is stopped the way a call past its
deadline is (``CallLane.stop`` raises ``CallAbandoned`` in its thread): an
endless Python loop ends at once instead of spinning on a core, and holding
the GIL, for the rest of the process's life. A tool in a worker process is
stopped with its worker. In process mode the examples travel with the proxy
and run in a call worker against the candidate version, exactly as its calls
would once it is live.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..calls.lanes import CallLane
from ..status import LoadErrorInfo, LoadErrorKind
from ..types import AgentTool, ToolExample, ToolResult

__all__ = [
    "EXAMPLE_FAILED",
    "ExampleFailure",
    "FailureKind",
    "gate_error",
    "match_output",
    "result_output",
    "run_example",
    "run_examples",
]

logger = logging.getLogger(__name__)

EXAMPLE_FAILED = "ExampleFailed"
"""The ``LoadErrorInfo.exc_type`` of a file rejected by its examples."""


class FailureKind(StrEnum):
    """Why an example failed."""

    MISMATCH = "mismatch"  # the result differs from expected_output
    ERROR = "error"  # the tool returned an error result
    EXCEPTION = "exception"  # calling the tool raised
    TIMEOUT = "timeout"  # no result within the timeout


@dataclass(frozen=True, slots=True)
class ExampleFailure:
    """The first example of a candidate that failed, with what differed."""

    tool: str
    index: int
    example: ToolExample
    kind: FailureKind
    difference: str
    actual: Any = None

    def message(self) -> str:
        """``calc example 1 ("adds"): expected 3, got 4``: one line for status records and logs."""
        label = f"{self.tool} example {self.index}"
        if self.example.description:
            label += f" ({self.example.description!r})"
        return f"{label} with {_show(self.example.params)}: {self.difference}"


def result_output(result: ToolResult) -> Any:
    """The value of a result to compare with ``expected_output``.

    One json block gives its value; one text block its text; several blocks a list of their values.
    """
    values = [block.get("json", block.get("text")) for block in result.get("content", [])]
    return values[0] if len(values) == 1 else values


def match_output(expected: Any, actual: Any, where: str = "") -> str | None:
    """None when ``actual`` matches ``expected``, else the first difference.

    Dicts match as subsets (every expected key present with a matching value,
    recursively); everything else by equality. A text result is also read as
    JSON when the expected value is not a string (a tool that returns ``"4"``
    for ``expected_output: 4``).
    """
    at = f" at {where}" if where else ""
    if isinstance(actual, str) and not isinstance(expected, str):
        try:
            actual = json.loads(actual)
        except ValueError:
            return f"expected {_show(expected)}{at}, got {_show(actual)}"
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"expected an object{at}, got {_show(actual)}"
        for key, value in expected.items():
            path = f"{where}.{key}" if where else str(key)
            if key not in actual:
                return f"missing key {path!r}"
            found = match_output(value, actual[key], path)
            if found is not None:
                return found
        return None
    if isinstance(expected, bool) != isinstance(actual, bool) or expected != actual:
        return f"expected {_show(expected)}{at}, got {_show(actual)}"
    return None


_ASYNC_TEARDOWN = 5.0
"""Seconds an async example has, past its timeout, to be cancelled and close its loop (a proxy tool kills
its worker then) before its lane thread is stopped from outside."""


def _bounded_call(tool: AgentTool, params: dict[str, Any], timeout: float) -> ToolResult:
    """``tool``'s result for ``params``; an async tool is cancelled at ``timeout`` (``TimeoutError``).

    Cancelling is what stops a tool in a worker process (its proxy is async and
    kills the worker): a hanging example must not keep a worker busy until the
    call timeout. A synchronous in-process tool cannot be stopped; its thread
    is abandoned.
    """
    if not tool.is_async:
        return tool.invoke(params)

    async def bounded() -> ToolResult:
        async with asyncio.timeout(timeout):
            return await tool.ainvoke(params)

    return asyncio.run(bounded())


def run_example(tool: AgentTool, example: ToolExample, index: int, timeout: float) -> ExampleFailure | None:
    """Call ``tool`` with the example's params; None when the result is what the example says."""
    lane = CallLane(
        f"example-{tool.tool_name}", 1, idle_seconds=0.0, thread_name=f"tool-loader-example-{tool.tool_name}"
    )
    future = lane.submit(functools.partial(_bounded_call, tool, dict(example.params), timeout))
    # An async tool's own timeout ends it on the lane's loop: waited for a little longer, it is not also
    # stopped from here, which could land in that loop's teardown and leave the loop half closed.
    wait = timeout + _ASYNC_TEARDOWN if tool.is_async else timeout
    try:
        result: ToolResult = future.result(wait)
    except FuturesTimeout:  # the wait ran out, or an async tool was cancelled at its timeout
        if not lane.stop(future):
            future.cancel()
        logger.warning(
            "tool_name=<%s>, timeout=<%g> | stopped an example past its timeout", tool.tool_name, timeout
        )
        return ExampleFailure(
            tool.tool_name, index, example, FailureKind.TIMEOUT, f"no result within {timeout:g} s"
        )
    except BaseException as exc:  # reported as the example's failure
        return ExampleFailure(
            tool.tool_name, index, example, FailureKind.EXCEPTION, f"raised {type(exc).__name__}: {exc}"
        )
    output = result_output(result)
    if result.get("status") != "success":
        return ExampleFailure(
            tool.tool_name, index, example, FailureKind.ERROR, f"error result: {_show(output)}", output
        )
    if not example.has_expected_output:
        return None
    difference = match_output(example.expected_output, output)
    if difference is None:
        return None
    return ExampleFailure(tool.tool_name, index, example, FailureKind.MISMATCH, difference, output)


def run_examples(tools: Iterable[AgentTool], timeout: float) -> ExampleFailure | None:
    """Run every example of every tool, in order; the first failure, or None when all pass."""
    for tool in tools:
        for index, example in enumerate(tool.examples):
            failure = run_example(tool, example, index, timeout)
            if failure is not None:
                return failure
    return None


def gate_error(tools: Iterable[AgentTool], timeout: float, path: Path) -> LoadErrorInfo | None:
    """The error that rejects a candidate version of ``path``, or None when its examples pass."""
    candidates = list(tools)
    failure = run_examples(candidates, timeout)
    if failure is None:
        return None
    line = next((getattr(t, "source_line", None) for t in candidates if t.tool_name == failure.tool), None)
    return LoadErrorInfo(
        EXAMPLE_FAILED,
        failure.message(),
        str(path),
        line if isinstance(line, int) else None,
        kind=LoadErrorKind.EXAMPLE_FAILED,
    )


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."
