"""The options that shape a ``ToolLoader``, and the ``LoaderConfig`` and plugins they make.

Folder filters (``--include``/``--exclude``), isolation (``--isolation``,
``--worker-env``, ``--max-memory-mb``, ``--max-processes``), the gate (``--gate``,
``--example-timeout``) and the call limits (``--call-timeout``, ``--max-result-bytes``,
``--max-concurrent-per-tool``) all end up here, in one config.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Literal

from ..authoring.quarantine import QuarantineFollower
from ..errors import OptionError
from ..hookspecs import hookimpl
from ..isolation import pid_namespace
from ..isolation.options import WorkerOptions
from ..isolation.sandbox import Layer, SandboxOptions, parse_endpoint, probe
from ..reload.loader import LoaderConfig
from .common import UsageError, positive_float
from .sandbox_report import checked_layers

__all__ = [
    "IMPORT_TIMEOUT_COMMANDS",
    "ISOLATION_COMMANDS",
    "SourceFilter",
    "add_gate_arguments",
    "add_import_timeout_argument",
    "add_isolation_arguments",
    "add_sandbox_arguments",
    "loader_config",
    "loader_plugins",
    "sandbox_layers",
]

ISOLATION_COMMANDS: Final = ("list", "watch", "call", "serve", "check", "search")
"""The commands that run tool code, and so can run it in worker processes."""
IMPORT_TIMEOUT_COMMANDS: Final = ("list", "watch", "call", "serve", "check", "inspect", "search")
"""The commands that import the tool files."""
_WORKER_MODES: Final = ("process", "sandbox")
_DEFAULT_CPU_SECONDS: Final = SandboxOptions().max_cpu_seconds
_DEFAULT_MAX_FILE_MB: Final = SandboxOptions().max_file_mb


def add_isolation_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the process-isolation and sandbox options to one command's parser."""
    group = parser.add_argument_group("process isolation")
    group.add_argument(
        "--isolation",
        choices=("thread", "process", "sandbox"),
        default="thread",
        help="run tool imports and calls in this process (thread, the default), in worker processes "
        "(process: a crashing or stuck tool harms only its worker), or in workers the kernel confines "
        "(sandbox: no files outside the tool folders, no network, no ptrace; see docs/sandbox.md)",
    )
    group.add_argument(
        "--worker-env",
        action="append",
        default=[],
        metavar="NAME",
        help="with --isolation process: an environment variable (or pattern such as MYAPP_*) workers "
        "inherit besides PATH, HOME, LANG, LC_*, TMPDIR...; repeat or separate with commas",
    )
    group.add_argument(
        "--max-memory-mb",
        type=int,
        default=None,
        metavar="N",
        help="with --isolation process: limit the memory each worker writes to N MB "
        f"(default: {WorkerOptions().max_memory_mb}; 0: no limit)",
    )
    group.add_argument(
        "--max-processes",
        type=int,
        default=None,
        metavar="N",
        help="with --isolation process: stop a worker, with everything it started, once its tools "
        f"run more than N processes (default: {WorkerOptions().max_processes}; 0: no limit)",
    )
    add_sandbox_arguments(parser)


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``--isolation sandbox``: what a confined tool may reach besides the defaults."""
    group = parser.add_argument_group("sandbox (with --isolation sandbox)")
    for flag, what in (("read", "read"), ("write", "read and write")):
        group.add_argument(
            f"--sandbox-allow-{flag}",
            action="append",
            default=[],
            metavar="PATH",
            help=f"let tools {what} PATH (a file or folder) besides the defaults; repeatable",
        )
    group.add_argument(
        "--sandbox-allow-connect",
        action="append",
        default=[],
        metavar="HOST:PORT",
        help="let tools connect over TCP to HOST:PORT (the kernel enforces the port, not the host); "
        "repeatable",
    )
    group.add_argument(
        "--sandbox-allow-network",
        action="store_true",
        help="leave the network open to tools (TCP, UDP, unix sockets)",
    )
    group.add_argument(
        "--sandbox-best-effort",
        action="store_true",
        help="start even where the kernel cannot enforce a layer of the sandbox, with a warning naming "
        "the layers that are off (default: refuse to start)",
    )
    group.add_argument(
        "--sandbox-cpu-seconds",
        type=float,
        default=None,
        metavar="N",
        help=f"CPU seconds one call may use; a call past it loses its worker and gets an error result "
        f"(default: {_DEFAULT_CPU_SECONDS:g}; 0: no limit)",
    )
    group.add_argument(
        "--sandbox-max-file-mb",
        type=int,
        default=None,
        metavar="N",
        help=f"the largest file a tool may write, in MB; a larger write fails with EFBIG "
        f"(default: {_DEFAULT_MAX_FILE_MB}; 0: no limit)",
    )


_LIMIT_FLAGS: Final = {
    "max_memory_mb": "--max-memory-mb must be a whole number",
    "max_processes": "--max-processes must be a whole number",
    "max_cpu_seconds": "--sandbox-cpu-seconds must be a number",
    "max_file_mb": "--sandbox-max-file-mb must be a whole number",
}


def _no_limit_at_0(value: float | None) -> float | None:
    """The command's "0: no limit" as the options say it (None); a negative or nan stays, to be refused."""
    return None if value == 0 else value


