"""Serving the registry over the Model Context Protocol (the ``mcp`` extra).

``server`` holds ``MCPToolServer``; ``wire`` maps tool specs and results to
MCP objects; ``transports`` runs stdio and streamable HTTP (with probes,
auth and timeouts); ``metrics`` the Prometheus metrics (the ``metrics`` extra).
"""

from __future__ import annotations

from ..distribution import missing_extra

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "the MCP SDK", "mcp", exc) from exc

from .auth import TokenFileError, TokenFileVerifier
from .probes import Readiness, ReadyReport
from .server import CallOutcome, CallRecord, MCPToolServer
from .transports import HttpOptions, InsecureBindError, http_app, serve_http, serve_stdio
from .wire import FINGERPRINT_META_KEY, to_call_tool_result, to_mcp_tool

__all__ = [
    "FINGERPRINT_META_KEY",
    "CallOutcome",
    "CallRecord",
    "HttpOptions",
    "InsecureBindError",
    "MCPToolServer",
    "Readiness",
    "ReadyReport",
    "TokenFileError",
    "TokenFileVerifier",
    "http_app",
    "serve_http",
    "serve_stdio",
    "to_call_tool_result",
    "to_mcp_tool",
]
