"""Running a call in a worker process and turning every way it can end into a ``ToolResult``.

A call takes one worker of its tool file for itself (``pool``: a worker serves
one file for its whole life; ``file_share``: one file never holds every worker),
sends the tool's recipe (only the module sources that worker has not run yet)
with the ``ToolUse``, relays stream events, and returns the result. If the
worker dies, overruns the call timeout or the caller cancels, the worker is
killed and replaced and the caller gets an error result: a tool's fault never
raises out of here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from ..calls.tracing import trace_carrier
from ..errors import ToolCallTimeout
from ..results import error_result, exception_result, is_tool_result_like
from ..types import ToolResult, ToolUse
from .context_relay import REQUEST, answer_request, context_offer
from .errors import WorkerCrashed, WorkerError, WorkerSentTooMuch, WorkerTimeout, tool_raised
from .ledger import ModuleLedger, ModuleVersion
from .messages import CallReply, CallRequest, CleanupRequest, ModuleEntry, PrepareRequest
from .pool import WorkerPool
from .process import WorkerProcess
from .protocol import MessageTooLarge, encode_value, json_safe_state, wire_limit

__all__ = ["CallRouter"]

logger = logging.getLogger(__name__)

_FROM_DISK = -1
"""The serial of a module a worker imported from disk during a call: no recorded version matches it."""


@dataclass(frozen=True, slots=True)
class _Call:
    """One call on its way to a worker: what the caller asked, and by when it must be answered."""

    tool_name: str
    owner: str
    """The tool's file: the workers that may run the call are the ones serving it."""
    recipe: tuple[ModuleVersion, ...]
    tool_use: ToolUse
    invocation_state: dict[str, Any] | None
    on_event: Callable[[Any], None] | None
    cancel: threading.Event | None
    timeout: float | None
    deadline: float | None

    def never_started(self, max_concurrent: int) -> ToolResult:
        """The result of a call that waited in line (``max_concurrent`` at once) until its deadline."""
        waited = ToolCallTimeout(
            self.tool_name, self.timeout or 0.0, started=False, max_concurrent=max_concurrent
        )
        return exception_result(self.tool_use["toolUseId"], waited)