def _sandbox(args: argparse.Namespace) -> SandboxOptions:
    """The ``SandboxOptions`` of the ``--sandbox-*`` options (the files they name must exist)."""
    reads = tuple(getattr(args, "sandbox_allow_read", []) or ())
    writes = tuple(getattr(args, "sandbox_allow_write", []) or ())
    for flag, paths in (("--sandbox-allow-read", reads), ("--sandbox-allow-write", writes)):
        for path in paths:
            if not Path(path).expanduser().exists():
                raise UsageError(f"{flag} {path}: no such file or folder")
    endpoints = []
    for text in getattr(args, "sandbox_allow_connect", []) or ():
        try:
            endpoints.append(parse_endpoint(text))
        except ValueError:
            raise UsageError(
                f"--sandbox-allow-connect {text}: expected HOST:PORT with a port 1-65535"
            ) from None
    limits: dict[str, Any] = {}
    cpu, file_mb = getattr(args, "sandbox_cpu_seconds", None), getattr(args, "sandbox_max_file_mb", None)
    if cpu is not None:
        limits["max_cpu_seconds"] = _no_limit_at_0(cpu)
    if file_mb is not None:
        limits["max_file_mb"] = _no_limit_at_0(file_mb)
    return SandboxOptions(
        allow_read=tuple(Path(p) for p in reads),
        allow_write=tuple(Path(p) for p in writes),
        allow_connect=tuple(endpoints),
        allow_network=bool(getattr(args, "sandbox_allow_network", False)),
        best_effort=bool(getattr(args, "sandbox_best_effort", False)),
        **limits,
    )


def _workers(args: argparse.Namespace) -> WorkerOptions:
    """The ``WorkerOptions`` of ``--worker-env``, ``--max-memory-mb`` and ``--max-processes``."""
    names = tuple(
        name.strip() for item in getattr(args, "worker_env", []) for name in item.split(",") if name.strip()
    )
    limits = {
        name: getattr(args, name)
        for name in ("max_memory_mb", "max_processes")
        if getattr(args, name, None) is not None
    }
    return WorkerOptions(worker_env=names, **limits)


def _given(args: argparse.Namespace, *names: str) -> bool:
    values = [getattr(args, name, None) for name in names]
    return any(value is not None and value is not False and value != [] for value in values)


def _isolation_config(args: argparse.Namespace, config: LoaderConfig) -> LoaderConfig:
    """``config`` with the isolation options of ``args``; each is a usage error outside its mode.

    The options objects check the values; their ``OptionError`` becomes a usage error naming the flag.
    """
    isolation = getattr(args, "isolation", "thread")
    if isolation not in _WORKER_MODES and _given(args, "worker_env", "max_memory_mb", "max_processes"):
        raise UsageError(
            "--worker-env, --max-memory-mb and --max-processes apply to worker processes; "
            "add --isolation process (or sandbox)"
        )
    if isolation != "sandbox" and _given(args, *_SANDBOX_OPTIONS):
        raise UsageError("the --sandbox-* options apply to --isolation sandbox")
    if isolation == "thread":
        return config
    try:
        workers = _workers(args)
        sandbox = _sandbox(args) if isolation == "sandbox" else None
    except OptionError as exc:
        flag = _LIMIT_FLAGS.get(exc.option, f"{exc.option} must be")
        raise UsageError(f"{flag} >= 0 (0: no limit), not {exc.value}") from None
    mode: Literal["process", "sandbox"] = "sandbox" if isolation == "sandbox" else "process"
    return replace(config, isolation=mode, workers=workers, sandbox=sandbox)


