"""OpenTelemetry for tool calls through the API alone: a span and a duration per call, the caller's trace
carried to wherever the tool's code runs.

Nothing here picks an SDK or an exporter: whoever runs the process does
(``opentelemetry-instrument tool-loader serve ...``, or the application's own
setup). The API (the ``otel`` extra) is imported only once something else in
the process has imported it (no provider can be set without it), so neither
the loader nor a worker process pays for the import otherwise. Only the API's
public names are used: one tracer and one meter from its global getters, which
follow whichever providers are set, before or after they were asked for. The
getters read the environment while nothing is set, which costs more than a call
may, so until a provider is set the loader looks again at most once a second (a
provider set later records from the calls that start a second after, at most);
once one is set, it stays (the API sets a provider once).

Each call gets an ``execute_tool {name}`` span (the GenAI semantic conventions:
kind INTERNAL, ``gen_ai.operation.name``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``error.type``) carrying the identity of the version
that ran: ``tool_loader.tool.digest``, ``code.file.path``, ``code.line.number``,
``tool_loader.registry.generation`` and ``tool_loader.isolation``. Its parent
is the caller's context: the MCP SDK's ``tools/call`` server span (which
continues the request's ``_meta.traceparent``), or whatever span is current
in Python. The span is current while the tool runs, on whichever thread runs
it; a worker process gets it as a W3C ``traceparent`` (``trace_carrier``,
``remote_context``). Its duration goes to ``gen_ai.execute_tool.duration``.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..fingerprint import tool_digest
from ..types import AgentTool
from .containment import safe_name

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

__all__ = [
    "CALL_DURATION",
    "RELOAD_DURATION",
    "TIMEOUT",
    "TOOL_ERROR",
    "CallTrace",
    "Instruments",
    "instruments",
    "note_exception",
    "note_timeout",
    "remote_context",
    "start_call",
    "trace_carrier",
]

logger = logging.getLogger(__name__)

INSTRUMENTATION_NAME = "tool-loader"
CALL_DURATION = "gen_ai.execute_tool.duration"
"""The histogram of call durations (seconds), as the GenAI semantic conventions name it."""
RELOAD_DURATION = "tool_loader.reload.duration"
"""The histogram of file reload durations (seconds)."""
TOOL_ERROR = "tool_error"
"""``error.type`` of a call that returned an error result (the MCP SDK's word for the same)."""
TIMEOUT = "timeout"
"""``error.type`` of a call that passed its deadline."""

_PROVIDER_VARIABLES = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
"""Environment variables naming a provider the API loads on first use, with nobody importing it first."""

_PROVIDER_NAMED = any(os.environ.get(name) for name in _PROVIDER_VARIABLES)
"""Read once: reading the environment on every call would cost more than the rest of the check."""

LOOK_AGAIN_SECONDS = 1.0
"""While no provider is set, how long the loader goes on without looking for one."""


def _version() -> str:
    from importlib import metadata  # here: asked once per tracer; every process imports this module

    try:
        return metadata.version("tool-loader")
    except metadata.PackageNotFoundError:
        return "0"


class Instruments:
    """The parts of the OpenTelemetry API used here, with the tracer and the histograms, made once.

    The API's global tracer and meter are proxies: they record nothing until an
    application sets its providers, and from then on to those providers.
    """

    __slots__ = (
        "call_duration",
        "context",
        "live",
        "look_again_at",
        "metrics",
        "reload_duration",
        "trace",
        "tracer",
        "w3c",
    )

    def __init__(self) -> None:
        from opentelemetry import context, metrics, trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.context: Any = context
        self.trace: Any = trace
        self.metrics: Any = metrics
        self.live = False
        """Whether a tracer or meter provider is set (then it stays set)."""
        self.look_again_at = 0.0
        self.w3c = TraceContextTextMapPropagator()
        version = _version()
        self.tracer: Tracer = trace.get_tracer(INSTRUMENTATION_NAME, version)
        meter = metrics.get_meter(INSTRUMENTATION_NAME, version)
        self.call_duration: Histogram = meter.create_histogram(
            CALL_DURATION, unit="s", description="Duration of tool executions."
        )
        self.reload_duration: Histogram = meter.create_histogram(
            RELOAD_DURATION, unit="s", description="Duration of tool file reloads."
        )

    def recording(self) -> bool:
        """Whether a provider is set: at once when one was seen, else looked at once a second at most."""
        if self.live:
            return True
        now = time.monotonic()
        if now < self.look_again_at:
            return False
        self.look_again_at = now + LOOK_AGAIN_SECONDS
        self.live = _is_set(self.trace.get_tracer_provider()) or _is_set(self.metrics.get_meter_provider())
        return self.live


def _is_set(provider: object) -> bool:
    """Whether ``provider`` is somebody's (an SDK's): the API's own are its no-op and proxy placeholders."""
    return not type(provider).__module__.startswith(("opentelemetry.trace", "opentelemetry.metrics"))


_state: Instruments | bool = False
"""The instruments once made; False while the API was never wanted; True when it is not installed."""


def instruments(*, needed: bool = False) -> Instruments | None:
    """The instruments if a provider is set (see ``Instruments.recording``), else None.

    The API is imported only if something imported it already (or it is ``needed``, or
    a provider variable is set): nobody can have set a provider without importing it.
    """
    api = _api(needed=needed)
    return api if api is not None and api.recording() else None


def _api(*, needed: bool) -> Instruments | None:
    global _state
    state = _state
    if isinstance(state, Instruments):
        return state
    if state is True:
        return None
    if not needed and not _PROVIDER_NAMED and "opentelemetry.trace" not in sys.modules:
        return None
    try:
        found = Instruments()
    except ImportError:  # the otel extra is not installed
        _state = True
        return None
    _state = found
    return found


_CALL: contextvars.ContextVar[CallTrace | None] = contextvars.ContextVar("tool_loader_call", default=None)


def _identity(
    tool: AgentTool, name: str, tool_use_id: str, generation: int | None
) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": tool_use_id,
    }
    if generation is not None:
        attributes["tool_loader.registry.generation"] = generation
    try:  # a tool's own properties may raise: the call still runs, with fewer attributes
        attributes["tool_loader.isolation"] = tool.isolation
        attributes["tool_loader.tool.digest"] = tool_digest(tool)
        source, line = tool.source_file, tool.source_line
    except Exception:
        logger.debug("tool_name=<%s> | tool identity incomplete in its span", name, exc_info=True)
        return attributes
    if source is not None:
        attributes["code.file.path"] = source
    if line is not None:
        attributes["code.line.number"] = line
    return attributes


