"""The filesystem, network and scope layers, applied by a worker to itself with Landlock.

Through ``landlockpy`` (a dependency-free, typed ctypes binding that tracks
every Landlock ABI): what the running kernel's ABI cannot enforce is reported
as missing rather than silently dropped, so the caller can refuse to start.
Landlock needs no privilege, works inside a default Docker or Kubernetes
container, and is inherited by every process the worker starts.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any, Final

from ...distribution import install_command
from ..messages import SandboxPolicy

__all__ = ["NEEDED_ABI", "abi_version", "restrict"]

NEEDED_ABI: Final = {"filesystem": 1, "network": 4, "scopes": 6}
"""The oldest Landlock ABI that enforces each layer: paths (1), TCP bind and connect (4),
signals and abstract unix sockets (6)."""


def abi_version() -> tuple[int, str]:
    """The kernel's Landlock ABI (0 when it has none) and, for 0, why."""
    try:
        import landlockpy
    except ImportError as exc:
        return 0, f"the landlockpy package is not installed ({exc}): {install_command('sandbox')}"
    try:
        version = landlockpy.abi_version()
    except OSError as exc:
        return 0, f"landlock_create_ruleset failed: {exc}"
    if version == 0:
        return 0, (
            "the kernel has no Landlock (landlock_create_ruleset: not implemented or disabled; "
            "Linux 5.13+ with landlock in the lsm= boot parameter)"
        )
    return version, ""


def _rules(ruleset: Any, paths: Iterable[str], directory: int, file: int) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):  # gone since the loader looked
            ruleset.allow_path(path, directory if os.path.isdir(path) else file)


def restrict(policy: SandboxPolicy, abi: int) -> dict[str, bool]:
    """Confine this process (and what it starts) to ``policy``; which layers are now on.

    Called on the worker's main thread before any tool code runs. Before ABI 8
    a ruleset binds only the calling thread and the threads and processes it
    starts later, so a thread started earlier (by a ``.pth`` file at interpreter
    start) would stay free of it; from ABI 8 (``TSYNC``) every thread is bound.
    """
    from landlockpy import AccessFS, AccessNet, RestrictFlag, Ruleset, Scope, fs_for_abi, scope_for_abi

    handled = fs_for_abi(abi)
    file_rights = AccessFS.EXECUTE | AccessFS.WRITE_FILE | AccessFS.READ_FILE | AccessFS.TRUNCATE
    file_rights |= AccessFS.IOCTL_DEV
    read_dir = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    read_file = AccessFS.READ_FILE | AccessFS.EXECUTE
    network = abi >= NEEDED_ABI["network"] and not policy["network"]
    handled_net = AccessNet.BIND_TCP | AccessNet.CONNECT_TCP if network else AccessNet.NONE
    scoped = (Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL) & scope_for_abi(abi)
    with Ruleset(handled_fs=handled, handled_net=handled_net, scoped=scoped) as ruleset:
        _rules(ruleset, policy.get("list", ()), AccessFS.READ_DIR, AccessFS.NONE)
        _rules(ruleset, policy["read"], read_dir, read_file)
        _rules(ruleset, policy["write"], handled, file_rights & handled)
        _rules(ruleset, policy["devices"], AccessFS.NONE, file_rights & ~AccessFS.EXECUTE & handled)
        _rules(ruleset, [f"/proc/{os.getpid()}"], AccessFS.READ_FILE | AccessFS.READ_DIR, AccessFS.NONE)
        for port in policy["connect"] if network else ():
            ruleset.allow_port(int(port), AccessNet.CONNECT_TCP)
        ruleset.restrict(RestrictFlag.TSYNC)  # all threads from ABI 8; dropped before (see the docstring)
    return {
        "filesystem": True,
        "network": network or bool(policy["network"]),
        "scopes": bool(scoped),
    }
