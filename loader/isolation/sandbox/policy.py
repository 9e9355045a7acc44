"""Which paths and ports a sandboxed worker gets: computed in the loader's process, applied in the worker.

The loader knows the watched folders, its own ``sys.path`` (the standard
library, site-packages of a venv, the user site when enabled, editable
installs) and the options; the worker only applies the plain lists it is sent
(``landlock.restrict``), before it imports anything of a tool's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from .options import SandboxOptions

__all__ = ["SYSTEM_READ", "SandboxPathError", "worker_policy"]

SYSTEM_READ: Final[tuple[str, ...]] = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/mime.types",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/sys/devices/system/cpu",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
    "/dev/full",
)
"""What Python and ordinary libraries read besides the interpreter: system libraries and programs
(``/usr``, which holds the timezone data and Debian's CA bundle), the TLS and name-service files,
the CPU count, and the random devices. No user's files and no secrets: ``/etc/shadow``, ``/root``
and ``/home`` are not on it."""

_READ_WRITE_DEVICES: Final = ("/dev/null",)


class SandboxPathError(ValueError):
    """An extra sandbox path that does not exist (named, with the option it came from)."""


def _python_paths() -> list[str]:
    """The interpreter's prefixes and every absolute ``sys.path`` folder (relative ones, such as
    ``''``, point at the working directory, which a tool gets no access to)."""
    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    found += [entry for entry in sys.path if os.path.isabs(entry)]
    found.append(str(Path(__file__).resolve().parents[3]))  # holds ``loader``: editable installs
    found.append(os.path.dirname(os.path.realpath(sys.executable)))
    return found


def _existing(paths: Sequence[str | Path]) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        if os.path.exists(path):
            seen[str(path)] = None
    return list(seen)


def _checked(paths: Sequence[Path], option: str) -> list[str]:
    for path in paths:
        if not path.exists():
            raise SandboxPathError(f"{option}: {path} does not exist")
    return [str(p.resolve()) for p in paths]


def worker_policy(roots: Sequence[Path], options: SandboxOptions, scratch: Path) -> dict[str, Any]:
    """The plain lists a worker applies (JSON, so it crosses to the worker in its settings)."""
    read = _existing([*(str(r) for r in roots), *_python_paths(), *SYSTEM_READ])
    read += _checked(options.allow_read, "sandbox_allow_read (--sandbox-allow-read)")
    write = [str(scratch), *_checked(options.allow_write, "sandbox_allow_write (--sandbox-allow-write)")]
    return {
        "read": read,
        "write": write,
        "devices": _existing(_READ_WRITE_DEVICES),
        "connect": sorted({e.port for e in options.allow_connect}),
        "network": options.allow_network,
        "best_effort": options.best_effort,
        "max_file_mb": options.max_file_mb,
        "max_open_files": options.max_open_files,
        "max_cpu_seconds": options.max_cpu_seconds,
    }
