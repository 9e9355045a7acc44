"""The HTTP transport as an OAuth resource server, through the MCP SDK's own auth pieces.

``HttpOptions(token_verifier=..., auth=AuthSettings(...))`` is how an
organisation plugs in its identity provider; here a verifier stands in for
the provider's introspection endpoint. The server runs in this process on a
real loopback socket.
"""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import AnyHttpUrl
from serving import GREET, INITIALIZE, get, post_json
from support import FAST, write

from loader.mcp import HttpOptions, MCPToolServer, serve_http
from loader.reload.loader import ToolLoader

pytestmark = pytest.mark.anyio

ISSUER = "https://idp.example.invalid"


class IntrospectionStandIn:
    """What an identity provider's introspection would say about three tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if token == "scoped":
            return AccessToken(token=token, client_id="agent", scopes=["tools"])
        if token == "unscoped":
            return AccessToken(token=token, client_id="agent", scopes=[])
        return None


async def test_an_oauth_resource_server_checks_tokens_and_scopes_and_publishes_its_metadata(
    tools_dir: Path,
) -> None:
    write(tools_dir / "greet.py", GREET)
    loader = ToolLoader([tools_dir], config=FAST)
    loader.scan()
    server = MCPToolServer(loader.registry, loader=loader)
    options = HttpOptions(
        port=0,
        token_verifier=IntrospectionStandIn(),
        auth=AuthSettings(
            issuer_url=ISSUER,  # type: ignore[arg-type]  # pydantic validates; a str keeps the exact form
            resource_server_url=AnyHttpUrl("http://127.0.0.1/mcp"),
            required_scopes=["tools"],
        ),
    )
    listening: list[str] = []
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(serve_http, server, options, on_ready=listening.append))
            with anyio.fail_after(20):
                while not listening:
                    await anyio.sleep(0.01)
            url = listening[0]
            base = url.rsplit("/", 1)[0]

            refused = await anyio.to_thread.run_sync(post_json, url, INITIALIZE)
            assert refused.status == 401
            challenge = refused.headers["www-authenticate"]
            assert (
                'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"' in challenge
            )
            unscoped = await anyio.to_thread.run_sync(
                post_json, url, INITIALIZE, {"Authorization": "Bearer unscoped"}
            )
            assert unscoped.status == 403
            metadata = await anyio.to_thread.run_sync(get, base + "/.well-known/oauth-protected-resource/mcp")
            assert metadata.status == 200
            assert metadata.json()["authorization_servers"] == [ISSUER]
            assert metadata.json()["scopes_supported"] == ["tools"]

            http = create_mcp_http_client(headers={"Authorization": "Bearer scoped"})
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                assert [tool.name for tool in (await client.list_tools()).tools] == ["greet"]
            group.cancel_scope.cancel()
    finally:
        loader.close()
