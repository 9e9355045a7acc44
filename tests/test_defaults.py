"""Pinned defaults: changing how long the loader waits, or what it loads, must be a deliberate act.

Every other test runs with its own short timings (``support.FAST``), so a
changed default would go unnoticed anywhere else.
"""

from __future__ import annotations

import dataclasses

from loader import LoaderConfig, WatchTimings
from loader.isolation import SandboxOptions


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
        "workers": {
            "worker_env": (),
            "max_memory_mb": 2048,
            "max_processes": 256,
            "max_result_bytes": None,
            "max_concurrent_per_tool": 8,
            "call_workers": 8,
            "spare_workers": 1,
            "call_timeout": 60.0,
            "start_timeout": 30.0,
            "command_prefix": (),
        },
        "sandbox": None,
        "call_timeout": 60.0,
        "max_concurrent_calls_per_tool": 8,
        "max_result_bytes": 32 * 1024 * 1024,
        "gate": False,
        "example_timeout": 5.0,
        "bytecode_cache": True,
    }
    assert LoaderConfig().timings == WatchTimings()


def test_sandbox_options_defaults() -> None:
    assert dataclasses.asdict(SandboxOptions()) == {
        "allow_read": (),
        "allow_write": (),
        "allow_connect": (),
        "allow_network": False,
        "best_effort": False,
        "max_file_mb": 1024,
        "max_open_files": 1024,
        "max_cpu_seconds": 60.0,
    }
