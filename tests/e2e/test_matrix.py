"""The matrix: every feature, in every isolation mode, through every way in.

Ways in: the Python API (``ToolLoader``, called as an agent calls: ``ainvoke``),
MCP over stdio and MCP over streamable HTTP (``tool-loader serve``, driven by
the real MCP SDK client), and ``tool-loader call`` (the real command, one
process per call). One server per mode and transport serves this whole module
(each feature writes files of its own into the server's folder); the API loader
is shared the same way.

Features: the contract (a save goes live, a broken save keeps the last good
version, a delete removes, a helper's change reloads its dependents), the
gate, history, the call limits (timeout, per-tool concurrency) and containment
(``SystemExit``, ``KeyboardInterrupt``, a crash). A one-shot ``call`` serves
nothing afterwards, so where a feature is about what keeps serving, its cell
checks what the command does instead (names the broken file, records nothing,
runs its one call).

A new isolation mode is one more entry in ``MODES`` (and, if it contains a
tool's crash, in ``CONTAINS_CRASHES``).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from serving import INITIALIZE, post_json, serve_http, server_env, stdio_params
from support import FAST, eventually, run_cli, write

from loader.history.recorder import HistoryRecorder
from loader.history.store import HistoryStore, database_path
from loader.isolation import SandboxOptions
from loader.reload.loader import ToolLoader

MODES = ["thread", "process", "sandbox"]
"""Every isolation mode; a new one is added here."""
CONTAINS_CRASHES = {"process", "sandbox"}
"""The modes in which a tool that kills its process harms only its own call."""
WAYS = ["api", "stdio", "http", "cli"]

CALL_TIMEOUT = 3.0
PER_TOOL = 2
LIMITS = ["--gate", "--example-timeout", "2", "--call-timeout", "3", "--max-concurrent-per-tool", "2"]
DEADLINE = 30.0


@dataclass(frozen=True)
class Answer:
    """What a call came back with, whichever way it went."""

    text: str
    error: bool


class Way(Protocol):
    """One way into the tools, in one mode."""

    folder: Path
    state: Path
    serving: bool
    """Whether it keeps serving between calls (a one-shot command does not)."""

    def call(self, name: str, args: dict[str, Any] | None = None) -> Answer: ...

    def calls(self, name: str, args: list[dict[str, Any]]) -> list[Answer]: ...

    def close(self) -> None: ...


def _mode_args(mode: str, state: Path) -> list[str]:
    """``--isolation MODE``; in the sandbox, the state folder (where tools leave their marks) writable."""
    return ["--isolation", mode, *(["--sandbox-allow-write", str(state)] if mode == "sandbox" else [])]


# -- the ways in ---------------------------------------------------------------------------------
class ApiWay:
    """``ToolLoader`` with the same limits as the servers, called as an agent would (``ainvoke``)."""

    serving = True

    def __init__(self, folder: Path, state: Path, mode: str) -> None:
        self.folder, self.state = folder, state
        config = replace(
            FAST,
            isolation=cast(Literal["thread", "process", "sandbox"], mode),
            gate=True,
            example_timeout=2.0,
            call_timeout=CALL_TIMEOUT,
            max_concurrent_calls_per_tool=PER_TOOL,
            sandbox=SandboxOptions(allow_write=(state,)),
        )
        self.loader = ToolLoader([folder], config=config)
        self.loader.register_plugin(HistoryRecorder(state), name="tool-loader-history")
        self.loader.scan()
        self.loader.start()

    def call(self, name: str, args: dict[str, Any] | None = None) -> Answer:
        return self.calls(name, [args or {}])[0]

    def calls(self, name: str, args: list[dict[str, Any]]) -> list[Answer]:
        async def all_at_once() -> list[Any]:
            return list(await asyncio.gather(*(self.loader.registry.ainvoke(name, a) for a in args)))

        return [_answer_of_result(r) for r in asyncio.run(all_at_once())]

    def close(self) -> None:
        self.loader.close()


def _answer_of_result(result: Any) -> Answer:
    block = result["content"][0]
    return Answer(str(block.get("text", json.dumps(block.get("json")))), result["status"] == "error")


class McpWay:
    """An MCP SDK client session kept open on a thread of its own, to a ``serve`` process."""

    serving = True

    def __init__(self, folder: Path, state: Path, connect: Callable[[], Any]) -> None:
        self.folder, self.state = folder, state
        self._loop = asyncio.new_event_loop()
        self._ready: Future[Client] = Future()
        self._done = asyncio.Event()
        self._thread = threading.Thread(target=self._run, args=(connect,), daemon=True)
        self._thread.start()
        self._client = self._ready.result(DEADLINE)

    def _run(self, connect: Callable[[], Any]) -> None:
        async def session() -> None:
            try:
                async with Client(connect(), mode="legacy") as client:
                    self._ready.set_result(client)
                    await self._done.wait()
            except BaseException as exc:
                if not self._ready.done():
                    self._ready.set_exception(exc)

        self._loop.run_until_complete(session())

    def _await(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(DEADLINE)

    def call(self, name: str, args: dict[str, Any] | None = None) -> Answer:
        return self.calls(name, [args or {}])[0]

    def calls(self, name: str, args: list[dict[str, Any]]) -> list[Answer]:
        async def all_at_once() -> list[types.CallToolResult]:
            return list(await asyncio.gather(*(self._client.call_tool(name, a) for a in args)))

        return [_answer_of_mcp(r) for r in self._await(all_at_once())]

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._done.set)
        self._thread.join(DEADLINE)


def _answer_of_mcp(result: types.CallToolResult) -> Answer:
    block = result.content[0]
    text = block.text if isinstance(block, types.TextContent) else repr(block)
    return Answer(text, result.is_error is True)


class StdioWay(McpWay):
    """``tool-loader serve`` over stdio."""

    def __init__(self, folder: Path, state: Path, mode: str) -> None:
        self.errlog = (state / "stderr.log").open("w")
        params = stdio_params(
            "serve",
            str(folder),
            *_mode_args(mode, state),
            "--state-dir",
            str(state),
            *LIMITS,
            cwd=folder.parent,
        )
        super().__init__(folder, state, lambda: stdio_client(params, errlog=self.errlog))

    def close(self) -> None:
        super().close()
        self.errlog.close()


class HttpWay(McpWay):
    """``tool-loader serve --transport http``."""

    def __init__(self, folder: Path, state: Path, mode: str) -> None:
        self._server = serve_http(
            folder,
            folder.parent,
            *_mode_args(mode, state),
            "--state-dir",
            str(state),
            *LIMITS,
            wait_ready=True,
        )
        served = self._server.__enter__()
        super().__init__(folder, state, lambda: served.url)

    def close(self) -> None:
        super().close()
        self._server.__exit__(None, None, None)


class CliWay:
    """``tool-loader call``: a fresh process loads the folder, makes one call, and exits."""

    serving = False

    def __init__(self, folder: Path, state: Path, mode: str) -> None:
        self.folder, self.state, self.mode = folder, state, mode

    def run(self, name: str, args: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(
            "call",
            name,
            json.dumps(args or {}),
            "--dir",
            str(self.folder),
            *_mode_args(self.mode, self.state),
            *LIMITS,
            cwd=self.folder.parent,
            env={"TOOL_LOADER_STATE_DIR": str(self.state)},
        )

    def call(self, name: str, args: dict[str, Any] | None = None) -> Answer:
        done = self.run(name, args)
        return Answer((done.stdout + done.stderr).strip(), done.returncode != 0)

    def calls(self, name: str, args: list[dict[str, Any]]) -> list[Answer]:
        return [self.call(name, a) for a in args]

    def close(self) -> None:
        pass


MAKERS: dict[str, Callable[[Path, Path, str], Way]] = {
    "api": ApiWay,
    "stdio": StdioWay,
    "http": HttpWay,
    "cli": CliWay,
}


@pytest.fixture(scope="module")
def ways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], Way]]:
    """One way in per mode and way, started when a test first needs it, closed after the module."""
    opened: dict[tuple[str, str], Way] = {}
    yield opened
    for way in opened.values():
        way.close()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=WAYS)
def way(
    request: pytest.FixtureRequest,
    mode: str,
    ways: dict[tuple[str, str], Way],
    tmp_path_factory: pytest.TempPathFactory,
) -> Way:
    key = (mode, str(request.param))
    if key not in ways:
        base = tmp_path_factory.mktemp(f"matrix-{mode}-{request.param}")
        (base / "tools").mkdir()
        (base / "state").mkdir()
        ways[key] = MAKERS[key[1]](base / "tools", base / "state", mode)
    return ways[key]


# -- helpers -------------------------------------------------------------------------------------
def _tool(name: str, body: str, *, params: str = "", head: str = "", decorator: str = "@tool") -> str:
    return (
        f"{head}from loader import tool\n\n"
        f"{decorator}\n"
        f"def {name}({params}) -> str:\n"
        f'    """Tool {name}."""\n'
        f"    {body}\n"
    )


def _answers(way: Way, name: str, text: str, args: dict[str, Any] | None = None) -> bool:
    answer = way.call(name, args)
    return not answer.error and answer.text == text


def _live(way: Way, name: str, text: str, *, before: bool = False) -> None:
    """Wait until ``name`` answers ``text`` (at once for a one-shot command).

    ``before``: the version a test starts from, which a one-shot command (it
    reads the disk each time) needs no call to reach.
    """
    if before and not way.serving:
        return
    eventually(lambda: _answers(way, name, text), DEADLINE, f"{name} answers {text!r}")


def _settled(way: Way, key: str) -> None:
    """Wait until a save made after every save so far is live: the earlier ones were looked at."""
    global _SYNC
    _SYNC += 1
    marker = f"sync_{key}"
    write(way.folder / f"{marker}.py", _tool(marker, f"return '{_SYNC}'"))
    _live(way, marker, str(_SYNC))


_SYNC = 0


# -- the contract --------------------------------------------------------------------------------
def test_a_save_goes_live(way: Way) -> None:
    path = write(way.folder / "saved.py", _tool("saved", "return 'v1'"))
    _live(way, "saved", "v1", before=True)
    write(path, _tool("saved", "return 'v2'"))
    _live(way, "saved", "v2")


def test_a_broken_save_keeps_the_last_good_version(way: Way) -> None:
    path = write(way.folder / "brittle.py", _tool("brittle", "return 'good'"))
    _live(way, "brittle", "good", before=True)
    write(path, "from loader import tool\n\ndef brittle(:\n")
    if not way.serving:  # a one-shot has no last good version: it names the file that did not load
        answer = way.call("brittle")
        assert answer.error and "brittle.py" in answer.text and "did not load" in answer.text
        return
    _settled(way, "brittle")
    assert _answers(way, "brittle", "good")


def test_a_delete_removes_the_tool(way: Way) -> None:
    path = write(way.folder / "doomed.py", _tool("doomed", "return 'here'"))
    _live(way, "doomed", "here", before=True)
    path.unlink()
    eventually(lambda: way.call("doomed").error, DEADLINE, "doomed is gone")
    assert "doomed" in way.call("doomed").text  # the error names the tool it does not know


def test_a_helpers_change_reloads_its_dependents(way: Way) -> None:
    helper = write(way.folder / "wording.py", "WORD = 'first'\n")
    write(way.folder / "speaker.py", _tool("speaker", "return wording.WORD", head="import wording\n"))
    _live(way, "speaker", "first", before=True)
    write(helper, "WORD = 'second'\n")
    _live(way, "speaker", "second")


# -- the gate ------------------------------------------------------------------------------------
GATED = '''
from loader import tool

@tool(examples=[{{"params": {{"a": 1, "b": 2}}, "expected_output": 3}}])
def gated(a: int, b: int) -> int:
    """Add."""
    return a + b{extra}
'''


def test_the_gate_keeps_a_save_whose_example_fails_from_going_live(way: Way) -> None:
    path = write(way.folder / "gated.py", GATED.format(extra=""))
    eventually(lambda: _answers(way, "gated", "3", {"a": 1, "b": 2}), DEADLINE, "gated is live")
    write(path, GATED.format(extra=" + 1"))
    if not way.serving:  # the one-shot runs the examples before its call, and refuses the file
        answer = way.call("gated", {"a": 1, "b": 2})
        assert answer.error and "gated.py" in answer.text and "did not load" in answer.text
        assert "ExampleFailed" in answer.text and "expected 3, got 4" in answer.text
        return
    _settled(way, "gated")
    assert _answers(way, "gated", "3", {"a": 1, "b": 2})


# -- history -------------------------------------------------------------------------------------
def test_history_records_every_version_that_went_live(way: Way) -> None:
    path = write(way.folder / "recorded.py", _tool("recorded", "return 'r1'"))
    _live(way, "recorded", "r1", before=True)
    write(path, _tool("recorded", "return 'r2'"))
    _live(way, "recorded", "r2")
    if not way.serving:  # a one-shot serves nothing, so records nothing
        assert not database_path(way.folder.resolve(), way.state).exists()
        return

    def recorded() -> list[bytes | None]:
        with HistoryStore(way.folder, way.state) as store:
            return [v.content for v in store.versions("recorded")]

    eventually(
        lambda: recorded()[:2] == [path.read_bytes(), _tool("recorded", "return 'r1'").encode()], DEADLINE
    )


# -- call limits ---------------------------------------------------------------------------------
def test_a_call_past_the_timeout_is_an_error_result_and_others_still_answer(way: Way) -> None:
    write(
        way.folder / "sleepy.py", _tool("sleepy", "time.sleep(20)\n    return 'late'", head="import time\n")
    )
    write(way.folder / "awake.py", _tool("awake", "return 'awake'"))
    _live(way, "awake", "awake", before=True)
    answer = way.call("sleepy")
    assert answer.error and "did not finish within" in answer.text and "3 s" in answer.text, answer
    assert not way.serving or _answers(way, "awake", "awake")


CROWDED = """
import os, pathlib, time, uuid
from loader import tool

