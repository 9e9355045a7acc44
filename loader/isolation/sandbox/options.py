"""What a sandboxed worker may reach beyond the defaults: one small frozen object."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import OptionError

__all__ = ["Endpoint", "SandboxOptions", "parse_endpoint"]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A ``HOST:PORT`` a tool may connect to. Landlock enforces the port only (see ``docs/sandbox.md``)."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint:
    """``HOST:PORT`` (``[::1]:443`` for an IPv6 host); ``ValueError`` naming the text otherwise."""
    host, sep, port_text = text.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT with a port from 1 to 65535")
    return Endpoint(host, int(port_text))


@dataclass(frozen=True, slots=True)
class SandboxOptions:
    """How ``isolation="sandbox"`` confines each worker, on top of process isolation.

    Attributes:
        allow_read: Extra files or folders a tool may read (and execute).
        allow_write: Extra files or folders a tool may read and write.
        allow_connect: TCP endpoints a tool may connect to; the port is enforced,
            the host is not (Landlock rules name ports only).
        allow_network: Leave the network alone (TCP, UDP, unix sockets): for tools that need it.
        best_effort: Start even where the kernel cannot enforce a layer, with a
            loud warning naming the layers that are off; otherwise refuse to start.
        max_file_mb: The largest file a tool may write, in MB (``RLIMIT_FSIZE``; None: none).
        max_open_files: Open files per worker process (``RLIMIT_NOFILE``; None: inherited).
        max_cpu_seconds: CPU seconds one call may use (``RLIMIT_CPU`` set afresh before each
            call; a call past it loses its worker, an error result). None: none.
    """

    allow_read: tuple[Path, ...] = ()
    allow_write: tuple[Path, ...] = ()
    allow_connect: tuple[Endpoint, ...] = ()
    allow_network: bool = False
    best_effort: bool = False
    max_file_mb: int | None = 1024
    max_open_files: int | None = 1024
    max_cpu_seconds: float | None = 60.0

    def __post_init__(self) -> None:
        """Check every setting once, here; ``~`` in a path is expanded.

        Raises:
            OptionError: Naming the setting and the value.
        """
        for name in ("allow_read", "allow_write"):
            object.__setattr__(self, name, tuple(Path(p).expanduser() for p in getattr(self, name)))
        for name in ("max_file_mb", "max_open_files"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise OptionError(name, value, "a whole number >= 1 or None")
        cpu = self.max_cpu_seconds
        if cpu is not None and not cpu > 0:  # not > also refuses nan
            raise OptionError("max_cpu_seconds", cpu, "above 0 or None")