_SANDBOX_OPTIONS: Final = (
    "sandbox_allow_read",
    "sandbox_allow_write",
    "sandbox_allow_connect",
    "sandbox_allow_network",
    "sandbox_best_effort",
    "sandbox_cpu_seconds",
    "sandbox_max_file_mb",
)


_DEFAULT_TIMEOUT = LoaderConfig().example_timeout


def add_import_timeout_argument(parser: argparse.ArgumentParser) -> None:
    """``--import-timeout SECONDS``: how long one file's import may take before it counts as stuck."""
    parser.add_argument(
        "--import-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="how long one tool file's import may run before it is reported stuck and the rest go on "
        f"(default {LoaderConfig().import_timeout:g})",
    )


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """``--gate`` and ``--example-timeout SECONDS``."""
    parser.add_argument(
        "--gate",
        action="store_true",
        help="run each changed file's tool examples first; if one fails, keep serving the last good version",
    )
    parser.add_argument(
        "--example-timeout",
        type=float,
        default=_DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long each example may take under --gate (default {_DEFAULT_TIMEOUT:g})",
    )


def _gate_config(args: argparse.Namespace, config: LoaderConfig) -> LoaderConfig:
    """``config`` with the gate on when ``--gate`` was given."""
    if not getattr(args, "gate", False):
        return config
    return replace(config, gate=True, example_timeout=args.example_timeout)


class SourceFilter:
    """A discovery plugin applying ``--include``/``--exclude`` through ``tool_loader_is_tool_source``.

    It only ever says no (or nothing), so the built-in rule still decides for
    the files it lets through. A pattern with a ``/`` matches the path below
    the watched folder; one without matches the file name.
    """

    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.include = tuple(include)
        self.exclude = tuple(exclude)

    @staticmethod
    def _matches(path: Path, root: Path, patterns: Sequence[str]) -> bool:
        try:
            relative = path.relative_to(root).as_posix()
        except ValueError:
            relative = path.name
        return any(fnmatch.fnmatch(relative if "/" in p else path.name, p) for p in patterns)

    @hookimpl
    def tool_loader_is_tool_source(self, path: Path, root: Path) -> bool | None:
        """False for files the patterns leave out; None lets the other rules decide."""
        if self.exclude and self._matches(path, root, self.exclude):
            return False
        if self.include and not self._matches(path, root, self.include):
            return False
        return None


def loader_config(args: argparse.Namespace) -> LoaderConfig:
    """The ``LoaderConfig`` every option of the command asks for, built in one place.

    ``--recursive``; ``--isolation``, ``--worker-env``, ``--max-memory-mb``; ``--gate`` and
    ``--example-timeout``; ``--call-timeout``, ``--max-result-bytes``, ``--max-concurrent-per-tool``.
    """
    config = _isolation_config(args, LoaderConfig(recursive=bool(getattr(args, "recursive", True))))
    sandbox = config.sandbox_options()
    if sandbox is not None:  # fail closed here, with the console's words, before any worker starts
        checked_layers(sandbox)
    config = _gate_config(args, config)
    if getattr(args, "import_timeout", None) is not None:
        config = replace(config, import_timeout=args.import_timeout)
    if hasattr(args, "call_timeout"):
        config = replace(config, call_timeout=args.call_timeout)
    if hasattr(args, "max_result_bytes"):
        config = replace(config, max_result_bytes=args.max_result_bytes)
    if hasattr(args, "max_concurrent_per_tool"):
        config = replace(config, max_concurrent_calls_per_tool=args.max_concurrent_per_tool)
    return config


def sandbox_layers(args: argparse.Namespace) -> tuple[Layer, ...]:
    """What ``--isolation sandbox`` with these options would get on this machine, layer by layer; the last,
    ``processes``, tried here (the sandbox starts without it, saying so, where the kernel refuses it)."""
    layers = probe(_isolation_config(args, LoaderConfig()).sandbox_options() or SandboxOptions())
    on, detail = pid_namespace.available()
    if not on:
        detail = f"no PID namespace per worker ({detail}): workers see which pids exist; not refused"
    return (*layers, Layer("processes", on, detail))


def loader_plugins(args: argparse.Namespace) -> list[object]:
    """Extra plugins the command's options ask for (``--include``/``--exclude``), and the quarantine's."""
    include = getattr(args, "include", None) or []
    exclude = getattr(args, "exclude", None) or []
    quarantine: list[object] = [QuarantineFollower()]
    return [SourceFilter(include, exclude), *quarantine] if include or exclude else quarantine
