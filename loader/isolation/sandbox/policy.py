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
from typing import Final

from ..messages import SandboxPolicy
from ..process import LOADER_HOME, worker_sys_path
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


def _prefixes() -> list[str]:
    """The interpreter's own folders: the standard library, a venv's site-packages, readable whole."""
    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    found.append(os.path.dirname(os.path.realpath(sys.executable)))
    return found


def _is_library(entry: str, prefixes: list[str]) -> bool:
    """A ``sys.path`` folder holding installed code only (inside a prefix, or a site-packages)."""
    name = os.path.basename(entry.rstrip("/"))
    inside = any(entry == p or entry.startswith(p.rstrip("/") + "/") for p in prefixes)
    return inside or name in ("site-packages", "dist-packages")


_CODE_SUFFIXES: Final = (".py", ".pyc", ".so", ".pth", ".dist-info", ".egg-info", ".egg-link")


def _importable(folder: str) -> list[str]:
    """What can be imported from a folder that holds other things too: its packages and modules."""
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        try:
            package = entry.is_dir() and os.path.exists(os.path.join(entry.path, "__init__.py"))
        except OSError:  # a link this user may not follow
            continue
        if package or entry.name.endswith(_CODE_SUFFIXES):
            found.append(entry.path)
    return found


def _python_paths() -> tuple[list[str], list[str]]:
    """(folders readable whole, folders that may only be listed) for Python's imports.

    A ``sys.path`` folder outside the interpreter's prefixes (``PYTHONPATH``, an
    editable install's source) may hold anything, a home folder's secrets included:
    its names stay listable (the import system lists it) but only its packages and
    modules are readable. The working folder is not on a worker's path at all
    (``worker_sys_path``).
    """
    prefixes = _prefixes()
    whole = list(prefixes)
    listed = []
    for entry in worker_sys_path():
        if _is_library(entry, prefixes):
            whole.append(entry)
        elif entry == LOADER_HOME:  # a source checkout: the loader's own packages, not its neighbours
            listed.append(entry)
            whole += [os.path.join(entry, name) for name in ("loader", "plugins")]
        elif os.path.isdir(entry):
            listed.append(entry)
            whole += _importable(entry)
    return whole, listed


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


def worker_policy(roots: Sequence[Path], options: SandboxOptions, scratch: Path) -> SandboxPolicy:
    """The plain lists a worker applies (JSON, so it crosses to the worker in its settings)."""
    whole, listed = _python_paths()
    read = _existing([*(str(r) for r in roots), *whole, *SYSTEM_READ])
    read += _checked(options.allow_read, "allow_read (--sandbox-allow-read)")
    write = [str(scratch), *_checked(options.allow_write, "allow_write (--sandbox-allow-write)")]
    return {
        "read": read,
        "write": write,
        "list": _existing(listed),
        "devices": _existing(_READ_WRITE_DEVICES),
        "connect": sorted({e.port for e in options.allow_connect}),
        "network": options.allow_network,
        "best_effort": options.best_effort,
        "max_file_mb": options.max_file_mb,
        "max_open_files": options.max_open_files,
        "max_cpu_seconds": options.max_cpu_seconds,
    }
