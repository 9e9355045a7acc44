"""``LoaderConfig``: one options tree (``workers``, ``sandbox``), checked where each part is built."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from loader import LoaderConfig
from loader.errors import OptionError
from loader.isolation import SandboxOptions, WorkerOptions
from loader.isolation.sandbox import Endpoint


def test_the_flat_settings_still_work_for_a_release_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"max_memory_mb, sandbox_allow_connect, sandbox_call_cpu_se"):
        config = LoaderConfig(
            max_memory_mb=512,
            sandbox_allow_connect=("api.example.com:443",),
            sandbox_call_cpu_seconds=None,
            isolation="sandbox",
        )
    assert config.workers == WorkerOptions(max_memory_mb=512)
    assert config.sandbox == SandboxOptions(
        allow_connect=(Endpoint("api.example.com", 443),), max_cpu_seconds=None
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = replace(config, recursive=False)  # replace() does not fold (or warn) a second time
    assert (again.workers, again.sandbox) == (config.workers, config.sandbox)


def test_reading_a_flat_setting_fails_loudly_instead_of_answering_a_placeholder() -> None:
    config = LoaderConfig(workers=WorkerOptions(max_memory_mb=512))
    for old_name in ("sandbox_best_effort", "max_memory_mb"):  # what code written for the flat fields reads
        with pytest.raises(TypeError, match=r"read LoaderConfig.workers and LoaderConfig.sandbox"):
            bool(getattr(config, old_name))
    assert config.workers.max_memory_mb == 512


def test_a_flat_setting_is_checked_as_its_new_home_checks_it() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(OptionError, match="max_processes") as caught:
        LoaderConfig(max_processes=-1)
    assert (caught.value.option, caught.value.value) == ("max_processes", -1)


@pytest.mark.parametrize(
    ("build", "option"),
    [
        (lambda: WorkerOptions(max_memory_mb=-1), "max_memory_mb"),
        (lambda: WorkerOptions(call_workers=0), "call_workers"),
        (lambda: SandboxOptions(max_cpu_seconds=0), "max_cpu_seconds"),
        (lambda: SandboxOptions(max_cpu_seconds=math.nan), "max_cpu_seconds"),
        (lambda: SandboxOptions(max_file_mb=0), "max_file_mb"),
    ],
)
def test_each_options_object_refuses_what_it_cannot_be(build: object, option: str) -> None:
    with pytest.raises(OptionError) as caught:
        build()  # type: ignore[operator]
    assert caught.value.option == option and isinstance(caught.value, ValueError)


def test_the_sandbox_applies_in_sandbox_mode_only_and_expands_home() -> None:
    assert LoaderConfig(isolation="process", sandbox=SandboxOptions()).sandbox_options() is None
    assert LoaderConfig(isolation="sandbox").sandbox_options() == SandboxOptions()
    chosen = SandboxOptions(allow_read=(Path("~/data"),))
    assert chosen.allow_read == (Path.home() / "data",)
    assert LoaderConfig(isolation="sandbox", sandbox=chosen).sandbox_options() is chosen


def test_workers_run_under_the_loaders_call_limits() -> None:
    config = LoaderConfig(
        call_timeout=None,
        max_result_bytes=0,
        max_concurrent_calls_per_tool=3,
        workers=WorkerOptions(max_memory_mb=100, call_timeout=5.0),
    )
    workers = config.worker_options()
    assert (workers.call_timeout, workers.max_result_bytes, workers.max_concurrent_per_tool) == (0.0, None, 3)
    assert workers.max_memory_mb == 100
