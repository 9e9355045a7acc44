"""A Model Context Protocol server over a ``ToolRegistry``, for both protocol eras of the MCP SDK 2.x.

``tools/list`` is answered from the registry (never the disk); ``tools/call``
goes through ``registry`` calls (sync tool bodies in worker threads, so a slow
tool never holds up other calls). Every registry change set is announced to
every connected client, once, however it connects:

* 2026-07-28 clients listen on ``subscriptions/listen``: we publish
  ``ToolsListChanged`` on the server's subscription bus.
* Handshake-era clients (2024-11-05 .. 2025-11-25) get
  ``notifications/tools/list_changed`` on their session's standalone channel.

``tools.listChanged`` is advertised in both eras: the SDK derives it from the
listen handler for 2026-07-28 and from ``NotificationOptions`` (default off)
for the handshake, which our server subclass turns on.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib import metadata
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

try:
    import anyio
    import mcp_types as types
    import uvicorn
    from anyio.streams.memory import MemoryObjectReceiveStream
    from mcp.server import CacheHint, NotificationOptions, Server, ServerRequestContext
    from mcp.server.models import InitializationOptions
    from mcp.server.session import ServerSession
    from mcp.server.stdio import stdio_server
    from mcp.server.subscriptions import (
        InMemorySubscriptionBus,
        ListenHandler,
        SubscriptionBus,
        ToolsListChanged,
    )
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from starlette.applications import Starlette
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("loader.mcp_server needs the MCP SDK: pip install 'tool-loader[mcp]'") from exc

from .integrations import ainvoke_nonblocking
from .registry import RegistryChangeSet, RegistrySnapshot, ToolRegistry
from .types import AgentTool, JSONSchema, ToolResult, ToolResultContent, ToolSpec, new_tool_use_id

if TYPE_CHECKING:
    from .reload.loader import ToolLoader
    from .status import LoaderEvent

__all__ = [
    "MCPToolServer",
    "format_change_set",
    "format_loader_event",
    "to_call_tool_result",
    "to_mcp_tool",
]

logger = logging.getLogger(__name__)

NOTIFY_TIMEOUT = 5.0
"""Seconds one session may take to accept a list-changed notification before it is skipped."""

_TEXT_DOCUMENT_FORMATS = {"txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html"}
_BINARY_DOCUMENT_FORMATS = {
    "pdf": "application/pdf",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def _package_version() -> str:
    try:
        return metadata.version("tool-loader")
    except metadata.PackageNotFoundError:
        return "0"


# -- wire mapping ---------------------------------------------------------------


def _schema(wrapped: Any) -> JSONSchema | None:
    """The JSON Schema inside a spec's ``{"json": schema}`` wrapper (a bare schema passes through)."""
    if not isinstance(wrapped, dict):
        return None
    inner = wrapped.get("json", wrapped)
    return inner if isinstance(inner, dict) else None


def _object_rooted(schema: JSONSchema) -> bool:
    return schema.get("type") == "object"


def to_mcp_tool(spec: ToolSpec, *, protocol_version: str) -> types.Tool:
    """A tool spec as an MCP ``Tool``, within what ``protocol_version`` allows.

    The input schema gets ``"type": "object"`` when it names no type (MCP
    requires an object root). Handshake-era versions only allow an
    object-rooted output schema, so any other output schema is left out for
    them (their results then carry no structured content either).
    """
    input_schema = dict(_schema(spec.get("inputSchema")) or {})
    if "type" not in input_schema:
        input_schema = {"type": "object", **input_schema}
    output_schema = _schema(spec.get("outputSchema"))
    if output_schema is not None and protocol_version not in MODERN_PROTOCOL_VERSIONS:
        output_schema = output_schema if _object_rooted(output_schema) else None
    return types.Tool(
        name=spec["name"],
        description=spec.get("description"),
        input_schema=input_schema,
        output_schema=output_schema,
    )


def _base64(data: Any) -> str:
    """Base64 of raw bytes; a ``str`` is taken as already base64 (the JSON wire form of bytes)."""
    if isinstance(data, str):
        return data
    return base64.b64encode(bytes(data)).decode("ascii")


def _image_block(image: Any) -> types.ImageContent:
    fmt = str(image.get("format", "png")).lower()
    mime = "image/jpeg" if fmt in ("jpg", "jpeg") else f"image/{fmt}"
    return types.ImageContent(
        type="image", data=_base64(image.get("source", {}).get("bytes", b"")), mime_type=mime
    )


