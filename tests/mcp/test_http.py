"""The HTTP transport as a fleet sees it: probes, metrics, bearer tokens, timeouts, idle sessions, stateless mode.

Every test runs ``tool-loader serve --transport http`` as a real subprocess on
loopback and talks to it with real HTTP (the stdlib, raw sockets, and the MCP
SDK's own client).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from prometheus_client.parser import text_string_to_metric_families
from serving import DEADLINE, GREET, INITIALIZE, Served, get, post_json, serve_http
from support import write

from loader.console.cli import main
from loader.mcp import FINGERPRINT_META_KEY

pytestmark = pytest.mark.anyio


ECHO = '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''


@pytest.fixture
def served_dir(tools_dir: Path) -> Path:
    write(tools_dir / "greet.py", GREET)
    write(tools_dir / "echo.py", ECHO)
    return tools_dir


async def until(predicate: Callable[[], Any], timeout: float = DEADLINE) -> Any:
    with anyio.fail_after(timeout):
        while not (value := predicate()):
            await anyio.sleep(0.02)
    return value


def authorised(url: str, token: str) -> Any:
    return streamable_http_client(
        url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    )


# -- probes ------------------------------------------------------------------------


async def test_readyz_is_503_until_the_initial_scan_finished(served_dir: Path, tmp_path: Path) -> None:
    flag = tmp_path / "go.flag"
    write(
        served_dir / "slow.py",
        f'''
import pathlib, time
from loader import tool

deadline = time.monotonic() + 8
while not pathlib.Path({str(flag)!r}).exists() and time.monotonic() < deadline:
    time.sleep(0.01)

@tool
def slow() -> str:
    """Loaded after a long import."""
    return "late"
''',
    )
    with serve_http(served_dir, tmp_path) as served:
        assert get(served.base + "/healthz").status == 200
        waiting = get(served.base + "/readyz")
        assert waiting.status == 503
        assert waiting.json()["ready"] is False
        flag.write_text("go")
        ready = await until(lambda: (answer := get(served.base + "/readyz")).status == 200 and answer)
        body = ready.json()
        assert body["ready"] is True
        assert (body["tools"], body["failed_files"]) == (3, 0)
        assert isinstance(body["generation"], int) and body["generation"] >= 1
        async with Client(served.url, mode="legacy") as client:
            listed = await client.list_tools()
        assert listed.meta is not None and listed.meta[FINGERPRINT_META_KEY] == body["fingerprint"]
        await until(lambda: any(line.startswith("serving 3 tools at ") for line in served.lines))


async def test_ready_requires_clean_stays_503_while_a_file_fails(served_dir: Path, tmp_path: Path) -> None:
    write(served_dir / "broken.py", "def broken(:\n")
    with serve_http(served_dir, tmp_path, "--ready-requires-clean", wait_ready=True) as served:
        answer = get(served.base + "/readyz")
        assert answer.status == 503
        assert answer.json()["failed_files"] == 1 and answer.json()["tools"] == 2
        write(served_dir / "broken.py", ECHO.replace("echo", "echo2"))
        fixed = await until(lambda: (answer := get(served.base + "/readyz")).status == 200 and answer)
        assert fixed.json()["failed_files"] == 0 and fixed.json()["tools"] == 3
    with serve_http(served_dir, tmp_path, wait_ready=True) as served:
        write(served_dir / "broken.py", "def broken(:\n")
        await until(lambda: get(served.base + "/readyz").json()["failed_files"] == 1)
        assert get(served.base + "/readyz").status == 200  # without the flag a failed file is not fatal


async def test_metrics_parse_with_prometheus_client(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, wait_ready=True) as served:
        async with Client(served.url, mode="legacy") as client:
            meta = (await client.list_tools()).meta
            assert meta is not None
            fingerprint = meta[FINGERPRINT_META_KEY]
            assert not (await client.call_tool("greet", {"name": "ada"})).is_error
            assert (await client.call_tool("greet", {"nom": "ada"})).is_error
            assert (await client.call_tool("nope", {})).is_error
        write(served_dir / "broken.py", "def broken(:\n")
        await until(lambda: get(served.base + "/readyz").json()["failed_files"] == 1)
        answer = get(served.base + "/metrics")
        assert answer.status == 200 and answer.headers["content-type"].startswith("text/plain")
        # The failed file shows at once; its event's counters follow (a subscriber of the loader's events),
        # the duration histogram last.
        samples = await until(lambda: (found := _samples(served.base)).get(_RELOADS_COUNT, 0) >= 3 and found)
    assert samples[("tool_loader_tools_loaded", ())] == 2
    assert samples[("tool_loader_files", (("state", "loaded"),))] == 2
    assert samples[("tool_loader_files", (("state", "failed"),))] == 1
    assert samples[("tool_loader_calls_total", (("outcome", "success"), ("tool", "greet")))] == 1
    assert samples[("tool_loader_calls_total", (("outcome", "error"), ("tool", "greet")))] == 1
    assert samples[("tool_loader_calls_total", (("outcome", "unknown_tool"), ("tool", "(unknown)")))] == 1
    assert samples[("tool_loader_call_duration_seconds_count", (("tool", "greet"),))] == 2
    assert samples[("tool_loader_reloads_total", (("outcome", "failed"),))] == 1
    assert samples[("tool_loader_load_failures_total", (("kind", "failed"),))] == 1
    assert samples[("tool_loader_reload_duration_seconds_count", ())] >= 3
    assert samples[("tool_loader_tool_set_info", (("fingerprint", fingerprint),))] == 1


_RELOADS_COUNT = ("tool_loader_reload_duration_seconds_count", ())


def _samples(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``/metrics``, parsed by the Prometheus client: each sample's value by name and labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(get(base + "/metrics").body.decode())
        for sample in family.samples
    }


# -- authentication ------------------------------------------------------------------


async def test_bearer_tokens_guard_mcp_and_rotate_with_the_file(served_dir: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# fleet tokens\nfirst-token\n")
    with serve_http(served_dir, tmp_path, "--auth-token-file", str(tokens), wait_ready=True) as served:
        refused = post_json(served.url, INITIALIZE)
        assert refused.status == 401
        assert refused.headers["www-authenticate"].startswith("Bearer ")
        assert post_json(served.url, INITIALIZE, {"Authorization": "Bearer wrong"}).status == 401
        assert get(served.base + "/healthz").status == 200
        assert get(served.base + "/readyz").status == 200
        assert (
            get(served.base + "/metrics").status == 401
        )  # follows the MCP path: tool names are no one's business
        assert get(served.base + "/metrics", {"Authorization": "Bearer first-token"}).status == 200
        async with Client(authorised(served.url, "first-token"), mode="legacy") as client:
            assert (await client.call_tool("greet", {"name": "ada"})).content == [
                types.TextContent(type="text", text="hello ada")
            ]
        tokens.write_text("second-token\n")
        await until(
            lambda: post_json(served.url, INITIALIZE, {"Authorization": "Bearer first-token"}).status == 401
        )
        async with Client(authorised(served.url, "second-token"), mode="legacy") as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["echo", "greet"]
        tokens.write_text("# all revoked\n")  # revocation fails closed: the last token is refused
        assert post_json(served.url, INITIALIZE, {"Authorization": "Bearer second-token"}).status == 401
        await until(lambda: any("no bearer token is accepted" in line for line in served.lines))


async def test_metrics_auth_flag_guards_metrics(served_dir: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("scrape-token\n")
    env_extra = {"TOOL_LOADER_AUTH_TOKEN_FILE": str(tokens)}
    from serving import server_env

    with serve_http(
        served_dir, tmp_path, "--metrics-auth", env=server_env(**env_extra), wait_ready=True
    ) as served:
        assert get(served.base + "/metrics").status == 401
        assert get(served.base + "/metrics", {"Authorization": "Bearer scrape-token"}).status == 200
        assert get(served.base + "/healthz").status == 200


async def test_no_metrics_auth_keeps_metrics_open_beside_guarded_mcp(
    served_dir: Path, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("only-token\n")
    with serve_http(
        served_dir, tmp_path, "--auth-token-file", str(tokens), "--no-metrics-auth", wait_ready=True
    ) as served:
        assert get(served.base + "/metrics").status == 200
        assert post_json(served.url, INITIALIZE).status == 401


def test_a_non_loopback_host_without_auth_is_refused(
    served_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOL_LOADER_AUTH_TOKEN_FILE", raising=False)
    assert main(["serve", str(served_dir), "--transport", "http", "--host", "0.0.0.0"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--host 0.0.0.0 is reachable from other machines" in err
    assert "--auth-token-file" in err


def test_metrics_auth_without_tokens_is_a_usage_error(
    served_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOL_LOADER_AUTH_TOKEN_FILE", raising=False)
    assert main(["serve", str(served_dir), "--transport", "http", "--metrics-auth"]) == 2
    assert "--metrics-auth needs tokens" in " ".join(capsys.readouterr().err.split())


def test_an_empty_token_file_is_a_usage_error(
    served_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("\n# nothing\n")
    assert main(["serve", str(served_dir), "--transport", "http", "--auth-token-file", str(tokens)]) == 2
    assert "holds no token" in " ".join(capsys.readouterr().err.split())


# -- timeouts and sessions -------------------------------------------------------------


def closed_by_server(sock: socket.socket) -> bool:
    """Read until the server closes the connection (True) or the deadline passes (False)."""
    sock.settimeout(DEADLINE)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    return True


def test_half_sent_request_headers_are_cut_off(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, "--header-timeout", "0.5", wait_ready=True) as served:
        with socket.create_connection(("127.0.0.1", served.port)) as silent:
            assert closed_by_server(silent)
        with socket.create_connection(("127.0.0.1", served.port)) as slow:
            slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert closed_by_server(slow)
        assert get(served.base + "/healthz").status == 200


def test_idle_keep_alive_connections_are_closed(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, "--keep-alive-timeout", "1", wait_ready=True) as served:
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode())
            sock.settimeout(DEADLINE)
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
            assert closed_by_server(sock)


async def test_idle_handshake_sessions_expire(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(
        served_dir, tmp_path, "--session-idle-timeout", "1", wait_ready=True, verbose=True
    ) as served:
        opened = post_json(served.url, INITIALIZE)
        assert opened.status == 200
        session = opened.headers["mcp-session-id"]
        # Any request on the session pushes its deadline back, so wait for the server's word, not by polling it.
        await until(lambda: any(f"Session {session} idle timeout" in line for line in served.lines))
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        answer = post_json(
            served.url, ping, {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        )
        assert answer.status == 404
        assert b"Session not found" in answer.body


async def test_stateless_mode_keeps_no_sessions(served_dir: Path, tmp_path: Path) -> None:
    with serve_http(served_dir, tmp_path, "--stateless", wait_ready=True, verbose=2) as served:
        opened = post_json(served.url, INITIALIZE)
        assert opened.status == 200
        assert "mcp-session-id" not in opened.headers
        for mode in ("legacy", "auto"):
            async with Client(served.url, mode=mode) as client:
                result = await client.call_tool("echo", {"text": "hi"})
                assert result.content == [types.TextContent(type="text", text="hi")]
    assert not any("handshake-era client initialized" in line for line in served.lines)


def handshake_sessions(served: Served) -> float:
    body = get(served.base + "/metrics").body.decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == "tool_loader_handshake_sessions"
    )


async def test_expired_handshake_sessions_are_let_go_without_a_tool_change(
    served_dir: Path, tmp_path: Path
) -> None:
    """The server's own list of sessions to notify kept every expired one (and its memory) until the next
    change was announced: on a stable fleet, forever."""
    with serve_http(
        served_dir, tmp_path, "--session-idle-timeout", "1", wait_ready=True, verbose=1
    ) as served:
        for _ in range(20):
            opened = post_json(served.url, INITIALIZE)
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            assert (
                post_json(
                    served.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session
                ).status
                == 202
            )
        await until(lambda: handshake_sessions(served) == 20)
        await until(lambda: sum(" idle timeout" in line for line in served.lines) == 20)
        await until(lambda: handshake_sessions(served) == 0)


# -- results over the SDK client's 1 MiB event cap ---------------------------------------------------


async def test_json_response_carries_a_result_over_the_sse_event_cap(
    served_dir: Path, tmp_path: Path
) -> None:
    big = "x" * (2 * 1024 * 1024)
    with serve_http(served_dir, tmp_path, wait_ready=True) as served:
        async with Client(served.url, mode="legacy") as client:
            # The SDK client reads one server-sent event of at most 1 MiB: the default stream fails. The SDK
            # says so in one of two ways (mcp 2.3 names the cap when its event parser is the one to notice).
            failed = (
                r"SSE stream (ended without a response|failed: Server-sent event exceeded the \d+ byte limit)"
            )
            with pytest.raises(Exception, match=failed):
                await client.call_tool("echo", {"text": big})
        async with Client(served.url) as client:  # the newer revision answers in one body already
            result = await client.call_tool("echo", {"text": big})
            assert result.content == [types.TextContent(type="text", text=big)]
    with serve_http(served_dir, tmp_path, "--json-response", wait_ready=True) as served:
        async with Client(served.url, mode="legacy") as client:
            result = await client.call_tool("echo", {"text": big})
            assert not result.is_error
            assert result.content == [types.TextContent(type="text", text=big)]
