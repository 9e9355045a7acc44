"""Benchmarks of the tool loader against its peers (Strands' tool watcher, FastMCP's file provider).

Run everything with ``python -m bench`` (``--quick`` for tiny sizes, ``--only NAME``,
``--reps N``); each benchmark prints its tables and targets, and the raw numbers
are written as JSON under ``bench/results/``.
"""

BENCHMARKS = (
    "save_to_callable",
    "correctness",
    "initial_load",
    "reload_cost",
    "listing",
    "mcp_call",
    "call_overhead",
    "memory",
    "gate_cost",
    "isolation",
    "burst",
    "tracing_overhead",
    "sessions",
    "drain",
    "hanging_import",
    "search_quality",
)
"""Benchmark module names, in the order ``python -m bench`` runs them."""

__all__ = ["BENCHMARKS"]
