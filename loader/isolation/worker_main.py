"""The entry point of a worker process: imports tool files and runs calls for the loader.

Started by ``loader.isolation.process`` as ``python -I -c BOOT SYS_PATH SETTINGS``;
stdin and stdout carry the protocol (``loader.isolation.protocol``) and are
moved out of the tool code's way at once: ``print`` in a tool goes to stderr.

A worker plays one role at a time. The import worker runs each import in a
fork of itself that ends once it has answered (``import_fork``), so no tool
file's code ever runs in it; there a ``ToolImporter`` imports the file exactly
as the in-process loader does (sibling imports, helpers, the dependency graph)
and answers with descriptions of the tools it discovered.
A call worker rebuilds the modules a tool needs from the exact bytes the
import worker ran (a "recipe"), discovers the tool and runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import sys
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from ..calls.tracing import remote_context
from ..importing.discovery import configure_plugins, discover_components, discover_tools, make_plugin_manager
from ..importing.importer import ToolImporter
from ..results import error_result, exception_result, is_tool_result_like, oversized_result, result_size
from ..status import error_info_from_exception
from ..tools.description import description_of
from ..types import AgentTool, Component, ToolResult, ToolUse
from .components import ComponentCall, describe_component
from .context_relay import install_pipe_handlers
from .description_wire import description_to_wire
from .host import drop_ptrace
from .import_fork import die_with_parent, forward_stack_requests, import_in_fork
from .messages import (
    Ack,
    BeginRequest,
    CallReply,
    CallRequest,
    CleanupRequest,
    ForgetRequest,
    Hello,
    LoadError,
    LoadReply,
    LoadRequest,
    PingRequest,
    PrepareRequest,
    SandboxPolicy,
    WorkerSettings,
)
from .protocol import Channel, ChannelClosed, MessageTooLarge, encode_value, wire_limit
from .sandbox.limits import CallCpuLimit

__all__ = ["main"]

_NO_TOOL_CODE = frozenset({"load", "ping"})
"""Requests that run no tool code in this process (an import runs in a fork of it)."""
_BUILT_TOOLS_KEPT = 512
"""Tool-module versions a call worker keeps built; older ones are rebuilt from their recipe if called."""


class _RecordingImporter(ToolImporter):
    """A ``ToolImporter`` that remembers every module it executed, with the bytes it ran.

    A call worker also keeps *staged* modules: the live version of a module it
    held an older one of, dropped from ``sys.modules`` and run from the staged
    bytes (not the disk) when code imports it again, as the in-process
    ``sys.modules`` would hand out the live version.
    """

    def __init__(self, roots: list[Path], tag: str) -> None:
        super().__init__(roots, tag=tag)
        self.executed: list[tuple[str, Path, bytes]] = []
        self.staged: dict[str, tuple[int, bytes]] = {}
        self.ran_staged: dict[str, int] = {}

    def source_for(self, fullname: str) -> bytes | None:
        staged = self.staged.pop(fullname, None)
        if staged is None:
            return None
        self.ran_staged[fullname] = staged[0]
        return staged[1]

    def module_ran(self, module: ModuleType, path: Path, source: bytes) -> None:
        self.executed.append((module.__name__, path, source))


class Worker:
    """Serves one request at a time from the loader, on the main thread."""

    def __init__(self, channel: Channel, settings: WorkerSettings) -> None:
        self.channel = channel
        self.roots = tuple(Path(p) for p in settings["roots"])
        self.importer = _RecordingImporter(list(self.roots), settings["tag"])
        self.plugin_manager = make_plugin_manager(
            (), builtin=settings["builtin_plugins"], entry_points=settings["entry_point_plugins"]
        )
        configure_plugins(self.plugin_manager, None)  # no ToolLoader lives in a worker
        self.current: dict[str, int] = {}
        self.modules: OrderedDict[int, ModuleType] = OrderedDict()
        self.tools: OrderedDict[int, dict[str, AgentTool]] = OrderedDict()
        self.loop = asyncio.new_event_loop()
        limit = settings.get("max_result_bytes")
        self.max_result_bytes: int | None = limit if isinstance(limit, int) and limit > 0 else None
        self.wire_limit = wire_limit(self.max_result_bytes)
        policy = settings.get("sandbox")
        self.cpu_limit = CallCpuLimit(None if policy is None else policy["max_cpu_seconds"])
        self.reaps = policy is not None
        """Sandbox mode: the loader stops what a request left running; its zombies are reaped here."""
        self.policy = policy
        self.files_confined = policy is None
        """Whether Landlock binds this process: before the first request that runs tool code in it."""
        self._ending: Callable[[], None] | None = None
        """What ends the last import (its process, what it left running): run once its answer is sent."""
        fault_fd = settings.get("fault_fd")
        self.fault_fd = fault_fd if isinstance(fault_fd, int) else None
        """Where an import's process writes its stacks when the loader asks (``faulthandler``)."""

    def serve(self) -> None:
        handlers: dict[str, Callable[[Any], Ack | LoadReply | CallReply]] = {
            "load": self.on_load,
            "call": self.on_call,
            "cleanup": self.on_cleanup,
            "forget": self.on_forget,
            "begin": self.on_begin,
            "ping": self.on_ping,
            "prepare": self.on_prepare,
        }
        while True:
            try:
                message = self.channel.receive()
            except ChannelClosed:
                return
            if self.reaps:
                _reap_children()
            if message.get("op") not in _NO_TOOL_CODE and not self._confined():
                return  # no tool code runs outside Landlock: the loader sees this worker end
            handler = handlers.get(message.get("op", ""))
            reply: Ack | LoadReply | CallReply = (
                Ack(ok=False, fatal=f"unknown op {message.get('op')!r}")
                if handler is None
                else handler(message)
            )
            if message.get("op") != "call":
                try:
                    self.channel.send(reply)
                finally:
                    self._end_import()
                continue
            try:  # the loader never reads a longer call message: refuse it here, with a result that says why
                self.channel.send(reply, self.wire_limit)
            except MessageTooLarge as exc:
                too_large = self._too_large(cast(CallRequest, message), exc.size or exc.limit)
                self.channel.send(CallReply(result=encode_value(too_large)))

    def confine_files(self) -> None:
        """Sandbox mode: Landlock, once, in the process about to run tool code (a call worker, or an
        import's fork: its rules name the process's own ``/proc/<pid>``)."""
        if not self.files_confined and self.policy is not None:
            from .sandbox.apply import restrict_files

            restrict_files(self.policy)
            self.files_confined = True

    def _confined(self) -> bool:
        try:
            self.confine_files()
        except Exception as exc:  # SandboxFailed, OSError
            print(f"tool-loader worker: could not confine itself: {exc}", file=sys.stderr)
            return False
        return True

    # -------------------------------------------------------------- modules
    def ensure(self, items: list[list[Any]]) -> None:
        """Run the given module versions that this process does not hold yet, in order."""
        self.current.update(self.importer.ran_staged)
        self.importer.ran_staged.clear()
        for name, serial, path_text, source in items:
            if self.current.get(name) == serial:
                continue
            staged = self.importer.staged.pop(name, None)
            if source is not None:
                data = source
            elif staged is not None and staged[0] == serial:
                data = staged[1]
            else:
                raise RuntimeError(f"worker lost module {name} (version {serial}); its source was not sent")
            path = Path(path_text)
            self.importer.executed.clear()
            if path.name == "__init__.py":
                module = self.importer.run_package(name, path, data)
            else:
                module = self.importer.load(path, data)
            self.current[name] = serial
            self.modules[serial] = module
            while len(self.modules) > _BUILT_TOOLS_KEPT:
                self.modules.popitem(last=False)

    def stage(self, items: list[list[Any]], dropped: list[str]) -> None:
        """Bring held modules up to the live versions: each outdated one leaves ``sys.modules``, its live
        bytes staged for the next import of it; ``dropped`` ones (deleted files) just leave."""
        self.current.update(self.importer.ran_staged)
        self.importer.ran_staged.clear()
        for name, serial, _path, source in items:
            if self.current.get(name) == serial or source is None:
                continue
            self.importer.forget([name])
            self.current.pop(name, None)
            self.importer.staged[name] = (int(serial), source)
        for name in dropped:
            self.importer.forget([name])
            self.current.pop(name, None)
            self.importer.staged.pop(name, None)

    def discover(self, module: ModuleType, path: Path) -> list[AgentTool]:
        """Every plugin's tools: the in-process loader's own discovery, so errors match across modes."""
        return discover_tools(self.plugin_manager, module, path)

    def _executed_report(self, serial_base: int) -> list[list[Any]]:
        report = []
        for offset, (name, path, source) in enumerate(self.importer.executed):
            serial = serial_base + offset
            self.current[name] = serial
            report.append([name, serial, str(path), source])
        return report

    # ------------------------------------------------------------- requests
    def on_ping(self, message: PingRequest) -> Ack:
        return Ack(ok=True)

    def on_begin(self, message: BeginRequest) -> Ack:
        self.importer.begin_batch()
        return Ack(ok=True)

    def on_forget(self, message: ForgetRequest) -> Ack:
        self.forget([str(n) for n in message["names"]])
        return Ack(ok=True)

    def forget(self, names: list[str]) -> None:
        self.importer.forget(names)
        for name in names:
            self.current.pop(name, None)

    def on_load(self, message: LoadRequest) -> LoadReply:
        """Import one tool file in a fork of this process (``import_fork``): its code never runs here."""
        scratch = None if self.policy is None else Path(self.policy["write"][0])
        limit = self.wire_limit
        reply, self._ending = import_in_fork(
            lambda: self.load(message), self.channel, self.fault_fd, limit, scratch
        )
        return reply

    def _end_import(self) -> None:
        """Stop the import's process and clear what it left, once its answer is on its way to the loader
        and before the next request is read."""
        ending, self._ending = self._ending, None
        if ending is not None:
            ending()

    def load(self, message: LoadRequest) -> LoadReply:
        """Import one tool file after the module versions it imported last time; describe what it holds."""
        path = Path(message["path"])
        name = str(message["module"])
        self.confine_files()
        self.ensure(message["preload"])
        self.importer.executed.clear()
        before = self.importer.executions
        tools: list[AgentTool] = []
        components: list[Component] = []
        error: LoadError | None = None
        try:
            module = self.importer.fresh_module(name, message["hash"])
            if module is None:
                module = self.importer.load(path, message["source"])
            tools = self.discover(module, path)
            components = discover_components(self.plugin_manager, module, path)
        except BaseException as exc:  # the tool file's fault, reported to the loader
            info = error_info_from_exception(exc, path, self.roots)
            error = LoadError(
                exc_type=info.exc_type,
                message=info.message,
                file=info.file,
                line=info.line,
                traceback=info.traceback,
                kind=info.kind.value,
                source=info.source,
            )
        executed = self._executed_report(int(message["serial_base"]))
        touched = {name, *(item[0] for item in (*message["preload"], *executed))}
        return LoadReply(
            ok=error is None,
            error=error,
            tools=[description_to_wire(description_of(tool)) for tool in tools],
            components=[describe_component(component) for component in components],
            executed=executed,
            deps={n: sorted(self.importer.dependencies(n)) for n in touched},
            executions=self.importer.executions - before,
        )

    def tools_of(self, message: PrepareRequest | CallRequest) -> dict[str, AgentTool]:
        """The tools of one module version, built from its recipe the first time they are needed."""
        serial = int(message["serial"])
        found = self.tools.get(serial)
        if found is not None:
            self.tools.move_to_end(serial)
            return found
        self.importer.begin_batch()
        self.ensure(message["build"])
        module = self.modules[serial]
        path = Path(str(module.__file__))
        found = {tool.tool_name: tool for tool in self.discover(module, path)}
        for component in discover_components(self.plugin_manager, module, path):
            found[component.component_id] = ComponentCall(component)  # a ':' never occurs in a tool name
        self.tools[serial] = found
        while len(self.tools) > _BUILT_TOOLS_KEPT:
            self.tools.popitem(last=False)
        return found

    def tool_for(self, message: CallRequest) -> AgentTool:
        tool = self.tools_of(message).get(str(message["tool"]))
        if tool is None:
            raise LookupError(
                f"tool {message['tool']!r} is no longer defined by version {message['serial']} of its file"
            )
        return tool

    def on_prepare(self, message: PrepareRequest) -> Ack:
        """Build a tool version ahead of its first call."""
        try:
            self.tools_of(message)
        except BaseException as exc:  # the call will report it, if one comes
            return Ack(ok=False, error=f"{type(exc).__name__}: {exc}")
        return Ack(ok=True)

    def on_call(self, message: CallRequest) -> CallReply:
        trace = message.get("trace")
        if trace is None:
            return self._call_message(message)
        with remote_context(trace):  # the caller's trace, for tools that trace themselves
            return self._call_message(message)

    def _call_message(self, message: CallRequest) -> CallReply:
        tool_use: ToolUse = message["tool_use"]
        state: dict[str, Any] = message["state"]
        install_pipe_handlers(self.channel, message, state)
        try:
            self.stage(message["sync"], message["drop"])
            tool = self.tool_for(message)
        except BaseException as exc:  # rebuilding failed: an error result, not a dead worker
            failure = _failure(tool_use["toolUseId"], exc, "could not be prepared")
            return CallReply(result=encode_value(failure), prepared=False)
        self.importer.executed.clear()
        self.cpu_limit.before_call()
        reply = self._call(tool, tool_use, state, message["stream"])
        # Modules the call imported from disk (a sibling imported inside a function): the loader
        # marks them held, so their next live version replaces them here before the next call.
        if self.importer.executed:
            reply["imported"] = sorted(
                {name for name, _, _ in self.importer.executed} - set(self.importer.ran_staged)
            )
        return reply

    def _call(self, tool: AgentTool, tool_use: ToolUse, state: dict[str, Any], stream: bool) -> CallReply:
        tool_use_id = tool_use["toolUseId"]
        if stream:
            try:
                last = self.loop.run_until_complete(self._stream(tool, tool_use, state))
            except BaseException as exc:  # SystemExit, KeyboardInterrupt... from the tool
                return CallReply(result=encode_value(exception_result(tool_use_id, exc)))
            final = self._sized(_final_result(last, tool_use_id), tool.tool_name, tool_use_id)
            return CallReply(result=encode_value(final))
        try:
            result = tool.invoke(tool_use["input"], tool_use_id=tool_use_id, invocation_state=state)
        except BaseException as exc:  # raised through (raise_errors=True): the caller's proxy raises it
            result = exception_result(tool_use_id, exc)
            return CallReply(result=encode_value(result), raised=[type(exc).__name__, str(exc)])
        return CallReply(result=encode_value(self._sized(result, tool.tool_name, tool_use_id)))

    async def _stream(self, tool: AgentTool, tool_use: ToolUse, state: dict[str, Any]) -> Any:
        """Send every event but the last as it comes; return the last (the result).

        An event too long to send ends the stream with the error naming the limit.
        """
        pending: Any = None
        have = False
        async for event in tool.stream(tool_use, state):
            if have:
                try:
                    self.channel.send({"event": encode_value(pending)}, self.wire_limit)
                except MessageTooLarge as exc:
                    limit = self.max_result_bytes or exc.limit
                    return oversized_result(
                        tool_use["toolUseId"], tool.tool_name, exc.size or exc.limit, limit
                    )
            pending, have = event, True
        return pending

    def _sized(self, result: Any, tool_name: str, tool_use_id: str) -> Any:
        """``result``, or the error naming the limit when it is larger than ``max_result_bytes``."""
        limit = self.max_result_bytes
        if limit is None or not is_tool_result_like(result):
            return result
        size = result_size(result, limit)
        return result if size is None else oversized_result(tool_use_id, tool_name, size, limit)

    def _too_large(self, message: CallRequest, size: int) -> ToolResult:
        """The result standing in for a call reply longer than the loader reads."""
        tool_use = message.get("tool_use", {})
        tool_use_id = str(tool_use.get("toolUseId") or "") if isinstance(tool_use, dict) else ""
        limit = self.max_result_bytes or self.wire_limit
        return oversized_result(tool_use_id, str(message.get("tool", "")), size, limit)

    def on_cleanup(self, message: CleanupRequest) -> Ack:
        serial = int(message["serial"])
        built = self.tools.get(serial, {})
        tool = built.pop(str(message["tool"]), None)
        if not built:
            self.tools.pop(serial, None)
        if tool is not None:
            try:
                outcome = tool.cleanup()
                if outcome is not None:
                    self.loop.run_until_complete(_await(outcome))
            except Exception as exc:
                print(f"tool-loader worker: cleanup of {tool.tool_name} failed: {exc!r}", file=sys.stderr)
        return {"ok": True}