@tool
def crowded(folder: str) -> int:
    '''How many calls of this tool run at once (each holds a file in ``folder`` for 0.4 s).'''
    mine = pathlib.Path(folder) / uuid.uuid4().hex
    mine.touch()
    time.sleep(0.4)
    at_once = len(os.listdir(folder))
    mine.unlink()
    return at_once
"""


def test_calls_of_one_tool_beyond_its_cap_wait_in_line(way: Way) -> None:
    running = way.state / "crowded"
    running.mkdir(exist_ok=True)
    write(way.folder / "crowded.py", CROWDED)
    if not way.serving:  # one call per command: the cap is taken and the call runs
        assert _answers(way, "crowded", "1", {"folder": str(running)})
        return
    eventually(lambda: not way.call("crowded", {"folder": str(running)}).error, DEADLINE)
    answers = way.calls("crowded", [{"folder": str(running)}] * 4)
    assert [a.error for a in answers] == [False] * 4, answers
    assert max(int(a.text) for a in answers) <= PER_TOOL


# -- containment ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raised", "name"), [("SystemExit(4)", "SystemExit"), ("KeyboardInterrupt", "KeyboardInterrupt")]
)
def test_a_tool_raising_system_exit_or_keyboard_interrupt_is_an_error_result(
    way: Way, raised: str, name: str
) -> None:
    tool_name = f"raises_{name.lower()}"
    write(way.folder / f"{tool_name}.py", _tool(tool_name, f"raise {raised}"))
    write(way.folder / "calm.py", _tool("calm", "return 'calm'"))
    eventually(lambda: way.call(tool_name).text.startswith(f"Error: {name}"), DEADLINE, f"{tool_name} raises")
    if way.serving:  # and every other tool still answers (calm.py may land in a later batch)
        _live(way, "calm", "calm")


CRASH = _tool("crash", "os._exit(7)", head="import os\n")


def test_a_crashing_tool(way: Way, mode: str, request: pytest.FixtureRequest) -> None:
    """Contained where the mode contains crashes; elsewhere it takes its host down, as documented."""
    write(way.folder / "crash.py", CRASH)
    write(way.folder / "calm.py", _tool("calm", "return 'calm'"))
    if way.serving:
        _settled(way, "crash")  # crash.py, written before, is live too
    if mode in CONTAINS_CRASHES:
        answer = way.call("crash")
        assert answer.error and "crashed its worker process (it exited with status 7)" in answer.text
        assert not way.serving or _answers(way, "calm", "calm")
        return
    kind = request.node.callspec.params["way"]
    assert _host_dies_of_a_crash(kind, way.folder, mode) == 7


def _host_dies_of_a_crash(kind: str, folder: Path, mode: str) -> int:
    """Run the crash through a host of its own (the shared one must live on); its exit status."""
    if kind == "cli":
        return CliWay(folder, folder.parent / "state", mode).run("crash").returncode
    if kind == "api":
        script = (
            "import sys\nfrom loader import ToolLoader\n"
            f"ld = ToolLoader([{str(folder)!r}], isolation={mode!r}); ld.scan()\n"
            "ld.registry.invoke('crash', {})\nprint('survived')\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert "survived" not in done.stdout
        return done.returncode
    if kind == "http":
        return _crash_over_http(folder, mode)
    server = subprocess.Popen(
        [sys.executable, "-m", "loader", "serve", str(folder), "--isolation", mode, "--no-history"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(),
    )
    try:
        return _crash_through(kind, server)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(DEADLINE)


def _crash_through(kind: str, server: subprocess.Popen[bytes]) -> int:
    """Call ``crash`` over raw stdio JSON-RPC; the server's exit status."""
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()  # the initialize result
    for message in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crash", "arguments": {}}},
    ):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
    return server.wait(DEADLINE)


def _crash_over_http(folder: Path, mode: str) -> int:
    """Call ``crash`` over raw HTTP JSON-RPC; the server's exit status."""
    with serve_http(folder, folder.parent, "--isolation", mode, "--no-history", wait_ready=True) as served:
        started = post_json(served.url, INITIALIZE)
        session = started.headers.get("mcp-session-id")
        headers = {"mcp-session-id": session} if session else {}
        post_json(served.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "crash", "arguments": {}},
        }
        with contextlib.suppress(OSError, http.client.HTTPException):  # the connection dies with the server
            post_json(served.url, call, headers)
        return served.process.wait(DEADLINE)
