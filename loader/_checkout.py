"""Make ``loader.plugins`` importable from a source checkout.

The built-in discovery plugins live in the repository's top-level ``plugins/`` folder. A built
wheel installs that folder as ``loader/plugins`` (hatchling ``force-include``), but an editable
install (``pip install -e .``) or running from the repository root imports ``loader`` straight
from the checkout, where there is no ``loader/plugins``. There we mount ``plugins/`` under the
name ``loader.plugins`` so every way of running the project finds the same modules, without
ever claiming the generic top-level name ``plugins`` in ``sys.modules``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PLUGINS_PACKAGE = "loader.plugins"


def mount_checkout_plugins(package_dir: Path) -> None:
    """Register ``<checkout>/plugins`` as ``loader.plugins`` when the package has none of its own."""
    if PLUGINS_PACKAGE in sys.modules or (package_dir / "plugins" / "__init__.py").exists():
        return
    init = package_dir.parent / "plugins" / "__init__.py"
    if not init.is_file():
        return
    spec = importlib.util.spec_from_file_location(
        PLUGINS_PACKAGE, init, submodule_search_locations=[str(init.parent)]
    )
    if spec is None or spec.loader is None:  # pragma: no cover - a file we just found
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[PLUGINS_PACKAGE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[PLUGINS_PACKAGE]
        raise
    parent = sys.modules.get(PLUGINS_PACKAGE.rpartition(".")[0])
    if parent is not None:
        parent.plugins = module  # type: ignore[attr-defined]
