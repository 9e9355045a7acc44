"""OpenTelemetry for tool calls through the API alone: a span and a duration per call, the caller's trace
carried to wherever the tool's code runs.

Nothing here picks an SDK or an exporter: whoever runs the process does
(``opentelemetry-instrument tool-loader serve ...``, or the application's own
setup). The API (the ``otel`` extra) is imported only once something else in
the process has imported it (no provider can be set without it), so neither
the loader nor a worker process pays for the import otherwise. With no
provider set a call costs a few attribute reads: the API's public getters
read the environment on every call when nothing is configured, so the module
globals they return are read directly, falling back to the getters if an API
release renames them.

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
from importlib import metadata
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


class _Api:
    """The parts of the OpenTelemetry API used here, imported on first need."""

    def __init__(self) -> None:
        from opentelemetry import context, trace
        from opentelemetry.metrics import _internal as metrics
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.context: Any = context
        self.trace: Any = trace
        self.metrics: Any = metrics
        self.w3c = TraceContextTextMapPropagator()
        self.fast = hasattr(trace, "_TRACER_PROVIDER") and hasattr(metrics, "_METER_PROVIDER")
        if os.environ.get(_PROVIDER_VARIABLES[0]):
            trace.get_tracer_provider()
        if os.environ.get(_PROVIDER_VARIABLES[1]):
            metrics.get_meter_provider()

    def providers(self) -> tuple[Any, Any]:
        """The tracer and meter providers set now (None for each one nobody set)."""
        if self.fast:
            return self.trace._TRACER_PROVIDER, self.metrics._METER_PROVIDER
        return self.trace.get_tracer_provider(), self.metrics.get_meter_provider()


_api_state: _Api | bool = False
"""The API once imported; False while it was never wanted; True when it turned out not to be installed."""


def _api(*, needed: bool = False) -> _Api | None:
    """The API if something imported it already (or it is ``needed``, or a provider variable is set)."""
    global _api_state
    state = _api_state
    if isinstance(state, _Api):
        return state
    if state is True:
        return None
    if not needed and not _PROVIDER_NAMED and "opentelemetry.trace" not in sys.modules:
        return None
    try:
        found = _Api()
    except ImportError:  # the otel extra is not installed
        _api_state = True
        return None
    _api_state = found
    return found


def _version() -> str:
    try:
        return metadata.version("tool-loader")
    except metadata.PackageNotFoundError:
        return "0"


class Instruments:
    """The tracer and histograms of one pair of providers (either may be unset)."""

    __slots__ = ("api", "call_duration", "meter_provider", "reload_duration", "tracer", "tracer_provider")

    def __init__(self, api: _Api, tracer_provider: Any, meter_provider: Any) -> None:
        self.api = api
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        version = _version()
        self.tracer: Tracer | None = None
        self.call_duration: Histogram | None = None
        self.reload_duration: Histogram | None = None
        if tracer_provider is not None and not isinstance(
            tracer_provider, (api.trace.ProxyTracerProvider, api.trace.NoOpTracerProvider)
        ):
            self.tracer = tracer_provider.get_tracer(INSTRUMENTATION_NAME, version)
        if meter_provider is not None and not isinstance(
            meter_provider, (api.metrics._ProxyMeterProvider, api.metrics.NoOpMeterProvider)
        ):
            meter = meter_provider.get_meter(INSTRUMENTATION_NAME, version)
            self.call_duration = meter.create_histogram(
                CALL_DURATION, unit="s", description="Duration of tool executions."
            )
            self.reload_duration = meter.create_histogram(
                RELOAD_DURATION, unit="s", description="Duration of tool file reloads."
            )

    @property
    def idle(self) -> bool:
        """Whether neither a tracer nor a meter is there to use."""
        return self.tracer is None and self.call_duration is None


_cached: Instruments | None = None


def instruments() -> Instruments | None:
    """The instruments of the providers set now, or None when there is nothing to record to."""
    global _cached
    api = _api()
    if api is None:
        return None
    tracer_provider, meter_provider = api.providers()
    if tracer_provider is None and meter_provider is None:
        return None
    cached = _cached
    if (
        cached is None
        or cached.tracer_provider is not tracer_provider
        or cached.meter_provider is not meter_provider
    ):
        cached = _cached = Instruments(api, tracer_provider, meter_provider)
    return None if cached.idle else cached


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
    """One call's span and duration; ``end`` once, with the result or the exception that ended it."""

    __slots__ = ("_api", "_instruments", "_name", "_span", "_started", "_tokens", "error_type")

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
        self._instruments = found
        self._api = found.api
        self._name = name
        self.error_type: str | None = None
        self._span: Span | None = None
        self._tokens: tuple[contextvars.Token[Any], contextvars.Token[CallTrace | None]] | None = None
        if found.tracer is not None:
            self._span = found.tracer.start_span(
                f"execute_tool {name}",
                kind=self._api.trace.SpanKind.INTERNAL,
                attributes=_identity(tool, name, tool_use_id, generation),
            )
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
        histogram = self._instruments.call_duration
        if histogram is not None:
            attributes: dict[str, AttributeValue] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": self._name,
            }
            if error_type is not None:
                attributes["error.type"] = error_type
            histogram.record(seconds, attributes)


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
    api = _api()
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