def _final_result(event: Any, tool_use_id: str) -> Any:
    """The stream's last event as a ``ToolResult``, as ``AgentTool.ainvoke`` reads it in-process."""
    if is_tool_result_like(event):
        return event
    inner = getattr(event, "tool_result", None)  # Strands' ToolResultEvent
    if is_tool_result_like(inner):
        return inner
    return error_result(tool_use_id, "Error: the tool finished without producing a result")


async def _await(awaitable: Any) -> None:
    await awaitable


def _failure(tool_use_id: str, exc: BaseException, what: str) -> ToolResult:
    result = exception_result(tool_use_id, exc)
    result["content"][0]["text"] = f"Error: the tool {what} in its worker: {type(exc).__name__} - {exc}"
    return result


def _reap_children() -> None:
    """Collect the exit of every child that has ended (processes the loader stopped after a request)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _keep_descendants() -> None:
    """Become a child subreaper: processes the tools start stay below this worker however they
    detach (a new session, a double fork), so the loader can find and stop them all."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER


def _limit_memory(megabytes: int) -> None:
    """Cap what this worker may write: ``RLIMIT_DATA`` on Linux (heap and private writable mappings,
    not the address space libraries reserve and never use), ``RLIMIT_AS`` elsewhere."""
    import resource

    kind = resource.RLIMIT_DATA if sys.platform.startswith("linux") else resource.RLIMIT_AS
    size = megabytes * 1024 * 1024
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        size = min(size, hard)
    resource.setrlimit(kind, (size, size))


