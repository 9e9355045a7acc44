"""Sandbox isolation (``ToolLoader(paths, isolation="sandbox")``): process isolation plus kernel confinement.

Each worker confines itself before any tool code runs: Landlock for paths,
TCP ports, signals and abstract unix sockets (``landlock``), seccomp for the
system calls an escape needs (``syscalls``), rlimits for what it may use
(``limits``). The loader's process works out the paths (``policy``) and
refuses to start where the kernel cannot enforce a layer (``probe``).
"""

from __future__ import annotations

from .options import Endpoint, SandboxOptions, parse_endpoint
from .policy import SandboxPathError
from .probe import LAYERS, Layer, SandboxUnavailable, check_layers, probe

__all__ = [
    "LAYERS",
    "Endpoint",
    "Layer",
    "SandboxOptions",
    "SandboxPathError",
    "SandboxUnavailable",
    "check_layers",
    "parse_endpoint",
    "probe",
]
