"""The OpenTelemetry SDK with in-memory exporters, installed as the global providers for one block of a test.

One tracer provider and one meter provider serve the whole session: libraries
cache the tracer of the first provider they saw (the MCP SDK's proxy tracer
does), so a fresh provider per test would lose their spans. Outside a
``captured()`` block the globals are unset again (as OpenTelemetry's own test
utilities do it), so every other test runs with no provider, as users
without OpenTelemetry do; spans a cached tracer still makes then are dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import _internal as metrics_state
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

__all__ = ["Captured", "captured"]


class _Gate(SpanProcessor):
    """Passes finished spans to the exporter only inside a ``captured()`` block."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner
        self.open = False

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if self.open:
            self.inner.on_end(span)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_EXPORTER = InMemorySpanExporter()
_GATE = _Gate(SimpleSpanProcessor(_EXPORTER))
_TRACER_PROVIDER = TracerProvider()
_TRACER_PROVIDER.add_span_processor(_GATE)
_READER = InMemoryMetricReader()
_METER_PROVIDER = MeterProvider(metric_readers=[_READER])


@dataclass
class Captured:
    """What one block recorded."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """Finished spans, oldest first; only those named ``name`` when given."""
        return [s for s in self.exporter.get_finished_spans() if name is None or s.name == name]

    def histogram(self, metric: str, **attributes: Any) -> Sequence[HistogramDataPoint]:
        """The data points of a histogram whose attributes include ``attributes``."""
        data = self.reader.get_metrics_data()
        found: list[HistogramDataPoint] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    if item.name != metric:
                        continue
                    for point in item.data.data_points:
                        point_attributes = dict(point.attributes or {})
                        if isinstance(point, HistogramDataPoint) and all(
                            point_attributes.get(k) == v for k, v in attributes.items()
                        ):
                            found.append(point)
        return found


def _unset() -> None:
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    metrics_state._METER_PROVIDER_SET_ONCE = Once()
    metrics_state._METER_PROVIDER = None


@contextmanager
def captured() -> Iterator[Captured]:
    """The SDK providers as the globals for the block; the spans and metrics recorded meanwhile."""
    _unset()
    trace.set_tracer_provider(_TRACER_PROVIDER)
    metrics.set_meter_provider(_METER_PROVIDER)
    _EXPORTER.clear()
    _GATE.open = True
    try:
        yield Captured(_EXPORTER, _READER)
    finally:
        _GATE.open = False
        _unset()
