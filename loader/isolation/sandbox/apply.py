"""What a sandboxed worker does to itself before it imports anything of a tool's."""

from __future__ import annotations

import os

from ..messages import SandboxPolicy
from . import landlock, limits, syscalls

__all__ = ["SandboxFailed", "apply_policy"]


class SandboxFailed(RuntimeError):
    """A layer could not be applied in the worker and best effort was not asked for."""


def apply_policy(policy: SandboxPolicy) -> list[str]:
    """Apply every layer ``policy`` asks for; the names of the layers that are off.

    Order matters: the libraries are loaded first (they look for the C
    libraries on disk), the rlimits next, then seccomp (it blocks nothing
    Landlock needs), Landlock last.
    """
    best_effort = bool(policy.get("best_effort"))
    off: list[str] = []
    seccomp_ok, why = syscalls.available()
    abi, abi_why = landlock.abi_version()
    limits.set_limits(policy)
    os.environ["TMPDIR"] = str(policy["write"][0])
    if seccomp_ok:
        datagrams = bool(policy["connect"])
        syscalls.install(bool(policy["network"]), datagrams)
    else:
        off.append(f"syscalls ({why})")
    if abi:
        layers = landlock.restrict(policy, abi)
        off += [name for name, on in layers.items() if not on]
    else:
        off += [f"filesystem ({abi_why})", "network", "scopes"]
    if off and not best_effort:
        raise SandboxFailed("the sandbox could not be applied in the worker: " + ", ".join(off) + " off")
    return off
