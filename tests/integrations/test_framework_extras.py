"""Each framework adapter is an optional extra: without its framework it says what to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ADAPTERS = {
    "langchain": ("langchain", "langchain"),
    "openai_agents": ("agents", "openai-agents"),
    "pydantic_ai": ("pydantic_ai", "pydantic-ai"),
    "google_adk": ("google.adk", "google-adk"),
    "llama_index": ("llama_index", "llama-index"),
    "smolagents": ("smolagents", "smolagents"),
}
"""Adapter module -> (the framework package it needs, the extra that installs it, which names its PyPI package)."""


def test_without_its_framework_an_adapter_says_what_to_install(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import importlib, sys
        adapters = {ADAPTERS!r}
        import loader, loader.integrations
        print("frameworks imported by loader:", sorted(f for f, _ in adapters.values() if f in sys.modules))
        for module, (framework, extra) in adapters.items():
            saved = {{name: sys.modules.pop(name) for name in list(sys.modules) if name == framework
                      or name.startswith(framework + ".")}}
            sys.modules[framework] = None  # as if it were not installed
            try:
                importlib.import_module("loader.integrations." + module)
            except ImportError as exc:
                print(module, "|", exc)
            else:
                print(module, "| imported")
            del sys.modules[framework]
            sys.modules.update(saved)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    first, *lines = done.stdout.splitlines()
    assert first == "frameworks imported by loader: []"
    for line, (module, (_, extra)) in zip(lines, ADAPTERS.items(), strict=True):
        name, message = line.split(" | ")
        assert name == module
        assert message.startswith(f"loader.integrations.{module} needs "), line
        assert "pip install" in message and extra in message, line
