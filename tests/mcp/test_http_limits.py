"""Clients that send headers and then never the body: cut off, refused beyond a limit, never a frozen server.

A real ``serve --transport http`` subprocess with bearer tokens, raw sockets
sending complete request headers with ``Content-Length: 1000000`` and no body.
"""

from __future__ import annotations

import selectors
import socket
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from serving import DEADLINE, GREET, Served, get, serve_http
from support import eventually, write

TOKEN = "limits-token"

SLOW_BODY = (
    "POST /mcp HTTP/1.1\r\n"
    "Host: 127.0.0.1:{port}\r\n"
    "Content-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\n"
    "{auth}"
    "Content-Length: 1000000\r\n"
    "\r\n"
)


@pytest.fixture
def tokens(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\n")
    return path


def slow_body_request(served: Served, *, token: str | None) -> socket.socket:
    """A connection that has sent complete headers announcing a large body, and nothing of the body."""
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE)
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    sock.sendall(SLOW_BODY.format(port=served.port, auth=auth).encode())
    return sock


def answer_then_close(sock: socket.socket, deadline: float = DEADLINE) -> tuple[bytes, bool]:
    """Everything the server sends until it closes the connection, and whether it did within ``deadline``."""
    sock.settimeout(deadline)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return received, False
    except ConnectionResetError:
        pass
    return received, True


def test_a_request_without_a_token_is_answered_401_from_its_headers_and_closed(
    tools_dir: Path, tmp_path: Path, tokens: Path
) -> None:
    """The body is never waited for; a keep-alive far longer than the deadline shows who closed it."""
    write(tools_dir / "greet.py", GREET)
    with serve_http(
        tools_dir, tmp_path, "--auth-token-file", str(tokens), "--keep-alive-timeout", "600", wait_ready=True
    ) as served:
        with slow_body_request(served, token=None) as sock:
            received, closed = answer_then_close(sock)
        assert received.startswith(b"HTTP/1.1 401 "), received
        assert closed, "the connection of a refused request was kept open, waiting for a body"


def test_a_body_that_never_comes_is_cut_off_after_the_body_timeout(
    tools_dir: Path, tmp_path: Path, tokens: Path
) -> None:
    write(tools_dir / "greet.py", GREET)
    with serve_http(
        tools_dir, tmp_path, "--auth-token-file", str(tokens), "--body-timeout", "1", wait_ready=True
    ) as served:
        with slow_body_request(served, token=TOKEN) as sock:
            received, closed = answer_then_close(sock)
        assert closed, "a request whose body never came was held open"
        assert received.startswith(b"HTTP/1.1 408 "), received
        assert get(served.base + "/healthz").status == 200


def status_of(received: bytes) -> int | None:
    return int(received.split(b" ", 2)[1]) if received.startswith(b"HTTP/1.1 ") else None


def test_a_flood_of_slow_bodies_is_limited_below_the_descriptor_limit_and_the_loader_keeps_working(
    tools_dir: Path, tmp_path: Path, tokens: Path
) -> None:
    """With 256 descriptors allowed, 300 held connections: the ones over the limit are refused at once (503),
    the loader can still open the files it reloads, and the held ones are cut off by the body timeout."""
    write(tools_dir / "greet.py", GREET)
    flood = 300
    with serve_http(
        tools_dir,
        tmp_path,
        "--auth-token-file",
        str(tokens),
        "--body-timeout",
        "8",
        wait_ready=True,
        max_open_files=256,
    ) as served:
        sockets = [slow_body_request(served, token=TOKEN) for _ in range(flood)]
        try:
            write(tools_dir / "late.py", GREET.replace("greet", "late"))
            eventually(
                lambda: any("+late" in line for line in served.lines),
                timeout=DEADLINE,
                message="a tool saved during the flood never went live",
            )
            answers = gather_answers(sockets, DEADLINE)
        finally:
            for sock in sockets:
                sock.close()
        statuses = [status_of(received) for received, _ in answers]
        assert all(closed for _, closed in answers), "a connection was still held after the body timeout"
        refused = statuses.count(503)
        timed_out = statuses.count(408)
        assert refused + timed_out == flood, statuses
        assert refused >= flood - 256 and timed_out > 0, (refused, timed_out)
        assert get(served.base + "/healthz").status == 200
    assert not any("Too many open files" in line for line in served.lines), served.lines[-5:]


def gather_answers(sockets: list[socket.socket], deadline: float) -> list[tuple[bytes, bool]]:
    """Read every socket until its server closes it, all at once (one selector), within ``deadline``."""
    received: dict[socket.socket, bytes] = {sock: b"" for sock in sockets}
    closed: set[socket.socket] = set()
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, sock)
        ends = time.monotonic() + deadline
        while len(closed) < len(sockets) and (left := ends - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                sock = key.data
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    received[sock] += chunk
                else:
                    closed.add(sock)
                    selector.unregister(sock)
    return [(received[sock], sock in closed) for sock in sockets]


async def _greet_with(served: Served, token: str) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(served.url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, mode="legacy") as client:
        result = await client.call_tool("greet", {"name": "ada"})
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def test_idle_connections_without_a_token_starve_neither_the_probes_nor_calls(
    tools_dir: Path, tmp_path: Path, tokens: Path
) -> None:
    """More idle connections than the cap, never sending a byte, held longer than the test.

    They took every slot, so ``/readyz`` was answered 503 for as long as they were
    held (an orchestrator restarts the replica) and calls were refused. The
    connection that has been idle the longest now gives its slot to a new one.
    """
    write(tools_dir / "greet.py", GREET)
    cap = 40
    with serve_http(
        tools_dir,
        tmp_path,
        "--auth-token-file",
        str(tokens),
        "--max-connections",
        str(cap),
        "--header-timeout",
        "600",
        wait_ready=True,
    ) as served:
        idle = [
            socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE) for _ in range(cap + 20)
        ]
        try:
            # One probe may come in the same pass of accept() as the flood and be refused; the next is not.
            eventually(lambda: get(served.base + "/readyz").status == 200, message="/readyz was never 200")
            assert get(served.base + "/healthz").status == 200
            assert anyio.run(_greet_with, served, TOKEN) == "hello ada"
        finally:
            for sock in idle:
                sock.close()
