"""The OpenTelemetry SDK with in-memory exporters, installed as the global providers for one block of a test.

One tracer provider and one meter provider serve the whole process, set through
the API's public setters the first time a block starts (a provider can be set
once: libraries keep the tracer of the first provider they saw). Outside a
``captured()`` block finished spans are dropped. A test that needs a process
with no provider at all runs its code in a fresh interpreter.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support import eventually

from loader.calls import tracing

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


def _install() -> None:
    """The SDK providers as the process's globals (a no-op once they are)."""
    if trace.get_tracer_provider() is not _TRACER_PROVIDER:
        trace.set_tracer_provider(_TRACER_PROVIDER)
    if metrics.get_meter_provider() is not _METER_PROVIDER:
        metrics.set_meter_provider(_METER_PROVIDER)
    assert trace.get_tracer_provider() is _TRACER_PROVIDER, "another tracer provider was set first"
    assert metrics.get_meter_provider() is _METER_PROVIDER, "another meter provider was set first"
    # The loader looks for a provider set after it started at most once a second: wait until it sees this one.
    eventually(lambda: tracing.instruments() is not None, 5, "the loader sees the providers")


@contextmanager
def captured() -> Iterator[Captured]:
    """The spans and metrics recorded during the block by the process's SDK providers."""
    _install()
    _EXPORTER.clear()
    _GATE.open = True
    try:
        yield Captured(_EXPORTER, _READER)
    finally:
        _GATE.open = False
