"""How the console speaks of the sandbox: the layer table of ``check``, the refusal, the warning."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..isolation.sandbox import Layer, SandboxOptions, SandboxUnavailable, probe
from .common import UsageError, stderr_console

__all__ = ["checked_layers", "layer_records", "layer_table", "wants_sandbox"]


def wants_sandbox(args: argparse.Namespace) -> bool:
    return getattr(args, "isolation", "thread") == "sandbox"


def _state(layer: Layer) -> str:
    if layer.on:
        return "on"
    return "off (allowed)" if not layer.wanted else "OFF"


def layer_table(layers: tuple[Layer, ...]) -> Table:
    """One row per layer: on or off, and what enforces it or why it is missing."""
    table = Table(title="sandbox: what this machine enforces", title_justify="left")
    table.add_column("layer")
    table.add_column("state")
    table.add_column("enforced by / why not", overflow="fold")
    for layer in layers:
        style = "green" if layer.on else ("yellow" if not layer.wanted else "bold red")
        table.add_row(layer.name, f"[{style}]{_state(layer)}[/]", layer.detail)
    return table


def layer_records(layers: tuple[Layer, ...]) -> list[dict[str, Any]]:
    return [{"layer": x.name, "on": x.on, "wanted": x.wanted, "detail": x.detail} for x in layers]


def checked_layers(options: SandboxOptions) -> tuple[Layer, ...]:
    """The layers ``options`` ask for, as this machine enforces them; refuses (a usage error naming the
    missing layers) unless best effort was asked for, and then warns loudly on stderr."""
    layers = probe(options)
    missing = [layer for layer in layers if layer.wanted and not layer.on]
    if missing and not options.best_effort:
        raise UsageError(str(SandboxUnavailable(tuple(missing))))
    if missing:
        names = ", ".join(f"{layer.name} ({layer.detail})" for layer in missing)
        stderr_console().print(
            f"[bold red]WARNING: the sandbox is weakened (--sandbox-best-effort): these layers are OFF: "
            f"{names}[/]",
            highlight=False,
        )
    return layers
