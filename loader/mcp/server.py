"""A Model Context Protocol server over a ``ToolRegistry``, for both protocol eras of the MCP SDK 2.x.

``tools/list`` is answered from the registry (never the disk); ``tools/call``
goes through ``registry`` calls (sync tool bodies in worker threads, so a slow
tool never holds up other calls). Every registry change set is announced to
every connected client, once, however it connects:

* 2026-07-28 clients listen on ``subscriptions/listen``: we publish
  ``ToolsListChanged`` on the server's subscription bus.
* Handshake-era clients (2024-11-05 .. 2025-11-25) get
  ``notifications/tools/list_changed`` on their session's standalone channel.

Prompts, resources and resource templates are served from the same snapshot
(``components.py``); a commit announces only the lists it changed, and a
rewritten resource reaches its subscribers as ``resources/updated``
(``announcements.py``).

``tools.listChanged`` is advertised in both eras: the SDK derives it from the
listen handler for 2026-07-28 and from ``NotificationOptions`` (default off)
for the handshake, which our server subclass turns on.

Every ``tools/list`` and ``tools/call`` result carries the tool-set
fingerprint in ``_meta["tool-loader/fingerprint"]``, so a client behind a
load balancer can tell which tool set answered; every listed tool, and every
call result, carries the tool's digest in ``_meta["tool-loader/digest"]``
(``loader.fingerprint.tool_digest``), so a client can tell which version of a
tool answered. A call whose ``_meta["tool-loader/expected-digest"]`` names
another version than the live one is refused (``loader.mcp.identity``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from enum import StrEnum
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server import CacheHint, NotificationOptions, Server, ServerRequestContext
from mcp.server.caching import CacheableMethod
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request

from ..components.skills import skill_folders, skill_of_tool
from ..context.messages import LogLevel
from ..fingerprint import tool_digest
from ..history.provenance import provenance_of
from ..listeners import Listeners
from ..registry.snapshot import RegistrySnapshot
from ..registry.tool_registry import ToolRegistry
from ..reload.published import Published
from ..types import AgentTool, ComponentKind, ToolResult, new_tool_use_id
from .announcements import PendingAnnouncements
from .components import ResourceSubscriptions, ServedComponents
from .context import LogLevels, McpContextHandlers, call_context
from .discovery import Discovery, DiscoveryFront, hint_meta
from .drain import CallsInFlight, DrainReport, ExchangesInFlight, stopped_by_shutdown
from .identity import RecentVersions, is_digest, malformed_expectation_result, stale_call_result
from .listing import ListingCache
from .served import ServedTools
from .sessions import NOTIFY_TIMEOUT, HandshakeSessions
from .skills import SKILL_META_KEY, SKILLS_EXTENSION, ServedSkills, SkillGetParams
from .wire import (
    DIGEST_META_KEY,
    EXPECTED_DIGEST_META_KEY,
    FINGERPRINT_META_KEY,
    PROVENANCE_META_KEY,
    call_tool_wire,
    text_is_structured,
    to_mcp_tool,
)

if TYPE_CHECKING:
    from ..reload.loader import ToolLoader

__all__ = ["CallOutcome", "CallRecord", "MCPToolServer"]

logger = logging.getLogger(__name__)

MCP_SESSION_ID_HEADER = "mcp-session-id"

LISTING_CACHE_HINT = CacheHint(ttl_ms=0, scope="private")
"""The caching a 2026-07-28 ``tools/list`` result allows (``ttlMs``, ``cacheScope``).

