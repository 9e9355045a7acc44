"""What a sandboxed worker does to itself before it imports anything of a tool's."""

from __future__ import annotations

import os

from ..messages import SandboxPolicy
from . import landlock, limits, syscalls

__all__ = ["SandboxFailed", "apply_policy", "restrict_files"]


class SandboxFailed(RuntimeError):
    """A layer could not be applied in the worker and best effort was not asked for."""


def apply_policy(policy: SandboxPolicy, *, files: bool = True) -> list[str]:
    """Apply every layer ``policy`` asks for; the names of the layers that are off.

    Order matters: the libraries are loaded first (they look for the C
    libraries on disk), the rlimits next, then seccomp (it blocks nothing
    Landlock needs), Landlock last. ``files=False`` checks that Landlock is
    there but leaves it to ``restrict_files``, in the process that runs tool
    code: its rules name that process's own ``/proc/<pid>``, so a worker whose
    imports each run in a fork of it lets each fork restrict itself.
    """
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
        if files:
            off += _landlock(policy, abi)
    else:
        off += [f"filesystem ({abi_why})", "network", "scopes"]
    _fail_closed(policy, off)
    return off


def restrict_files(policy: SandboxPolicy) -> None:
    """Landlock, in a process whose worker applied the rest (``apply_policy(files=False)``)."""
    abi, why = landlock.abi_version()
    _fail_closed(policy, _landlock(policy, abi) if abi else [f"filesystem ({why})", "network", "scopes"])


def _landlock(policy: SandboxPolicy, abi: int) -> list[str]:
    return [name for name, on in landlock.restrict(policy, abi).items() if not on]


def _fail_closed(policy: SandboxPolicy, off: list[str]) -> None:
    if off and not policy.get("best_effort"):
        raise SandboxFailed("the sandbox could not be applied in the worker: " + ", ".join(off) + " off")
