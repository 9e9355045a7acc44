"""The resource layer: what one worker may use, as rlimits the worker sets on itself.

Memory (``RLIMIT_DATA``) and the process count (the loader's process watch)
come from process isolation; the sandbox adds file size, open files, no core
dumps, and CPU time per call. ``RLIMIT_NPROC`` is not used: it counts every
process of the user and the kernel never applies it to root.
"""

from __future__ import annotations

import resource
import signal

from ..messages import SandboxPolicy

__all__ = ["CallCpuLimit", "set_limits"]


def _lower(kind: int, value: int) -> None:
    """Set a limit no higher than the current hard one (an unprivileged process cannot raise it)."""
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value))


def set_limits(policy: SandboxPolicy) -> None:
    """File size, open files and core dumps, from the worker's policy."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), nothing dies
    if max_file_mb := policy["max_file_mb"]:
        _lower(resource.RLIMIT_FSIZE, max_file_mb * 1024 * 1024)
    if max_open_files := policy["max_open_files"]:
        _lower(resource.RLIMIT_NOFILE, max_open_files)
    _lower(resource.RLIMIT_CORE, 0)


class CallCpuLimit:
    """``RLIMIT_CPU`` moved before each call to what the worker has used plus one call's allowance.

    The limit counts the process's whole life, so it is raised call by call;
    a call past its allowance gets ``SIGXCPU`` and its worker dies, which the
    loader answers with an error result naming the signal.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._soft = -1

    def before_call(self) -> None:
        if self.seconds is None:
            return
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(usage.ru_utime + usage.ru_stime + self.seconds) + 1
        if soft == self._soft:  # a call's allowance is whole seconds: most calls leave it where it was
            return
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard != resource.RLIM_INFINITY and soft > hard:
            return
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        self._soft = soft
