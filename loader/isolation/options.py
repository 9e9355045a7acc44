"""How worker processes are started and bounded: one small frozen object."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..errors import OptionError

__all__ = ["DEFAULT_WORKER_ENV", "WorkerOptions", "worker_environment"]

DEFAULT_WORKER_ENV: Final[tuple[str, ...]] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "VIRTUAL_ENV",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONWARNINGS",
)
"""What a worker inherits by default: what Python and ordinary libraries need to run.

Nothing that usually holds a secret (``AWS_*``, ``*_TOKEN``, ``*_API_KEY``,
``DATABASE_URL``, ...) is on it; a tool that needs such a variable gets it
through ``worker_env`` (``--worker-env NAME``). ``PYTHONPATH`` is not needed:
the worker is given the loader's ``sys.path`` directly.
"""


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """Settings of the worker processes behind ``isolation="process"``.

    Attributes:
        worker_env: Extra environment variable names (or ``fnmatch`` patterns such
            as ``MYAPP_*``) passed to workers, on top of ``DEFAULT_WORKER_ENV``.
        max_memory_mb: Each worker's data limit in MB (``RLIMIT_DATA`` on Linux: the
            heap and private writable mappings; ``RLIMIT_AS`` elsewhere); None or 0 for
            none. Not the address space: libraries such as numpy, pydantic-core or a
            JIT reserve large areas they never write, which ``RLIMIT_AS`` would count.
            An allocation past it raises ``MemoryError`` in the tool, an error result.
        max_processes: Most live processes below each worker (what its tools start,
            in any session); a worker past it is stopped with all of them
            (``loader.isolation.tree``). None or 0 for no limit.
        max_result_bytes: The largest result a worker sends (``loader.results.result_size``);
            a larger one is replaced by an error result in the worker, and the loader
            never reads a call message longer than twice that (``protocol.wire_limit``).
        max_concurrent_per_tool: Calls of one tool running at once (in as many workers);
            its further calls wait in line within their call timeout, as in-process.
        call_workers: Most processes running calls at once; each runs one call at
            a time, so a call that crashes or hangs harms only its own.
        spare_workers: Started processes kept idle, so neither a save nor a call
            waits for an interpreter to start.
        call_timeout: Seconds before a call's worker is killed and the call
            answered with an error result (0 disables).
        start_timeout: Seconds a new worker has to report that it is ready.
        command_prefix: A wrapper the worker's ``python`` command is run under, such as
            ``("bwrap", "--ro-bind", "/", "/", ..., "--")``: where a sandbox goes.

    In a ``LoaderConfig`` (its ``workers``), ``max_result_bytes``, ``max_concurrent_per_tool``
    and ``call_timeout`` come from the loader's own call limits, which apply in every mode.
    """

    worker_env: tuple[str, ...] = ()
    max_memory_mb: int | None = 2048
    max_processes: int | None = 256
    max_result_bytes: int | None = None
    max_concurrent_per_tool: int = 8
    call_workers: int = 8
    spare_workers: int = 1
    call_timeout: float = 60.0
    start_timeout: float = 30.0
    command_prefix: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Check every setting once, here; 0 means no limit for the two per-worker limits.

        Raises:
            OptionError: Naming the setting and the value.
        """
        if self.call_workers < 1:
            raise OptionError("call_workers", self.call_workers, "at least 1")
        if self.spare_workers < 0:
            raise OptionError("spare_workers", self.spare_workers, "0 or more")
        for name in ("max_memory_mb", "max_processes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise OptionError(name, value, "a whole number >= 0 (0: no limit)")
            if value == 0:
                object.__setattr__(self, name, None)


def worker_environment(allow: tuple[str, ...], source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``source`` (default ``os.environ``) named by the default list or ``allow``."""
    environ = os.environ if source is None else source
    patterns = (*DEFAULT_WORKER_ENV, *allow)
    return {
        name: value
        for name, value in environ.items()
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