def _document_block(document: Any) -> types.EmbeddedResource:
    """A document as an embedded resource: text formats as text, the rest as a base64 blob."""
    fmt = str(document.get("format", "txt")).lower()
    name = str(document.get("name") or "document")
    uri = f"tool-loader://documents/{quote(name)}.{fmt}"
    raw = document.get("source", {}).get("bytes", b"")
    if fmt in _TEXT_DOCUMENT_FORMATS:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8", errors="replace")
        contents: types.TextResourceContents | types.BlobResourceContents = types.TextResourceContents(
            uri=uri, mime_type=_TEXT_DOCUMENT_FORMATS[fmt], text=text
        )
    else:
        contents = types.BlobResourceContents(
            uri=uri,
            mime_type=_BINARY_DOCUMENT_FORMATS.get(fmt, "application/octet-stream"),
            blob=_base64(raw),
        )
    return types.EmbeddedResource(type="resource", resource=contents)


def _content_block(block: ToolResultContent) -> types.ContentBlock:
    if "text" in block:
        return types.TextContent(type="text", text=str(block["text"]))
    if "json" in block:
        return types.TextContent(type="text", text=json.dumps(block["json"], ensure_ascii=False))
    if "image" in block:
        return _image_block(block["image"])
    if "document" in block:
        return _document_block(block["document"])
    return types.TextContent(type="text", text=json.dumps(block, ensure_ascii=False, default=str))


def to_call_tool_result(
    result: ToolResult, spec: ToolSpec | None, *, protocol_version: str
) -> types.CallToolResult:
    """A ``ToolResult`` as an MCP ``CallToolResult``.

    Text stays text; a json block becomes its JSON text plus
    ``structuredContent`` (the value itself when it is the only json block);
    images become image content, documents embedded resources; an error
    status becomes ``isError``. A successful tool with an advertised
    non-object output schema and a single text block reports that text as
    its structured content, so clients validating against the schema agree.
    Handshake-era versions only carry an object as structured content.
    """
    blocks = result.get("content") or []
    content = [_content_block(block) for block in blocks]
    is_error = result.get("status") == "error"
    structured: Any = None
    json_values = [block["json"] for block in blocks if "json" in block]
    if len(json_values) == 1:
        structured = json_values[0]
    elif not is_error and not json_values and spec is not None:
        output_schema = _schema(spec.get("outputSchema"))
        texts = [block["text"] for block in blocks if "text" in block]
        if output_schema is not None and not _object_rooted(output_schema) and len(texts) == 1 == len(blocks):
            structured = texts[0]
    if protocol_version not in MODERN_PROTOCOL_VERSIONS and not isinstance(structured, dict):
        structured = None
    return types.CallToolResult(content=content, structured_content=structured, is_error=is_error)


# -- status lines ---------------------------------------------------------------


def format_change_set(change_set: RegistryChangeSet) -> str:
    """One line per registry commit, by kind then name: ``tools changed (generation 7): +new ~old -gone``."""
    marks = {"added": "+", "replaced": "~", "removed": "-"}
    order = list(marks)
    changes = sorted(change_set.changes, key=lambda change: (order.index(str(change.kind)), change.name))
    parts = [f"{marks[str(change.kind)]}{change.name}" for change in changes]
    return f"tools changed (generation {change_set.generation}): {' '.join(parts) or '(nothing)'}"


def format_loader_event(event: LoaderEvent) -> str | None:
    """A line for the loader events a user must see (a broken save, a conflict, a recovery), else None.

    Additions, updates and removals are already told by ``format_change_set``.
    """
    kind = str(event.kind)
    if kind in ("failed", "stuck"):
        error = event.error or event.status.error
        what = error.one_line() if error is not None else "unknown error"
        serving = ", ".join(event.status.tools)
        still = f"; still serving the last good version ({serving})" if serving else ""
        verb = "load failed" if kind == "failed" else "load stuck"
        return f"{verb}: {event.path}: {what}{still}"
    if kind == "conflict":
        clashes = ", ".join(f"{name} is already defined in {owner}" for name, owner in event.status.conflicts)
        return f"conflict: {event.path}: {clashes or 'a tool name is already taken'}"
    if kind == "recovered":
        return f"recovered: {event.path} loads again ({', '.join(event.tools) or 'no tools'})"
    return None


# -- the server -----------------------------------------------------------------