``ttlMs`` 0: a save can change the list at any moment, so no freshness is
promised; a client keeps its copy until ``list_changed`` and can check it
against the digests. ``private``: the server cannot tell whether its transport
authenticates callers, and a shared cache must not hand the list to someone
the server would have refused. The same holds for the prompts, resources and
templates lists and a resource's content: a save can change any of them.
"""

CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    method: LISTING_CACHE_HINT
    for method in (
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    )
}
"""Every cacheable result the server gives carries ``LISTING_CACHE_HINT``."""


REQUEST_STATE_KEY_ENV = "TOOL_LOADER_REQUEST_STATE_KEY"
"""The environment variable with the secret sealing 2026-07-28 ``requestState`` (see ``MCPToolServer``)."""


def _request_state_security(keys: Sequence[bytes | str] | None) -> RequestStateSecurity:
    if keys is None:
        shared = os.environ.get(REQUEST_STATE_KEY_ENV)
        keys = [shared] if shared else None
    return RequestStateSecurity.ephemeral() if not keys else RequestStateSecurity(keys=list(keys))


def _package_version() -> str:
    try:
        return metadata.version("tool-loader")
    except metadata.PackageNotFoundError:
        return "0"


class CallOutcome(StrEnum):
    """How a ``tools/call`` ended."""

    SUCCESS = "success"
    ERROR = "error"
    UNKNOWN_TOOL = "unknown_tool"
    STALE = "stale"
    """Not run: the client expected another version of the tool (``_meta["tool-loader/expected-digest"]``),
    or sent something there that is no digest."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One answered ``tools/call``, for metrics and logs."""

    tool: str
    """The tool's registered name, or the requested name when no such tool exists."""
    outcome: CallOutcome
    seconds: float
    fingerprint: str


_Converted = tuple["weakref.ref[AgentTool]", types.Tool, str | None]
"""A tool as the last listing converted it: the tool (weakly), its MCP ``Tool``, and its skill."""


