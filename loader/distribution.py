"""How this package is installed: the checkout's plugins folder, and the optional extras.

The built-in discovery plugins live in the repository's top-level ``plugins/``
folder. A built wheel installs that folder as ``loader/plugins`` (hatchling
``force-include``), but running from the checkout (an editable install imports
``loader`` straight from it, or ``python -m loader`` at the repository root)
finds no ``loader/plugins``. There ``mount_checkout_plugins`` mounts ``plugins/``
under the name ``loader.plugins``, so every way of running the project finds the
same modules, without ever claiming the generic top-level name ``plugins`` in
``sys.modules``.

A hint that says ``pip install 'tool-loader[mcp]'`` only works if a package
index serves a distribution of that name, and if none does, anyone could
register it. So install hints name the requirements themselves, as the
installed distribution's metadata declares them for the extra, or, when the
package runs from a checkout that was never installed, as ``FALLBACK`` (which a
test keeps equal to ``pyproject.toml``).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = [
    "DISTRIBUTION",
    "FALLBACK",
    "install_command",
    "missing_extra",
    "mount_checkout_plugins",
    "requirements",
]

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


DISTRIBUTION: Final = "tool-loader"

FALLBACK: Final[Mapping[str, tuple[str, ...]]] = {
    "mcp": ("mcp>=2.1,<3",),
    "metrics": ("prometheus_client>=0.20",),
    "msgspec": ("msgspec>=0.18",),
    "otel": ("opentelemetry-api>=1.27",),
    "sandbox": ("landlockpy>=0.2", "pyseccomp>=0.1.2"),
    "strands": ("strands-agents>=1.35",),
    "langchain": ("langchain>=1.0", "langchain-core>=1.0", "langgraph>=1.0"),
    "openai-agents": ("openai-agents>=0.24",),
    "pydantic-ai": ("pydantic-ai-slim>=2.0",),
    "google-adk": ("google-adk>=2.0",),
    "llama-index": ("llama-index-core>=0.14",),
    "smolagents": ("smolagents>=1.26",),
    "authoring": ("hypothesis-jsonschema>=0.23.1,<0.24", "hypothesis>=6.135,<6.170.10"),
}
"""Each extra's requirements as ``pyproject.toml`` spells them, for when no metadata is installed."""

_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*(.*)$")


def _lower_bounds_first(requirement: str) -> str:
    """``mcp<3,>=2.1`` (as metadata stores it) as ``mcp>=2.1,<3`` (as people write it)."""
    found = _NAME.match(requirement)
    if found is None:
        return requirement.strip()
    name, rest = found.groups()
    specifiers = [part.strip() for part in rest.split(",") if part.strip()]
    specifiers.sort(key=lambda spec: 0 if spec.startswith((">", "~", "=")) else 1)
    return name + ",".join(specifiers)


def requirements(extra: str, distribution: str = DISTRIBUTION) -> tuple[str, ...]:
    """What ``extra`` installs: from the distribution's metadata, else ``FALLBACK`` (empty if unknown)."""
    import importlib.metadata  # here: every process imports this module, few ask (about 0.1 s of imports)

    try:
        declared = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        declared = []
    found: list[str] = []
    for line in declared:
        requirement, _, marker = line.partition(";")
        wanted = _EXTRA.search(marker)
        if wanted is not None and wanted.group(1) == extra:
            found.append(_lower_bounds_first(requirement))
    return tuple(found) or tuple(FALLBACK.get(extra, ()))


def missing_extra(module: str, needs: str, extra: str, exc: ImportError) -> ImportError:
    """The error for importing ``module`` without its optional ``extra``: what it needs, how to install it."""
    return ImportError(f"{module} needs {needs}: {install_command(extra)}", name=exc.name)


def install_command(extra: str, distribution: str = DISTRIBUTION) -> str:
    """``pip install 'mcp>=2.1,<3'``: a command that installs what ``extra`` needs, from any index."""
    return " ".join(["pip install", *(shlex.quote(r) for r in requirements(extra, distribution))])
