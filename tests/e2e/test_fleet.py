"""A fleet on loopback: one git repository, three ``serve`` replicas fed git-sync style, HAProxy in front.

The official MCP client talks to the balancer (round robin, no affinity,
``--stateless`` replicas). A tool change is committed and synced to the
replicas one after another while calls keep flowing through the balancer:
every call must succeed and answer from the old or the new tool set (told by
the fingerprint in the result's ``_meta``), every replica must report the new
fingerprint, and a client listening through the balancer must hear of the
change. Skipped when ``haproxy`` is not installed (``.ci/run`` installs it).
Deselect with ``-m "not fleet"``.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
import support
from gitsync import ConfigMapSync, CopySync, GitSync, Publisher, git
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families
from serving import Served, get, serve_http
from support import require, text_of

from loader.fingerprint import tool_set_fingerprint
from loader.mcp import FINGERPRINT_META_KEY
from loader.registry.tool_registry import ToolRegistry
from loader.reload.loader import ToolLoader

pytestmark = [pytest.mark.anyio, pytest.mark.fleet]

HAPROXY_INSTALL = "apt-get install haproxy (.ci/run installs it)"

REPLICAS = 3
CONVERGENCE_DEADLINE = 20.0

TOOL = '''
from loader import tool

@tool
def version(caller: str) -> str:
    """Say which version of the tool answered."""
    return "{version}:" + caller
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


RETRY_REFUSED = """    option http-buffer-request
    retry-on conn-failure 503
    retries 3
    option redispatch 1
