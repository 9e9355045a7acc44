"""Pinned defaults: changing how long the loader waits, or what it loads, must be a deliberate act.

Every other test runs with its own short timings (``support.FAST``), so a
changed default would go unnoticed anywhere else.
"""

from __future__ import annotations

import dataclasses

from loader import LoaderConfig, WatchTimings


def test_watch_timings_defaults() -> None:
    assert dataclasses.asdict(WatchTimings()) == {"settle": 0.0, "debounce": 0.05, "disappear_grace": 0.05}


def test_loader_config_defaults() -> None:
    assert dataclasses.asdict(LoaderConfig()) == {
        "recursive": True,
        "timings": {"settle": 0.0, "debounce": 0.05, "disappear_grace": 0.05},
        "empty_grace": 0.5,
        "import_timeout": 10.0,
        "import_patience": 0.1,
        "rescan_interval": 2.0,
        "supervise_interval": 0.25,
        "entry_point_plugins": True,
        "builtin_plugins": True,
        "isolation": "thread",
        "worker_env": (),
        "max_memory_mb": 2048,
        "max_processes": 256,
        "worker_command_prefix": (),
        "sandbox_allow_read": (),
        "sandbox_allow_write": (),
        "sandbox_allow_connect": (),
        "sandbox_allow_network": False,
        "sandbox_best_effort": False,
        "sandbox_call_cpu_seconds": 60.0,
        "sandbox_max_file_mb": 1024,
        "call_timeout": 60.0,
        "max_concurrent_calls_per_tool": 8,
        "max_result_bytes": 32 * 1024 * 1024,
        "gate": False,
        "example_timeout": 5.0,
        "bytecode_cache": True,
    }
    assert LoaderConfig().timings == WatchTimings()
