"""Prometheus metrics of one serving replica, with the official ``prometheus_client`` (extra ``metrics``).

Counters and histograms follow the loader's events and the server's calls as
they happen; gauges (tools, files by state, generation, fingerprint) are read
from the registry and the loader at scrape time, so they are never stale.
Each ``ServeMetrics`` owns its own ``CollectorRegistry``: several servers in
one process never share or clash.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from ..status import FileState, LoaderEvent, LoaderEventKind
from .server import CallOutcome, CallRecord, MCPToolServer

__all__ = ["CONTENT_TYPE", "ServeMetrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST

_FAILURES = (LoaderEventKind.FAILED, LoaderEventKind.STUCK, LoaderEventKind.CONFLICT)
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class _StateCollector(Collector):
    """Gauges read at scrape time from one served record: its snapshot and the file statuses behind it."""

    def __init__(self, server: MCPToolServer) -> None:
        self._server = server

    def collect(self) -> Iterator[Metric]:
        served = self._server.served()
        snapshot = served.snapshot
        tools = GaugeMetricFamily("tool_loader_tools_loaded", "Tools served right now.")
        tools.add_metric([], len(snapshot))
        yield tools
        sessions = GaugeMetricFamily(
            "tool_loader_handshake_sessions", "Handshake-era sessions that list changes are announced to."
        )
        sessions.add_metric([], self._server.handshake_sessions)
        yield sessions
        in_flight = GaugeMetricFamily("tool_loader_calls_in_flight", "tools/call requests running now.")
        in_flight.add_metric([], self._server.calls_in_flight)
        yield in_flight
        generation = GaugeMetricFamily("tool_loader_registry_generation", "The registry's generation.")
        generation.add_metric([], snapshot.generation)
        yield generation
        if self._server.loader is not None:
            states = Tally(status.state for status in served.statuses.values())
            files = GaugeMetricFamily("tool_loader_files", "Tool source files by state.", labels=["state"])
            for state in FileState:
                if state is not FileState.REMOVED:
                    files.add_metric([str(state)], states.get(state, 0))
            yield files
        info = InfoMetricFamily("tool_loader_tool_set", "The fingerprint of the tool set served right now.")
        info.add_metric([], {"fingerprint": served.fingerprint})
        yield info


class ServeMetrics:
    """The metrics of one ``MCPToolServer`` (and its loader); ``render()`` gives the exposition text."""

    content_type = CONTENT_TYPE

    def __init__(self, server: MCPToolServer) -> None:
        self.registry = CollectorRegistry()
        self.reloads = Counter(
            "tool_loader_reloads",
            "File reloads by outcome (added, updated, removed, failed, conflict, recovered, stuck).",
            ["outcome"],
            registry=self.registry,
        )
        self.load_failures = Counter(
            "tool_loader_load_failures", "Failed loads by kind.", ["kind"], registry=self.registry
        )
        self.reload_seconds = Histogram(
            "tool_loader_reload_duration_seconds",
            "Time to reload one file.",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.calls = Counter(
            "tool_loader_calls",
            "tools/call requests by tool and outcome.",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.call_seconds = Histogram(
            "tool_loader_call_duration_seconds",
            "tools/call latency by tool.",
            ["tool"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_StateCollector(server))
        self._server = server
        self._unsubscribers: list[Callable[[], None]] = [server.subscribe_calls(self._on_call)]
        if server.loader is not None:
            self._unsubscribers.append(server.loader.subscribe(self._on_event))

    def _on_event(self, event: LoaderEvent) -> None:
        self.reloads.labels(outcome=str(event.kind)).inc()
        if event.kind in _FAILURES:
            self.load_failures.labels(kind=str(event.kind)).inc()
        if event.kind is not LoaderEventKind.REMOVED:
            self.reload_seconds.observe(event.duration_ms / 1000.0)

    def _on_call(self, record: CallRecord) -> None:
        # An unknown name is one label value, so clients cannot grow the label set at will.
        tool = record.tool if record.outcome is not CallOutcome.UNKNOWN_TOOL else "(unknown)"
        self.calls.labels(tool=tool, outcome=str(record.outcome)).inc()
        self.call_seconds.labels(tool=tool).observe(record.seconds)

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)

    def close(self) -> None:
        """Stop following the loader and the server."""
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers.clear()