def _confine(policy: SandboxPolicy | None) -> str | None:
    """Sandbox mode: apply the sandbox now, before any tool code, but Landlock (``Worker.confine_files``);
    the reason it failed, else None."""
    if policy is None:
        return None
    from .sandbox.apply import SandboxFailed, apply_policy

    try:
        apply_policy(policy, files=False)  # layers left off under best effort were announced by the loader
    except (SandboxFailed, OSError) as exc:
        return str(exc)
    return None


def warm_up() -> None:
    """Import what every worker imports before its first tool, for the template (``fork_server.serve``) to
    do once instead of each forked worker: the built-in discovery plugins and the sandbox's two libraries
    (about 60 ms of CPU per worker start). Where a library does not load, each sandboxed worker still
    says why when it confines itself."""
    make_plugin_manager((), builtin=True, entry_points=False)
    from ..tools import decorator  # noqa: F401  # what a tool file's `from loader import tool` imports
    from .sandbox import apply, landlock, syscalls  # noqa: F401  # apply: what _confine imports

    landlock.abi_version()
    syscalls.available()


def main(raw_settings: str) -> int:
    """Run the worker until the loader closes the pipe."""
    settings: WorkerSettings = json.loads(raw_settings)
    die_with_parent()
    drop_ptrace()  # as root, the loader's non-dumpable memory and environment stay closed to tools
    if settings.get("subreaper"):
        _keep_descendants()  # before the sandbox, whose filter then keeps it on
    refused = _confine(settings.get("sandbox"))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the console's business
    reader, writer = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    for stream in (sys.stdout, sys.stderr):  # a killed worker loses nothing it printed
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True, write_through=True)
    forward_stack_requests()  # tool code runs in an import's own process, which answers them
    channel = Channel(reader, writer, trusted=True)  # the loader is the other end
    if refused is not None:
        channel.send(Hello(ok=False, fatal=f"worker could not start: {refused}"))
        return 1
    try:
        worker = Worker(channel, settings)
    except BaseException as exc:
        try:
            channel.send(Hello(ok=False, fatal=f"worker could not start: {type(exc).__name__}: {exc}"))
        except ChannelClosed:
            pass
        return 1
    limit = settings.get("max_memory_mb")
    if isinstance(limit, int) and limit > 0:
        _limit_memory(limit)
    try:
        channel.send(Hello(ok=True, ready=True, pid=os.getpid()))
        worker.serve()
    except ChannelClosed:
        pass  # the loader went away: nothing left to answer
    return 0
