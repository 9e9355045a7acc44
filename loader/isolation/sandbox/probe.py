"""What this machine can enforce, layer by layer, and the refusal to start without it (fail closed)."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Final

from ..errors import WorkerStartError
from . import landlock, syscalls
from .options import SandboxOptions

__all__ = ["LAYERS", "Layer", "SandboxUnavailable", "check_layers", "probe"]

logger = logging.getLogger(__name__)

LAYERS: Final = ("filesystem", "network", "scopes", "syscalls", "limits")
"""The sandbox's layers, in the order reports list them."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer of the sandbox on this machine: whether it is enforced, and what enforces it or why not."""

    name: str
    on: bool
    detail: str
    wanted: bool = True
    """False for a layer the options turned off (``allow_network``): off by choice, not missing."""


class SandboxUnavailable(WorkerStartError):
    """``isolation="sandbox"`` refused to start: the machine cannot enforce ``missing`` layers."""

    def __init__(self, missing: tuple[Layer, ...]) -> None:
        names = "; ".join(f"{layer.name}: {layer.detail}" for layer in missing)
        super().__init__(
            f"isolation='sandbox' cannot start: this machine does not enforce {names}. "
            "Run on Linux 6.7+ (Landlock ABI 6) with libseccomp, or pass --sandbox-best-effort "
            "(SandboxOptions(best_effort=True)) to run with the layers that are there"
        )
        self.missing = missing


_SYSCALLS: Final = (
    "seccomp filter through libseccomp: no ptrace, mounts, namespaces, SysV IPC or terminal input; "
    "limits and priority of the worker only"
)


def probe(options: SandboxOptions | None = None) -> tuple[Layer, ...]:
    """Each layer of the sandbox, as this process (and so its workers) can enforce it."""
    options = options or SandboxOptions()
    if not sys.platform.startswith("linux"):
        return tuple(Layer(name, False, "Linux only") for name in LAYERS)
    abi, why = landlock.abi_version()
    seccomp_ok, seccomp_why = syscalls.available()

    def by_abi(name: str, what: str) -> Layer:
        need = landlock.NEEDED_ABI[name]
        if abi >= need:
            return Layer(name, True, f"Landlock ABI {abi}: {what}")
        if abi == 0:
            return Layer(name, False, why if name == "filesystem" else "needs Landlock (see filesystem)")
        return Layer(name, False, f"Landlock ABI {abi} is older than {need}, which {what}")

    network = by_abi("network", "enforces TCP bind and connect")
    if options.allow_network:
        network = Layer("network", False, "allowed by SandboxOptions.allow_network", wanted=False)
    return (
        by_abi("filesystem", "enforces paths"),
        network,
        by_abi("scopes", "scopes signals and abstract unix sockets"),
        Layer("syscalls", seccomp_ok, seccomp_why or _SYSCALLS),
        Layer(
            "limits",
            True,
            "rlimits: file size, open files, CPU per call, memory; a call's processes end with it",
        ),
    )


def check_layers(options: SandboxOptions) -> tuple[Layer, ...]:
    """``probe``, refusing (``SandboxUnavailable``) when a wanted layer is off and best effort is not on."""
    layers = probe(options)
    missing = tuple(layer for layer in layers if layer.wanted and not layer.on)
    if missing and not options.best_effort:
        raise SandboxUnavailable(missing)
    if missing:
        logger.warning(
            "layers=<%s> | SANDBOX WEAKENED: running with --sandbox-best-effort; these layers are OFF",
            ", ".join(f"{layer.name} ({layer.detail})" for layer in missing),
        )
    return layers