class CallRouter:
    """Sends calls of proxy tools to the call workers of one backend."""

    def __init__(
        self,
        pool: WorkerPool,
        call_timeout: float,
        ledger: ModuleLedger,
        max_result_bytes: int | None = None,
        max_processes: int | None = None,
        max_concurrent_per_tool: int = 8,
    ) -> None:
        self.pool = pool
        self.call_timeout = call_timeout
        self._ledger = ledger
        self.max_result_bytes = max_result_bytes
        self.max_processes = max_processes
        self.max_concurrent_per_tool = max_concurrent_per_tool
        self.file_share = max(1, pool.max_in_use - 1)
        """Calls of one tool file's tools running at once: fewer than the call workers, so another file's
        tools always find one free (fair share; the file's further calls wait in line)."""
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._shares: dict[str, threading.BoundedSemaphore] = {}
        self._slots_lock = threading.Lock()
        self._wire_limit = wire_limit(max_result_bytes)

    def call(
        self,
        tool_name: str,
        recipe: tuple[ModuleVersion, ...],
        tool_use: ToolUse,
        invocation_state: dict[str, Any] | None,
        *,
        on_event: Callable[[Any], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ToolResult:
        """Run ``tool_name`` from the last module of ``recipe``.

        Every way a worker can fail becomes an error result; only a tool that
        raises through (``raise_errors=True``) makes this raise, as it would
        in-process (``ToolRaised``, named like the tool's exception).
        """
        timeout = self.call_timeout or None
        deadline = None if timeout is None else time.monotonic() + timeout
        owner = str(recipe[-1].path)
        call = _Call(
            tool_name, owner, recipe, tool_use, invocation_state, on_event, cancel, timeout, deadline
        )
        slot = self._slot(self._slots, tool_name, self.max_concurrent_per_tool)
        if not _wait_for(slot, deadline, cancel):
            return call.never_started(self.max_concurrent_per_tool)
        try:
            share = self._slot(self._shares, owner, self.file_share)
            if not _wait_for(share, deadline, cancel):
                return call.never_started(self.file_share)
            try:
                return self._call_in_worker(call)
            finally:
                share.release()
        finally:
            slot.release()

    def _slot(
        self, slots: dict[str, threading.BoundedSemaphore], key: str, size: int
    ) -> threading.BoundedSemaphore:
        """The slots of one tool (as in-process, at most ``max_concurrent_per_tool`` calls at once) or of
        one tool file (its fair share of the workers); calls beyond wait in line within their timeout."""
        slot = slots.get(key)
        if slot is not None:
            return slot
        with self._slots_lock:
            slot = slots.get(key)
            if slot is None:
                slot = slots[key] = threading.BoundedSemaphore(size)
            return slot

    def _call_in_worker(self, call: _Call) -> ToolResult:
        tool_name, tool_use_id, timeout = call.tool_name, call.tool_use["toolUseId"], call.timeout
        try:
            wait = None if call.deadline is None else max(0.0, call.deadline - time.monotonic())
            worker = self.pool.acquire(wait, owner=call.owner)
        except WorkerTimeout:
            return error_result(
                tool_use_id,
                f"Error: tool {tool_name} could not start: every call worker stayed busy for {timeout:g} s",
            )
        except WorkerError as exc:
            return error_result(tool_use_id, f"Error: tool {tool_name} could not start: {exc}")
        healthy = False
        try:
            result, raised = self._run(worker, call)
            healthy = True
        except WorkerTimeout:
            if call.cancel is not None and call.cancel.is_set():
                text = f"Error: the call of tool {tool_name} was cancelled; its worker process was stopped"
            else:
                text = (
                    f"Error: tool {tool_name} did not finish within {timeout:g} s; "
                    "its worker process was stopped and replaced"
                )
            return error_result(tool_use_id, text)
        except WorkerCrashed as exc:
            if worker.over_limit is not None:
                return error_result(
                    tool_use_id,
                    f"Error: tool {tool_name} started more than {self.max_processes} processes "
                    f"(max_processes: {worker.over_limit} seen); its worker process was stopped "
                    "with all of them",
                )
            return error_result(
                tool_use_id,
                f"Error: tool {tool_name} crashed its worker process (it {exc.exit}); "
                "a fresh worker replaces it and the other tools are unaffected",
            )
        except WorkerSentTooMuch as exc:
            limit = self.max_result_bytes or exc.limit
            return error_result(
                tool_use_id,
                f"Error: the result of tool {tool_name} is more than {exc.limit:,} bytes to send, over the "
                f"limit of {limit:,} bytes (max_result_bytes); its worker process was stopped",
            )
        except MessageTooLarge as exc:  # nothing was sent: the worker is as it was
            healthy = True
            return error_result(
                tool_use_id,
                f"Error: the call of tool {tool_name} is {exc.size:,} bytes to send to its worker, "
                f"over the limit of {exc.limit:,} bytes",
            )
        finally:
            self.pool.release(worker, healthy=healthy)
        if raised is not None:
            raise tool_raised(*raised)
        return result

    def _run(self, worker: WorkerProcess, call: _Call) -> tuple[ToolResult, tuple[str, str] | None]:
        """The call's result, and the tool's exception (type name, text) if it raised through."""
        recipe = call.recipe
        worker.collect_prepared(call.deadline)
        known = worker.known
        epoch = self._ledger.epoch
        sync: tuple[ModuleVersion, ...] = ()
        dropped: tuple[str, ...] = ()
        if worker.synced != epoch:  # modules were reloaded since this worker's last call
            sync, dropped = self._ledger.updates(known, worker.synced)
            in_recipe = {v.name for v in recipe}
            sync = tuple(v for v in sync if v.name not in in_recipe)
        serial = recipe[-1].serial
        request = CallRequest(
            op="call",
            sync=[_entry(v, known) for v in sync],
            drop=list(dropped),
            build=[_entry(v, known) for v in recipe],
            serial=serial,
            tool=call.tool_name,
            tool_use=encode_value(call.tool_use),
            state=json_safe_state(call.invocation_state),
            stream=call.on_event is not None,
        )
        carrier = trace_carrier()  # the caller's trace, so the tool's own spans join it
        if carrier is not None:
            request["trace"] = carrier
        offer = context_offer(call.invocation_state)
        if offer is not None:
            request["context"] = offer  # context_relay.REQUEST
        worker.send(request)
        message = self._answer(worker, call)
        result = message.get("result")
        if message.get("prepared", True):
            for version in (*sync, *recipe):
                known[version.name] = version.serial
            for name in dropped:
                known.pop(name, None)
            for name in message.get("imported") or ():
                known.setdefault(str(name), _FROM_DISK)
            worker.built.add(serial)
            if worker.synced != epoch and self._ledger.is_current(recipe):  # else the old versions it
                worker.synced = epoch  # ran must be replaced next time
        else:
            known.clear()
            worker.synced = 0
        if not is_tool_result_like(result):
            text = f"Error: tool {call.tool_name}'s worker sent {result!r}"
            return error_result(call.tool_use["toolUseId"], text), None
        raised = message.get("raised")
        if isinstance(raised, list) and len(raised) == 2:
            return result, (str(raised[0]), str(raised[1]))
        return result, None

    def _answer(self, worker: WorkerProcess, call: _Call) -> CallReply:
        """The call's final message; stream events and context requests on the way are handled."""
        cancelled = call.cancel.is_set if call.cancel is not None else None
        on_event = call.on_event
        while True:
            message = worker.receive(call.deadline, cancelled, self._wire_limit)
            if "event" in message:
                if on_event is not None:
                    on_event(message["event"])
                continue
            if REQUEST in message:  # the tool's context call (see context_relay)
                worker.send(answer_request(call.invocation_state, message[REQUEST]))
                continue
            return cast(CallReply, message)

    def prepare(self, recipe: tuple[ModuleVersion, ...]) -> None:
        """Have the file's idle worker build a new version now, so its next call does not pay for the import.

        Fire and forget: the request is sent without waiting; the worker's answer
        is read by whoever takes the worker next (it is the first to be handed out).
        """
        worker = self.pool.try_acquire_ready(str(recipe[-1].path))
        if worker is None:
            return
        healthy = True
        try:
            build = [_entry(v, worker.known) for v in recipe]
            worker.send(PrepareRequest(op="prepare", build=build, serial=recipe[-1].serial))
            worker.prepared.append((recipe[-1].serial, {v.name: v.serial for v in recipe}))
        except WorkerError:
            healthy = False
        finally:
            self.pool.release(worker, healthy=healthy)

    def cleanup(self, tool_name: str, serial: int) -> None:
        """Run ``cleanup()`` of this tool version in every worker that made an instance of it."""
        self.pool.tell(
            lambda w: serial in w.built, CleanupRequest(op="cleanup", serial=serial, tool=tool_name)
        )


def _entry(version: ModuleVersion, known: dict[str, int]) -> ModuleEntry:
    """A module version as a worker takes it: its source only if the worker does not hold it."""
    source = None if known.get(version.name) == version.serial else version.source
    return [version.name, version.serial, str(version.path), source]


def _wait_for(
    slot: threading.BoundedSemaphore, deadline: float | None, cancel: threading.Event | None
) -> bool:
    """Take one of a tool's slots before ``deadline``; False if none frees in time or the call is given up."""
    if slot.acquire(blocking=False):
        return True
    while True:
        wait = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
        if wait <= 0:
            return slot.acquire(blocking=False)
        if slot.acquire(timeout=wait):
            return True
        if cancel is not None and cancel.is_set():
            return False