"""
"""Resend a request a replica refused before running anything (a drain's 503, a closed port) to another one."""


@contextmanager
def haproxy(backends: list[int], tmp_path: Path, *, backend_options: str = "") -> Iterator[str]:
    """HAProxy on loopback, round robin over ``backends`` (health-checked on /readyz); yields the MCP URL."""
    binary = shutil.which("haproxy")
    require(binary is not None, "haproxy is not on PATH", HAPROXY_INSTALL)
    assert binary is not None
    port = free_port()
    servers = "\n".join(
        f"    server r{index} 127.0.0.1:{backend} check inter 500ms fall 2 rise 1"
        for index, backend in enumerate(backends)
    )
    config = tmp_path / "haproxy.cfg"
    config.write_text(
        f"""global
    maxconn 512

defaults
    mode http
    option http-server-close
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout http-request 10s

frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
{backend_options}{servers}
"""
    )
    check = subprocess.run([binary, "-c", "-f", str(config)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    process = subprocess.Popen(
        [binary, "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + CONVERGENCE_DEADLINE
        while not (_listening(port) and get(f"http://127.0.0.1:{port}/readyz", timeout=2).status == 200):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "haproxy did not come up"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class Roll:
    """What the callers saw while the replicas were synced."""

    answers: list[tuple[str, str]] = field(default_factory=list)  # (fingerprint, text)
    failures: list[str] = field(default_factory=list)


async def ready_fingerprint(served: Served) -> str:
    answer = await anyio.to_thread.run_sync(get, served.base + "/readyz")
    assert answer.status == 200, answer.body
    return str(answer.json()["fingerprint"])


def call_counts(served: Served) -> float:
    body = get(served.base + "/metrics").body.decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == "tool_loader_calls_total"
    )


def fingerprint_of(source: str, folder: Path) -> str:
    """The fingerprint an in-process loader gives ``source`` in a plain folder (no git, no symlink)."""
    folder.mkdir(parents=True)
    (folder / "version.py").write_text(source)
    loader = ToolLoader([folder])
    try:
        loader.scan()
        return loader.fingerprint()
    finally:
        loader.close()


EMPTY_TOOL_SET = tool_set_fingerprint(ToolRegistry().snapshot())


async def wait_for_fingerprint(replica: Served, wanted: str, seen: set[str]) -> float | None:
    """Seconds until ``replica`` reports ``wanted``; None after the deadline or once it lost every tool.

    The roll only changes a tool, so an empty tool set is never a valid state: no need to wait on.
    """
    started = time.monotonic()
    with anyio.move_on_after(CONVERGENCE_DEADLINE):
        while (fingerprint := await ready_fingerprint(replica)) != wanted:
            seen.add(fingerprint)
            if fingerprint == EMPTY_TOOL_SET:
                return None
            await anyio.sleep(0.005)
        return time.monotonic() - started
    return None


PUBLISHERS: dict[str, Callable[[Path, Path], Publisher]] = {
    "git-sync": GitSync,
    "configmap": ConfigMapSync,
    "copy": CopySync,
}


@pytest.mark.parametrize("delivery", list(PUBLISHERS))
async def test_a_tool_change_rolls_through_the_fleet(
    delivery: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``git-sync``: each replica watches the flipped symlink; ``configmap``: the kubelet's ``..data`` swap;
    ``copy``: a plain folder, files renamed in."""
    require(shutil.which("haproxy") is not None, "haproxy is not on PATH", HAPROXY_INSTALL)
    v1, v2 = TOOL.format(version="v1"), TOOL.format(version="v2")
    expected = {
        fingerprint_of(v1, tmp_path / "plain-v1"): "v1",
        fingerprint_of(v2, tmp_path / "plain-v2"): "v2",
    }
    old_fingerprint, new_fingerprint = list(expected)
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "version.py").write_text(v1)
    git(origin, "add", "version.py")
    git(origin, "commit", "--quiet", "-m", "v1")
    publisher = PUBLISHERS[delivery]
    syncs = [publisher(origin, tmp_path / f"replica-{index}") for index in range(REPLICAS)]
    for sync in syncs:
        sync.sync()

    roll = Roll()
    convergence: list[float | None] = []
    seen: set[str] = set()
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(serve_http(sync.link, tmp_path, "--stateless", wait_ready=True))
            for sync in syncs
        ]
        balancer = stack.enter_context(haproxy([replica.port for replica in replicas], tmp_path))
        # Identical files, three processes and a fourth in this one: one fingerprint.
        assert [await ready_fingerprint(replica) for replica in replicas] == [old_fingerprint] * REPLICAS

        heard = anyio.Event()
        rolled = anyio.Event()
        async with (
            Client(balancer) as caller,
            Client(balancer) as listener,
            listener.listen(tools_list_changed=True) as subscription,
        ):
            assert caller.protocol_version == "2026-07-28"
            listed = await caller.list_tools()
            assert listed.meta is not None and listed.meta[FINGERPRINT_META_KEY] == old_fingerprint

            async def hear() -> None:
                async for _ in subscription:
                    heard.set()

            async def call_until_rolled() -> None:
                count = 0
                while not rolled.is_set():
                    count += 1
                    try:
                        result = await caller.call_tool("version", {"caller": str(count)})
                    except Exception as exc:  # a failed call is a finding, not a crash of the test
                        roll.failures.append(f"call {count}: {type(exc).__name__}: {exc}")
                        continue
                    if result.is_error or result.meta is None:
                        roll.failures.append(f"call {count}: {text_of(result)}")
                        continue
                    roll.answers.append((str(result.meta[FINGERPRINT_META_KEY]), text_of(result)))

            async with anyio.create_task_group() as group:
                group.start_soon(hear)
                group.start_soon(call_until_rolled)
                (origin / "version.py").write_text(v2)
                git(origin, "commit", "--quiet", "-am", "v2")
                for sync, replica in zip(syncs, replicas, strict=True):
                    await anyio.to_thread.run_sync(sync.sync)
                    convergence.append(await wait_for_fingerprint(replica, new_fingerprint, seen))
                    if convergence[-1] is None:
                        break
                if None not in convergence:
                    with anyio.move_on_after(CONVERGENCE_DEADLINE):
                        await heard.wait()
                rolled.set()
                group.cancel_scope.cancel()
            after = []
            if None not in convergence:
                for count in range(3 * REPLICAS):
                    result = await caller.call_tool("version", {"caller": f"after-{count}"})
                    assert result.meta is not None
                    after.append((str(result.meta[FINGERPRINT_META_KEY]), text_of(result)))
        served = [call_counts(replica) for replica in replicas]

    figures = ", ".join("never" if s is None else f"{s * 1000:.0f} ms" for s in convergence)
    with capsys.disabled():
        print(
            f"\nfleet ({delivery}): convergence after each replica's sync: {figures}; "
            f"{len(roll.answers)} calls answered during the roll, {len(roll.failures)} failed; "
            f"calls per replica {[int(count) for count in served]}"
        )
    assert None not in convergence, f"a replica never reported the new fingerprint (saw {seen})"
    assert roll.failures == []
    assert heard.is_set(), "the client listening through the balancer never heard of the change"
    for fingerprint, text in roll.answers:
        assert fingerprint in expected, f"{fingerprint} is neither the old nor the new tool set"
        assert text.startswith(expected[fingerprint] + ":"), (fingerprint, text)
    assert roll.answers, "no call was answered during the roll"
    assert after == [(new_fingerprint, f"v2:after-{count}") for count in range(3 * REPLICAS)]
    assert all(count > 0 for count in served), f"round robin without affinity reaches every replica: {served}"


SLOW = '''
import time
from loader import tool

@tool
def slow(caller: str) -> str:
    """Take longer than uvicorn's own shutdown waits, so that calls are in flight on every replica."""
    time.sleep(3.0)
    return "done:" + caller
'''

CALLERS = 4


async def test_a_rolling_restart_loses_no_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A replica gets SIGTERM with calls in flight and is started again on its port, as a Deployment's
    rolling update does, while callers keep calling through the balancer: every call is answered.

    The balancer resends what a draining replica refused (503, nothing ran) or a stopped one could not take
    (connection refused), as Kubernetes' preStop pause does by keeping traffic away until the endpoint is gone.
    """
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not on PATH (apt-get install haproxy; .ci/run installs it)")
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "slow.py").write_text(SLOW)
    answered: list[str] = []
    failures: list[str] = []
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(serve_http(folder, tmp_path, "--stateless", wait_ready=True))
            for _ in range(REPLICAS)
        ]
        balancer = stack.enter_context(
            haproxy([replica.port for replica in replicas], tmp_path, backend_options=RETRY_REFUSED)
        )
        rolled = anyio.Event()

        async def keep_calling(caller: int) -> None:
            async with Client(balancer) as client:
                count = 0
                while not rolled.is_set():
                    count += 1
                    name = f"{caller}.{count}"
                    try:
                        with anyio.fail_after(CONVERGENCE_DEADLINE):
                            result = await client.call_tool("slow", {"caller": name})
                    except Exception as exc:  # a lost call is a finding, not a crash of the test
                        failures.append(f"{name}: {type(exc).__name__}: {exc}")
                        continue
                    text = text_of(result) if result.content else "(empty)"
                    if result.is_error or text != f"done:{name}":
                        failures.append(f"{name}: {text}")
                    else:
                        answered.append(name)

        async with anyio.create_task_group() as group:
            for caller in range(CALLERS):
                group.start_soon(keep_calling, caller)
            restarted = replicas[0]
            await anyio.to_thread.run_sync(
                support.eventually,
                lambda: gauge(restarted, "tool_loader_calls_in_flight") > 0,
                CONVERGENCE_DEADLINE,
            )
            drained = await anyio.to_thread.run_sync(terminate, restarted)
            replacement = stack.enter_context(
                serve_http(folder, tmp_path, "--stateless", "--port", str(restarted.port), wait_ready=True)
            )
            await anyio.to_thread.run_sync(
                support.eventually, lambda: call_counts(replacement) > 0, CONVERGENCE_DEADLINE
            )
            rolled.set()

    with capsys.disabled():
        print(
            f"\nrolling restart: {len(answered)} calls answered, {len(failures)} lost; "
            f"SIGTERM to exit of the replica with calls in flight: {drained:.2f} s"
        )
    assert failures == []
    assert any("calls in flight get up to" in line for line in restarted.lines), restarted.lines
    assert len(answered) >= CALLERS


def gauge(served: Served, name: str) -> float:
    body = get(served.base + "/metrics").body.decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == name
    )


def terminate(replica: Served) -> float:
    """SIGTERM, then the seconds until the process exited; it must exit 0 (drained, not killed)."""
    started = time.monotonic()
    replica.process.send_signal(signal.SIGTERM)
    status = replica.process.wait(CONVERGENCE_DEADLINE + 30)
    assert status == 0, (status, replica.lines[-10:])
    return time.monotonic() - started