class _ListChangedServer(Server[dict[str, Any]]):
    """The low-level server, advertising ``tools.listChanged`` to handshake-era clients too.

    Every transport (stdio, the streamable-HTTP session manager, the SDK's
    in-memory test transport) asks ``create_initialization_options()`` with no
    arguments, whose default says ``listChanged: false``; we change the default.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options
            or NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True),
            experimental_capabilities,
            extensions,
        )


class MCPToolServer:
    """Serves a ``ToolRegistry`` over MCP and announces its changes to every client.

    Transports live in ``loader.mcp.transports``.

    Example:
        >>> with ToolLoader(["./tools"]) as loader:
        ...     anyio.run(serve_stdio, MCPToolServer(loader.registry, loader=loader))
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        loader: ToolLoader | None = None,
        name: str = "tool-loader",
        instructions: str | None = None,
        subscriptions: SubscriptionBus | None = None,
        request_state_keys: Sequence[bytes | str] | None = None,
        discovery: Discovery = Discovery.ALL,
    ) -> None:
        """Build the server; nothing runs until a transport drives ``server``.

        Args:
            registry: The tools to serve; its changes are announced to clients.
            loader: The loader filling ``registry``; its files' content hashes enter the fingerprint.
            name: The server name clients see.
            instructions: Optional instructions for clients.
            subscriptions: The 2026-07-28 subscription bus; default in-process.
            request_state_keys: Secrets (32 bytes or more; the first seals, all open) protecting the
                ``requestState`` of 2026-07-28 rounds of a tool's questions. Replicas behind one
                address need the same keys; by default ``TOOL_LOADER_REQUEST_STATE_KEY``, else a key
                made at start (a round then only continues on the process that began it).
            discovery: ``search`` or ``hybrid`` list ``search_tools`` and ``call_tool`` instead of
                every tool (``loader.mcp.discovery``).
        """
        self._registry = registry
        self._loader = loader
        self._bus: SubscriptionBus = subscriptions if subscriptions is not None else InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        self._legacy_sessions = HandshakeSessions()
        self._listing_cache: dict[tuple[int, str], list[types.Tool]] = {}
        # Per protocol version: tool name -> (tool object, weakly, and its MCP Tool), from the last listing
        # built; weakly, so a replaced tool (and its module) is not kept alive by a listing.
        self._converted_tools: dict[str, dict[str, _Converted]] = {}
        # Per registry generation: tool name -> whether a lone text result is also structured content.
        self._text_structured: tuple[int, dict[str, bool]] = (-1, {})
        self._served = ServedTools(registry, loader)
        self._pending = PendingAnnouncements()
        self._log_levels = LogLevels()
        skills = ServedSkills(lambda: self._served.current().snapshot)
        components = ServedComponents(lambda: self._served.current().snapshot, self._log_levels, skills)
        self._resource_subscriptions = ResourceSubscriptions()
        self._discovery = DiscoveryFront(discovery)
        self._discovery.listing_changed(self._served.current().snapshot)  # what clients list first
        self._versions = RecentVersions()
        self._call_listeners: Listeners[CallRecord] = Listeners("call", logger)
        self._announce_lock = threading.Lock()
        self._running = 0  # lifespans in progress: one per transport run, one per in-process client
        self._announced_generation = -1
        self._calls = CallsInFlight()
        self.exchanges = ExchangesInFlight()
        """Requests an HTTP transport is still answering; its drain waits for their answers to be written."""
        self._grace = 0.0
        self._server = _ListChangedServer(
            name,
            version=_package_version(),
            instructions=instructions,
            lifespan=self._lifespan,
            cache_hints=CACHE_HINTS,
            on_list_tools=self._list_tools,
            on_subscriptions_listen=self._listen,
            on_list_prompts=components.list_prompts,
            on_get_prompt=components.get_prompt,
            on_list_resources=components.list_resources,
            on_list_resource_templates=components.list_resource_templates,
            on_read_resource=components.read_resource,
            on_completion=components.complete,
            on_subscribe_resource=self._resource_subscriptions.subscribe,
            on_unsubscribe_resource=self._resource_subscriptions.unsubscribe,
        )
        # Registered as a plain request handler: it returns the result's wire form (a dict), which the
        # SDK validates against the protocol version's result schema before sending, as it does a model.
        self._server.add_request_handler("tools/call", types.CallToolRequestParams, self._call_tool)
        self._server.add_request_handler("skills/list", types.PaginatedRequestParams, skills.list_skills)
        self._server.add_request_handler("skills/get", SkillGetParams, skills.get_skill)
        self._server.extensions[SKILLS_EXTENSION] = {}
        self._listing = ListingCache(self._served)
        self._server.middleware.append(self._listing)
        self._server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._client_initialized
        )
        self._server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_log_level)
        self._server.middleware.append(
            RequestStateBoundary(_request_state_security(request_state_keys), default_audience=name)
        )

    @property
    def server(self) -> Server[dict[str, Any]]:
        """The low-level SDK server (for transports and ``mcp.Client(server)`` in tests)."""
        return self._server

    @property
    def registry(self) -> ToolRegistry:
        return self._registry

    @property
    def loader(self) -> ToolLoader | None:
        return self._loader

    @property
    def handshake_sessions(self) -> int:
        """Handshake-era clients known to be connected (ended ones are let go at the next check)."""
        return len(self._legacy_sessions)

    def served(self) -> Published:
        """The record answered from now: the tools, and the fingerprint of that tool set."""
        return self._served.current()

    def fingerprint(self) -> str:
        """The fingerprint of the tool set served now."""
        return self._served.current().fingerprint

    def check_sessions_every(self, seconds: float) -> None:
        """How often ended handshake-era sessions are looked for (a transport with a short idle timeout)."""
        self._legacy_sessions.check_interval = seconds

    @property
    def calls_in_flight(self) -> int:
        """``tools/call`` s running now."""
        return len(self._calls)

    @property
    def draining(self) -> bool:
        """Whether ``drain`` has begun: the replica is on its way out."""
        return self._calls.draining

    async def drain(self, grace: float) -> DrainReport:
        """Let the calls in flight finish within ``grace`` seconds, stop the rest, end listen streams.

        A stopped call is answered with an error result naming the shutdown.
        Refusing new requests meanwhile is the transport's part.
        """
        self._grace = grace
        report = await self._calls.drain(grace)
        self._listen.close()  # 2026-07-28 listeners get their stream's graceful end, not a cut
        return report

    def close(self) -> None:
        """Nothing to release: the server follows its loader or registry only while a transport runs."""

    def subscribe_calls(self, listener: Callable[[CallRecord], None]) -> Callable[[], None]:
        """Call ``listener`` after every ``tools/call``; returns a function that unsubscribes."""
        return self._call_listeners.subscribe(listener)

    # -- handlers -------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        served = self._listing.pinned()
        snapshot = served.snapshot
        if self._discovery.active:  # no fingerprint: the listing stays byte-identical across reloads
            return types.ListToolsResult(tools=list(self._discovery.listing(snapshot, ctx.protocol_version)))
        key = (snapshot.generation, ctx.protocol_version)
        tools = self._listing_cache.get(key)
        if tools is None:
            # Built once per registry generation and protocol version: a listing between two
            # reloads costs no spec copies and no conversions.
            tools = self._converted(snapshot, ctx.protocol_version)
            self._listing_cache = {k: v for k, v in self._listing_cache.items() if k[0] == key[0]}
            self._listing_cache[key] = tools
        meta = {FINGERPRINT_META_KEY: served.fingerprint}
        return types.ListToolsResult(tools=list(tools), _meta=meta)

    def _converted(self, snapshot: RegistrySnapshot, protocol_version: str) -> list[types.Tool]:
        """The snapshot's tools as MCP ``Tool`` s; a tool object the last listing converted is reused.

        A reload replaces only the tools of the files it applied, so the first
        listing after it converts those alone, not the whole folder.
        """
        before = self._converted_tools.get(protocol_version, {})
        now: dict[str, _Converted] = {}
        listing: list[types.Tool] = []
        folders = skill_folders(snapshot.components(ComponentKind.SKILL))
        for name in snapshot.names():
            tool = snapshot.get(name)
            if tool is None:
                continue
            skill = skill_of_tool(tool.source_file, folders)
            kept = before.get(name)
            if kept is not None and kept[0]() is tool and kept[2] == skill:
                converted = kept[1]
                now[name] = kept
            else:
                spec = tool.tool_spec
                digest = tool_digest(tool)
                self._versions.remember(name, digest, spec)
                meta = self._entry_meta(snapshot, name, tool, digest)
                if skill is not None:
                    meta[SKILL_META_KEY] = skill
                converted = to_mcp_tool(spec, protocol_version=protocol_version, meta=meta)
                try:
                    now[name] = (weakref.ref(tool), converted, skill)
                except TypeError:  # a tool that cannot be referenced weakly is converted each time
                    pass
            listing.append(converted)
        self._converted_tools = {**self._converted_tools, protocol_version: now}
        return listing

    def _entry_meta(
        self, snapshot: RegistrySnapshot, name: str, tool: AgentTool, digest: str
    ) -> dict[str, Any]:
        """A listing entry's ``_meta``: its digest, its search hints, its provenance when it was promoted."""
        meta: dict[str, Any] = {DIGEST_META_KEY: digest, **hint_meta(tool)}
        source = snapshot.source_of(name)
        if source is not None and self._loader is not None:
            provenance = provenance_of(Path(source), self._loader.paths)
            if provenance is not None:
                meta[PROVENANCE_META_KEY] = provenance
        return meta

    async def _call_tool(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        started = time.perf_counter()
        served = self._served.current()
        snapshot = served.snapshot
        routed = self._discovery.route(snapshot, params)
        params = routed.params
        tool = None if routed.answer is not None else snapshot.get(params.name)
        logger.debug("tool_name=<%s>, generation=<%s> | mcp tools/call", params.name, snapshot.generation)
        meta: dict[str, Any] = {}
        outcome = CallOutcome.UNKNOWN_TOOL
        handlers = call_context(ctx, params, self._log_levels)
        try:
            if routed.answer is not None:
                result = routed.answer
                outcome = CallOutcome.ERROR if routed.answer["status"] == "error" else CallOutcome.SUCCESS
            elif tool is None:
                result = await self._invoke(snapshot, params, handlers)
            else:
                digest = meta[DIGEST_META_KEY] = tool_digest(tool)
                expected = (params.meta or {}).get(EXPECTED_DIGEST_META_KEY)
                if expected is not None and not is_digest(expected):
                    result = malformed_expectation_result(new_tool_use_id(), tool.tool_name, expected)
                    outcome = CallOutcome.STALE
                elif expected is not None and expected != digest:
                    result = self._stale(tool, digest, str(expected))
                    outcome = CallOutcome.STALE
                else:
                    if not self._versions.knows(tool.tool_name, digest):  # called before it was listed
                        self._versions.remember(tool.tool_name, digest, tool.tool_spec)
                    result = await self._invoke(snapshot, params, handlers)
        finally:
            await handlers.close()
        fingerprint = meta[FINGERPRINT_META_KEY] = served.fingerprint
        answer = handlers.round_result(result) or call_tool_wire(
            result,
            text_structured=outcome is not CallOutcome.STALE
            and tool is not None
            and self._structured_text(snapshot, tool),
            protocol_version=ctx.protocol_version,
        )
        answer["_meta"] = {**(answer.get("_meta") or {}), **meta}
        if self._call_listeners:
            self._record_call(tool, params.name, outcome, answer, started, fingerprint)
        return answer

    def _record_call(
        self,
        tool: AgentTool | None,
        name: str,
        outcome: CallOutcome,
        answer: dict[str, Any],
        started: float,
        fingerprint: str,
    ) -> None:
        """Tell the call listeners how one ``tools/call`` ended."""
        if tool is not None and outcome is CallOutcome.UNKNOWN_TOOL:
            outcome = CallOutcome.ERROR if answer.get("isError") else CallOutcome.SUCCESS
        record = CallRecord(
            tool.tool_name if tool is not None else name, outcome, time.perf_counter() - started, fingerprint
        )
        self._call_listeners.tell(record)

    def _stale(self, tool: AgentTool, digest: str, expected: str) -> ToolResult:
        """The refusal of a call shaped by another version of ``tool`` than the live one."""
        name = tool.tool_name
        spec = tool.tool_spec
        logger.debug("tool_name=<%s>, expected=<%s>, live=<%s> | stale call refused", name, expected, digest)
        seen = self._versions.spec_of(name, expected)
        self._versions.remember(name, digest, spec)
        return stale_call_result(
            new_tool_use_id(), name, expected=expected, current=digest, spec=spec, seen=seen
        )

    async def _invoke(
        self, snapshot: RegistrySnapshot, params: types.CallToolRequestParams, handlers: McpContextHandlers
    ) -> ToolResult:
        """Run one call, counted in flight so a drain waits for it (and answers it when the grace ends)."""
        tool_use_id = new_tool_use_id()
        result = await self._calls.run(
            snapshot.ainvoke(
                params.name, params.arguments or {}, tool_use_id=tool_use_id, context_handlers=handlers
            )
        )
        return result if result is not None else stopped_by_shutdown(tool_use_id, self._grace)

    def _structured_text(self, snapshot: RegistrySnapshot, tool: AgentTool) -> bool:
        """``text_is_structured`` of the tool's spec, worked out once per tool and registry generation."""
        generation, flags = self._text_structured
        if generation != snapshot.generation:
            flags = {}
            self._text_structured = (snapshot.generation, flags)
        name = tool.tool_name
        flag = flags.get(name)
        if flag is None:
            flag = flags[name] = text_is_structured(tool.tool_spec)
        return flag

    async def _set_log_level(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """``logging/setLevel`` (handshake era): the lowest level of this connection's tool log entries."""
        self._log_levels.set(ctx.session.client_params, LogLevel.parse(params.level))
        return types.EmptyResult()

    async def _client_initialized(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.NotificationParams
    ) -> None:
        """Remember a handshake-era session so registry changes reach it outside any request.

        The SDK offers no public hook for a connection's end, so a session is
        forgotten when it stops answering (``loader.mcp.sessions``).
        """
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        if isinstance(ctx.request, Request) and MCP_SESSION_ID_HEADER not in ctx.request.headers:
            return  # stateless HTTP: the exchange is over, nothing can reach this client later
        self._legacy_sessions.add(ctx.session)

    # -- change announcements ------------------------------------------------------

    @asynccontextmanager
    async def _lifespan(self, _server: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        """While the server runs, carry each new served generation from the publishing thread to this loop."""
        loop = asyncio.get_running_loop()
        send, receive = anyio.create_memory_object_stream[int](max_buffer_size=math.inf)

        def deliver(generation: int) -> None:
            try:
                send.send_nowait(generation)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        def listener(generation: int) -> None:
            try:
                loop.call_soon_threadsafe(deliver, generation)
            except RuntimeError:  # the loop has closed: the server is gone
                pass

        pump = asyncio.create_task(self._pump(receive), name="tool-loader-mcp-announcer")
        checker = asyncio.create_task(self._legacy_sessions.keep_checking(), name="tool-loader-mcp-sessions")
        unfollow = self._registry.subscribe(self._pending.add)  # before the generations it describes
        unsubscribe = self._served.subscribe(listener)
        self._running += 1
        try:
            yield {}
        finally:
            self._running -= 1
            unsubscribe()
            unfollow()
            send.close()
            pump.cancel()
            checker.cancel()
            await asyncio.wait([pump, checker])  # lets a cancellation of this task itself propagate
            if not self._running:  # the last run ends: close listen streams gracefully
                self._listen.close()

    async def _pump(self, receive: MemoryObjectReceiveStream[int]) -> None:
        # Each announcement runs on its own: a handshake session whose connection hangs may hold
        # one up until NOTIFY_TIMEOUT, and the next change must reach every client meanwhile.
        running: set[asyncio.Task[None]] = set()
        try:
            async with receive:
                async for generation in receive:
                    task = asyncio.create_task(
                        self._announce_logged(generation), name="tool-loader-mcp-announce"
                    )
                    running.add(task)
                    task.add_done_callback(running.discard)
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.wait(running)

    async def _announce_logged(self, generation: int) -> None:
        try:
            await self.announce(generation)
        except Exception:
            logger.exception("generation=<%s> | announcing tools/list_changed failed", generation)

    async def announce(self, generation: int | None = None) -> None:
        """Tell every connected client what changed: the tools', prompts' or resources' lists, a resource.

        Called for each registry change set; ``generation`` makes repeated
        calls for one change set (one per running lifespan) announce once.
        What changed comes from the change sets committed up to ``generation``
        (the tools' list when none was heard). Handshake-era sessions are told
        concurrently, so a stalled one delays no other; one that fails or
        stalls past ``NOTIFY_TIMEOUT`` is forgotten.
        """
        listing_changed = True
        if generation is not None:
            with self._announce_lock:
                if generation <= self._announced_generation:
                    return
                self._announced_generation = generation
                listing_changed = self._discovery.listing_changed(self._served.current().snapshot)
        what = self._pending.take(generation)
        if not listing_changed:  # a search-mode listing: only its always-load tools' changes show in it
            what = replace(what, tools=False)
        for changed, event in (
            (what.tools, ToolsListChanged()),
            (what.prompts, PromptsListChanged()),
            (what.resources, ResourcesListChanged()),
        ):
            if changed:
                await self._bus.publish(event)
        for uri in sorted(what.updated):
            await self._bus.publish(ResourceUpdated(uri=uri))
        told = await self._legacy_sessions.announce(
            tools=what.tools, prompts=what.prompts, resources=what.resources
        )
        if what.updated:
            await self._resource_subscriptions.notify(what.updated, NOTIFY_TIMEOUT)
        logger.debug("generation=<%s>, legacy_sessions=<%d>, what=<%s> | announced", generation, told, what)