class CallTrace:
    """One call's span and duration; ``end`` once, with the result or the exception that ended it.

    As a context manager it ends with the exception that leaves its block.
    """

    __slots__ = ("_api", "_name", "_span", "_started", "_tokens", "error_type")

    def __init__(
        self,
        found: Instruments,
        tool: AgentTool,
        name: str,
        tool_use_id: str,
        generation: int | None,
        *,
        attach: bool,
    ) -> None:
        self._api = found
        self._name = name
        self.error_type: str | None = None
        self._tokens: tuple[contextvars.Token[Any], contextvars.Token[CallTrace | None]] | None = None
        span = found.tracer.start_span(f"execute_tool {name}", kind=found.trace.SpanKind.INTERNAL)
        if span.is_recording():  # a tracer provider is set (and its sampler keeps the span)
            span.set_attributes(_identity(tool, name, tool_use_id, generation))
        # With no trace at all (no provider, no caller's trace) there is nothing to make current.
        self._span: Span | None = span if span.get_span_context().is_valid else None
        if attach:
            self._tokens = (self._api.context.attach(self._otel_context()), _CALL.set(self))
        self._started = time.perf_counter()

    def _otel_context(self) -> Any:
        if self._span is None:
            return self._api.context.get_current()
        return self._api.trace.set_span_in_context(self._span)

    def context(self) -> contextvars.Context:
        """A copy of the current context with this call's span current: for code run on another thread."""
        copied = contextvars.copy_context()
        copied.run(self._enter)
        return copied

    def _enter(self) -> None:
        self._api.context.attach(self._otel_context())
        _CALL.set(self)

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """This call's span current for the ``with`` block (around each step of a stream)."""
        token = self._api.context.attach(self._otel_context())
        call_token = _CALL.set(self)
        try:
            yield
        finally:
            _CALL.reset(call_token)
            self._api.context.detach(token)

    def __enter__(self) -> CallTrace:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        """What escapes the ``with`` block ends the call; a block that ends well calls ``end`` itself."""
        if exc is not None:
            self.end(exc=exc)

    def raised(self, exc: BaseException) -> None:
        """Note that the tool's code raised ``exc`` (its result says so too)."""
        self.error_type = type(exc).__qualname__
        if self._span is not None:
            self._span.record_exception(exc)

    def end(self, result: Mapping[str, Any] | None = None, exc: BaseException | None = None) -> None:
        """Close the span and record the duration; an error result or ``exc`` sets ``error.type``."""
        seconds = time.perf_counter() - self._started
        if self._tokens is not None:
            token, call_token = self._tokens
            self._tokens = None
            _CALL.reset(call_token)
            self._api.context.detach(token)
        error_type = self.error_type
        if exc is not None:
            error_type = type(exc).__qualname__
        elif error_type is None and (result is None or result.get("status") == "error"):
            error_type = TOOL_ERROR
        span = self._span
        if span is not None:
            if error_type is not None:
                span.set_attribute("error.type", error_type)
                span.set_status(self._api.trace.StatusCode.ERROR)
            span.end()
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": self._name,
        }
        if error_type is not None:
            attributes["error.type"] = error_type
        self._api.call_duration.record(seconds, attributes)


def start_call(
    tool: AgentTool, tool_use_id: str, generation: int | None, *, attach: bool = True
) -> CallTrace | None:
    """The trace of a call about to run, or None when nothing records (then the call pays nothing more).

    With ``attach`` the span is current in this context until ``end``; without
    (a stream, whose steps run in its consumer's context), use ``current`` or ``context``.
    """
    found = instruments()
    if found is None:
        return None
    return CallTrace(found, tool, safe_name(tool), tool_use_id, generation, attach=attach)


def note_exception(exc: BaseException) -> None:
    """Tell the trace of the call running here that its tool raised ``exc``."""
    call = _CALL.get()
    if call is not None:
        call.raised(exc)


def note_timeout() -> None:
    """Tell the trace of the call running here that it passed its deadline."""
    call = _CALL.get()
    if call is not None:
        call.error_type = TIMEOUT


def trace_carrier() -> dict[str, str] | None:
    """The current trace as W3C ``traceparent`` (and ``tracestate``), for a call sent to another process."""
    api = _api(needed=False)
    if api is None:
        return None
    carrier: dict[str, str] = {}
    api.w3c.inject(carrier)
    return carrier or None


@contextlib.contextmanager
def remote_context(carrier: object) -> Iterator[None]:
    """The trace ``carrier`` names (``trace_carrier``'s, from another process) current in the block."""
    api = _api(needed=True) if isinstance(carrier, dict) and carrier else None
    if api is None or not isinstance(carrier, dict):
        yield
        return
    token = api.context.attach(api.w3c.extract({str(k): str(v) for k, v in carrier.items()}))
    try:
        yield
    finally:
        api.context.detach(token)
