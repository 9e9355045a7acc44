"""The package's public surface is importable from one place and typed."""

from __future__ import annotations

import importlib
import importlib.resources
from pathlib import Path

import loader


def test_every_exported_name_exists() -> None:
    for name in loader.__all__:
        assert hasattr(loader, name), name
    assert len(set(loader.__all__)) == len(loader.__all__)


def test_py_typed_ships() -> None:
    assert importlib.resources.files("loader").joinpath("py.typed").is_file()


def test_builtin_plugins_install_under_the_loader_package() -> None:
    # Imported by name, as loader/importing/discovery.py does: in a checkout, loader.plugins is the
    # top-level plugins/ folder mounted at import time, which mypy cannot follow.
    plugins = importlib.import_module("loader.plugins")
    builtin: tuple[str, ...] = plugins.BUILTIN_PLUGINS
    assert builtin and plugins.__name__ == "loader.plugins"
    for module_name in builtin:
        assert module_name.startswith("loader.plugins.")
        importlib.import_module(module_name)


def test_core_and_cli_do_not_need_the_optional_extras(tmp_path: Path) -> None:
    """``import loader`` and building the CLI parser never import mcp, anyio or strands (optional extras)."""
    import subprocess
    import sys

    code = (
        "import sys, loader, loader.console.cli\n"
        "loader.console.cli.build_parser()\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'anyio', 'strands', 'uvicorn'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert out.stdout.strip() == "[]"
