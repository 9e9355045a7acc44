"""Shared fixtures: temporary tool folders and loaders with short windows."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from smoke import SMOKE
from support import FAST

from loader.isolation import SandboxOptions
from loader.reload.loader import ToolLoader

# `pytest --cpu-time`: where the suite's CPU goes (tests/README.md).
pytest_plugins = ["cpu_time"]

# Tool files the MCP conformance suite calls (.ci/conformance.sh); their names start with test_.
collect_ignore_glob = ["conformance/tools/*.py"]

# A shell starts background jobs with SIGINT ignored, and Python then installs no Ctrl-C handler;
# the suite tests what a user's Ctrl-C does, so it runs with Python's own handler wherever started
# (the processes it spawns then get the default disposition back at exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def bytecode_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Users' machines write .pyc files; stale-bytecode bugs only show with writing on."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Tool history (on by default in watch/serve) goes to a temporary state directory, never the user's."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("TOOL_LOADER_STATE_DIR", str(state))
    return state


@pytest.fixture(autouse=True)
def private_bytecode_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Compiled tool files go to a cache folder of this test's own, never the user's."""
    folder = tmp_path_factory.mktemp("bytecode") / "cache"
    monkeypatch.setenv("TOOL_LOADER_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def anyio_backend() -> str:
    """The event loop of every ``pytest.mark.anyio`` test: asyncio, which the loader and the MCP SDK run on."""
    return "asyncio"


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    return folder


@pytest.fixture
def isolation() -> str | None:
    """The isolation mode ``make_loader`` imposes (None: whatever the config says).

    Test modules that must hold in every mode override this with a fixture
    parametrized over ``"thread"``, ``"process"`` and ``"sandbox"``.
    """
    return None


@pytest.fixture
def make_loader(isolation: str | None) -> Iterator[Callable[..., ToolLoader]]:
    """Build loaders with short windows; every loader is closed at the end of the test."""
    loaders: list[ToolLoader] = []

    def build(*paths: Path | str, watch: bool = True, **kwargs: Any) -> ToolLoader:
        config = kwargs.pop("config", FAST)
        if isolation is not None:
            config = replace(config, isolation=isolation)
        if config.isolation == "sandbox":  # tests' tools leave marks beside their folder: let them
            sandbox = config.sandbox or SandboxOptions()
            writes = (*sandbox.allow_write, *(Path(p).parent for p in paths))
            config = replace(config, sandbox=replace(sandbox, allow_write=writes))
        loader = ToolLoader(list(paths), config=config, **kwargs)
        loaders.append(loader)
        loader.scan()
        if watch:
            loader.start()
        return loader

    yield build
    for loader in loaders:
        loader.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that tests/smoke.py names (a file, or a test in it with its parameters)."""
    tests = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(tests):
            continue
        node = item.path.relative_to(tests).as_posix() + "::" + item.name
        if any(node == entry or node.startswith(entry + "::") for entry in SMOKE):
            item.add_marker(pytest.mark.smoke)