def _in_name_order(snapshot: RegistrySnapshot) -> list[AgentTool]:
    """The snapshot's tools sorted by name, so every listing is stable."""
    return [tool for name in snapshot.names() if (tool := snapshot.get(name)) is not None]


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
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class MCPToolServer:
    """Serves a ``ToolRegistry`` over MCP and announces its changes to every client.

    Example:
        >>> with ToolLoader(["./tools"]) as loader:
        ...     anyio.run(MCPToolServer(loader.registry, loader=loader).run_stdio)
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        loader: ToolLoader | None = None,
        name: str = "tool-loader",
        instructions: str | None = None,
        status: Callable[[str], None] | None = None,
        subscriptions: SubscriptionBus | None = None,
    ) -> None:
        """Build the server; nothing runs until a ``run_*`` method or a transport drives ``server``.

        Args:
            registry: The tools to serve; its changes are announced to clients.
            loader: The loader filling ``registry``; with ``status``, its load failures are reported.
            name: The server name clients see.
            instructions: Optional instructions for clients.
            status: Receives a human-readable line per registry change and per load failure while serving.
            subscriptions: The 2026-07-28 subscription bus; default in-process.
        """
        self._registry = registry
        self._loader = loader
        self._status = status
        self._bus: SubscriptionBus = subscriptions if subscriptions is not None else InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        self._legacy_sessions: dict[object, ServerSession] = {}
        self._listing_cache: dict[tuple[int, str], list[types.Tool]] = {}
        self._announce_lock = threading.Lock()
        self._running = 0  # lifespans in progress: one per transport run, one per in-process client
        self._announced_generation = -1
        self._server = _ListChangedServer(
            name,
            version=_package_version(),
            instructions=instructions,
            lifespan=self._lifespan,
            cache_hints={"tools/list": CacheHint(ttl_ms=0)},
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self._listen,
        )
        self._server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._client_initialized
        )

    @property
    def server(self) -> Server[dict[str, Any]]:
        """The low-level SDK server (for custom transports and ``mcp.Client(server)`` in tests)."""
        return self._server

    @property
    def registry(self) -> ToolRegistry:
        return self._registry

    @property
    def handshake_sessions(self) -> int:
        """How many handshake-era clients are connected (they get ``notifications/tools/list_changed``)."""
        return len(self._legacy_sessions)

    # -- handlers -------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        snapshot = self._registry.snapshot()
        key = (snapshot.generation, ctx.protocol_version)
        tools = self._listing_cache.get(key)
        if tools is None:
            # Built once per registry generation and protocol version: a listing between two
            # reloads costs no spec copies and no conversions.
            specs = [tool.tool_spec for tool in _in_name_order(snapshot)]
            tools = [to_mcp_tool(spec, protocol_version=ctx.protocol_version) for spec in specs]
            self._listing_cache = {k: v for k, v in self._listing_cache.items() if k[0] == key[0]}
            self._listing_cache[key] = tools
        return types.ListToolsResult(tools=list(tools))

    async def _call_tool(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        snapshot = self._registry.snapshot()
        tool = snapshot.get(params.name)
        logger.debug("tool_name=<%s>, generation=<%s> | mcp tools/call", params.name, snapshot.generation)
        result = await ainvoke_nonblocking(
            snapshot, params.name, params.arguments or {}, tool_use_id=new_tool_use_id()
        )
        spec = tool.tool_spec if tool is not None else None
        return to_call_tool_result(result, spec, protocol_version=ctx.protocol_version)

    async def _client_initialized(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.NotificationParams
    ) -> None:
        """Remember a handshake-era session so registry changes reach it outside any request."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        session = ctx.session
        # The connection outlives this per-message session proxy; it tells us when the client is gone.
        connection = getattr(session, "_connection", None)
        key: object = connection if connection is not None else session
        self._legacy_sessions[key] = session
        exit_stack = getattr(connection, "exit_stack", None)
        if exit_stack is not None:
            exit_stack.callback(self._legacy_sessions.pop, key, None)
        logger.debug("sessions=<%d> | handshake-era client initialized", len(self._legacy_sessions))

    # -- change announcements ------------------------------------------------------

    @asynccontextmanager
    async def _lifespan(self, _server: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        """While the server runs, carry registry change sets from the registry's thread onto this loop."""
        loop = asyncio.get_running_loop()
        send, receive = anyio.create_memory_object_stream[RegistryChangeSet](max_buffer_size=math.inf)

        def deliver(change_set: RegistryChangeSet) -> None:
            try:
                send.send_nowait(change_set)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        def listener(change_set: RegistryChangeSet) -> None:
            try:
                loop.call_soon_threadsafe(deliver, change_set)
            except RuntimeError:  # the loop has closed: the server is gone
                pass

        pump = asyncio.create_task(self._pump(receive), name="tool-loader-mcp-announcer")
        unsubscribe = self._registry.subscribe(listener)
        self._running += 1
        try:
            yield {}
        finally:
            self._running -= 1
            unsubscribe()
            send.close()
            pump.cancel()
            await asyncio.wait([pump])  # lets a cancellation of this task itself propagate
            if not self._running:  # the last run ends: close listen streams gracefully
                self._listen.close()

    async def _pump(self, receive: MemoryObjectReceiveStream[RegistryChangeSet]) -> None:
        async with receive:
            async for change_set in receive:
                await self.announce(change_set.generation)

    async def announce(self, generation: int | None = None) -> None:
        """Tell every connected client the tool list changed.

        Called for each registry change set; ``generation`` makes repeated
        calls for one change set (one per running lifespan) announce once.
        """
        if generation is not None:
            with self._announce_lock:
                if generation <= self._announced_generation:
                    return
                self._announced_generation = generation
        await self._bus.publish(ToolsListChanged())
        sessions = list(self._legacy_sessions.values())
        for session in sessions:
            with anyio.move_on_after(NOTIFY_TIMEOUT) as scope:
                try:
                    await session.send_tool_list_changed()
                except Exception:  # one broken session must not starve the others
                    logger.debug("dropped tools/list_changed for a closed session", exc_info=True)
            if scope.cancelled_caught:
                logger.warning(
                    "timeout=<%s> | a client did not take tools/list_changed in time", NOTIFY_TIMEOUT
                )
        logger.debug(
            "generation=<%s>, legacy_sessions=<%d> | announced tools/list_changed", generation, len(sessions)
        )

    # -- status lines -------------------------------------------------------------

    @contextmanager
    def status_reporting(self) -> Iterator[None]:
        """While active, report registry changes and load failures to ``status`` (``run_*`` use it)."""
        if self._status is None:
            yield
            return
        report = self._status

        def on_change(change_set: RegistryChangeSet) -> None:
            report(format_change_set(change_set))

        def on_event(event: LoaderEvent) -> None:
            line = format_loader_event(event)
            if line is not None:
                report(line)

        unsubscribers = [self._registry.subscribe(on_change)]
        if self._loader is not None:
            unsubscribers.append(self._loader.subscribe(on_event))
        try:
            yield
        finally:
            for unsubscribe in unsubscribers:
                unsubscribe()

    # -- transports -----------------------------------------------------------------

    async def run_stdio(self) -> None:
        """Serve one client over stdin/stdout until it disconnects."""
        with self.status_reporting():
            async with stdio_server() as (read_stream, write_stream):
                await self._server.run(
                    read_stream, write_stream, self._server.create_initialization_options()
                )

    def http_app(self, *, host: str = "127.0.0.1", path: str = "/mcp") -> Starlette:
        """The streamable-HTTP ASGI app (DNS-rebinding protection on for loopback hosts)."""
        return self._server.streamable_http_app(streamable_http_path=path, host=host)

    async def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        path: str = "/mcp",
        on_ready: Callable[[str], None] | None = None,
    ) -> None:
        """Serve streamable HTTP at ``http://host:port/path`` until interrupted.

        Args:
            host: The interface to bind; loopback by default, so only this machine can connect.
            port: The port; 0 picks a free one (``on_ready`` receives the URL).
            path: The endpoint path.
            on_ready: Called with the URL once the server accepts connections.
        """
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
        except OSError:
            sock.close()
            raise
        bound_port = sock.getsockname()[1]
        shown_host = f"[{host}]" if family == socket.AF_INET6 else host
        url = f"http://{shown_host}:{bound_port}{path}"
        config = uvicorn.Config(
            self.http_app(host=host, path=path),
            log_level="warning",
            timeout_graceful_shutdown=2,
            lifespan="on",
        )
        server = _ReadyServer(config, on_ready=(lambda: on_ready(url)) if on_ready is not None else None)
        with self.status_reporting():
            try:
                await server.serve(sockets=[sock])
            finally:
                sock.close()


class _ReadyServer(uvicorn.Server):
    """A uvicorn server that says when it accepts connections."""

    def __init__(self, config: uvicorn.Config, *, on_ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._on_ready is not None:
            self._on_ready()
