"""The pieces of process isolation that need no process: the codec, the environment allowlist, the ledger."""

from __future__ import annotations

import datetime
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from loader.isolation import DEFAULT_WORKER_ENV, WorkerOptions, worker_environment
from loader.isolation.ledger import SERIAL_BLOCK, ModuleLedger, ModuleVersion
from loader.isolation.protocol import (
    MAX_MESSAGE_BYTES,
    Channel,
    ChannelClosed,
    ChannelTimeout,
    MessageTooLarge,
    encode_value,
    json_safe_state,
    wire_limit,
)
from loader.reload.config import LoaderConfig

try:
    import msgspec
except ImportError:
    msgspec = None  # type: ignore[assignment]


def test_values_cross_as_plain_data_with_bytes_kept_and_tuples_as_lists() -> None:
    class Text(str):
        def __str__(self) -> str:
            return "not the value"

    value = {
        "a": (1, 2.5, None),
        "b": b"\x00\xff",
        "c": [{"d": bytearray(b"xy")}],
        "e": float("inf"),
        3: Text("t"),
        "big": 1 << 70,
    }
    a, b = _pipe_pair()
    a.send(encode_value(value))
    assert b.receive() == {
        "a": [1, 2.5, None],
        "b": b"\x00\xff",
        "c": [{"d": b"xy"}],
        "e": float("inf"),
        "3": "t",
        "big": 1 << 70,  # past 64 bits: the frame goes as JSON instead
    }
    a.close()
    b.close()


def test_a_json_frame_is_read_whatever_the_codec_with_its_bytes_untagged() -> None:
    """The fallback form (no msgspec, or a value MessagePack cannot hold) is always readable."""
    a, b = _pipe_pair()
    os.write(a._write_fd, _frame(b'{"ok":true,"data":{"$bytes":"AP8="},"n":[1,2]}'))
    assert b.receive() == {"ok": True, "data": b"\x00\xff", "n": [1, 2]}
    a.close()
    b.close()


def test_objects_plain_data_cannot_hold_cross_as_their_repr() -> None:
    class Thing:
        def __repr__(self) -> str:
            return "<thing>"

    assert encode_value({"x": Thing(), "s": {1}}) == {"x": "<thing>", "s": "{1}"}


def test_invocation_state_keeps_only_json_data_and_never_the_agent() -> None:
    state = {
        "agent": "anything",
        "n": 1,
        "nested": {"ok": [1, 2]},
        "obj": object(),
        3: "int key",
        "nan": float("nan"),
    }
    # A caller may hand over keys that are not strings (3): they are dropped, not crossed.
    assert json_safe_state(state) == {"n": 1, "nested": {"ok": [1, 2]}}  # type: ignore[arg-type]
    assert json_safe_state(None) == {}


def _pipe_pair() -> tuple[Channel, Channel]:
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    return Channel(a_read, a_write), Channel(b_read, b_write)


def _frame(body: bytes, size: int | None = None) -> bytes:
    """A frame as a worker's tool could write it straight to the pipe: a length, then bytes."""
    return struct.pack("!I", len(body) if size is None else size) + body


def test_channel_carries_messages_and_reports_the_other_end_closing() -> None:
    a, b = _pipe_pair()
    a.send({"op": "ping", "n": [1, 2]})
    assert b.poll(5) and b.receive() == {"op": "ping", "n": [1, 2]}
    a.close()
    assert b.poll(5)
    with pytest.raises(ChannelClosed):
        b.receive()
    b.close()


def test_channel_refuses_a_malformed_message() -> None:
    a, b = _pipe_pair()
    a.send({"ok": True})
    assert b.receive() == {"ok": True}
    os.write(a._write_fd, _frame(b"[1, 2]"))  # bytes no well-behaved worker sends
    with pytest.raises(ChannelClosed, match=r"not an object|malformed"):
        b.receive()
    a.send([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ChannelClosed, match="not an object"):
        b.receive()
    os.write(a._write_fd, _frame(b"{oops"))
    with pytest.raises(ChannelClosed, match="malformed"):
        b.receive()
    a.close()
    b.close()


@pytest.mark.skipif(msgspec is None, reason="the msgspec extra is not installed")
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC), id="timestamp"),
        pytest.param({1: "x"}, id="int-key"),
        pytest.param({(1, 2): "x"}, id="array-key"),
        pytest.param("msgspec-ext", id="extension"),
    ],
)
def test_a_message_with_more_than_plain_data_is_refused(value: Any) -> None:
    """MessagePack can carry what JSON cannot; a worker's tool writing such a frame is refused."""
    assert msgspec is not None
    if value == "msgspec-ext":
        value = msgspec.msgpack.Ext(5, b"x")
    a, b = _pipe_pair()
    os.write(a._write_fd, _frame(msgspec.msgpack.encode({"result": value})))
    with pytest.raises(ChannelClosed, match="malformed"):
        b.receive()
    a.close()
    b.close()


def test_worker_environment_is_the_default_allowlist_plus_what_is_asked_for() -> None:
    source = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_ALL": "C",
        "AWS_SECRET_ACCESS_KEY": "s",
        "GITHUB_TOKEN": "t",
        "OPENAI_API_KEY": "k",
        "MYAPP_MODE": "dev",
        "PYTHONPATH": "/elsewhere",
    }
    assert worker_environment((), source) == {"PATH": "/bin", "HOME": "/home/u", "LC_ALL": "C"}
    assert worker_environment(("MYAPP_*", "GITHUB_TOKEN"), source)["MYAPP_MODE"] == "dev"
    assert not any(name.startswith(("AWS", "GITHUB", "OPENAI")) for name in DEFAULT_WORKER_ENV)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"call_workers": 0}, "call_workers"),
        ({"spare_workers": -1}, "spare_workers"),
        ({"max_memory_mb": -1}, "max_memory_mb"),
        ({"max_processes": -1}, "max_processes"),
    ],
)
def test_worker_options_refuse_impossible_settings(kwargs: dict[str, int], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        WorkerOptions(**kwargs)  # type: ignore[arg-type]


def test_worker_limits_have_defaults_and_0_means_none() -> None:
    assert (WorkerOptions().max_memory_mb, WorkerOptions().max_processes) == (2048, 256)
    assert (LoaderConfig().workers.max_memory_mb, LoaderConfig().workers.max_processes) == (2048, 256)
    off = WorkerOptions(max_memory_mb=0, max_processes=0)
    assert (off.max_memory_mb, off.max_processes) == (None, None)


def _version(name: str, serial: int) -> ModuleVersion:
    return ModuleVersion(name, serial, Path(f"/t/{name}.py"), f"# {name} {serial}".encode())


def test_ledger_recipe_lists_dependencies_first_at_their_current_versions() -> None:
    ledger = ModuleLedger()
    for version in (_version("base", 1), _version("middle", 2), _version("user", 3)):
        ledger.record(version)
    ledger.record_imports("middle", {"middle": ["base"]})
    ledger.record_imports("user", {"user": ["middle", "base"], "middle": ["base"]})
    assert [v.name for v in ledger.recipe("user")] == ["base", "middle", "user"]
    assert [v.name for v in ledger.recipe("user", include_self=False)] == ["base", "middle"]
    assert ledger.dependents(["base"]) == {"middle", "user"}
    ledger.record(_version("base", 4))
    assert ledger.recipe("user")[0].serial == 4


def test_ledger_recipe_follows_only_what_the_files_own_import_reported() -> None:
    """Another file's import says that ``user`` imports it: that file reloads ``user`` when it changes,
    but never enters ``user``'s recipe (its code would run wherever ``user`` is built)."""
    ledger = ModuleLedger()
    for version in (_version("base", 1), _version("user", 2), _version("forger", 3)):
        ledger.record(version)
    ledger.record_imports("user", {"user": ["base"], "base": []})
    ledger.record_imports("forger", {"forger": [], "user": ["base", "forger"]})
    assert [v.name for v in ledger.recipe("user")] == ["base", "user"]
    assert ledger.dependents(["forger"]) == {"user"}


def test_ledger_serial_blocks_never_overlap() -> None:
    """Imports run at once in several workers, each numbering what it runs from its own block."""
    ledger = ModuleLedger()
    first, second = ledger.reserve_serials(), ledger.reserve_serials()
    assert second - first == SERIAL_BLOCK


def test_ledger_updates_name_what_a_holder_must_replace_or_drop_since_an_epoch() -> None:
    ledger = ModuleLedger()
    for version in (_version("helper", 1), _version("tool", 2), _version("gone", 3)):
        ledger.record(version)
    ledger.record_imports("tool", {"tool": ["helper"]})
    held = {"helper": 1, "tool": 2, "gone": 3}
    synced = ledger.epoch
    assert ledger.updates(held, synced) == ((), ())
    newer = _version("helper", 5)
    ledger.record(newer)
    ledger.record(_version("unheld", 6))
    ledger.forget(["gone"])
    assert ledger.updates(held, synced) == ((newer,), ("gone",))
    assert ledger.updates({**held, "helper": 5}, synced) == ((), ("gone",))
    assert ledger.is_current(ledger.recipe("tool")) and not ledger.is_current([_version("helper", 1)])


def test_ledger_forgets_modules_and_their_edges() -> None:
    ledger = ModuleLedger()
    ledger.record(_version("helper", 1))
    ledger.record(_version("tool", 2))
    ledger.record_imports("tool", {"tool": ["helper"]})
    ledger.forget(["tool"])
    assert ledger.dependents(["helper"]) == set()
    assert ledger.current("tool") is None and ledger.dependencies("tool") == frozenset()


def test_a_message_over_the_limit_is_neither_sent_nor_read() -> None:
    """The sender refuses it; a receiver reads only its length, never its body."""
    reader, writer = os.pipe()
    sending, receiving = Channel(reader, writer), Channel(reader, writer)
    big = {"result": "x" * 5000}
    with pytest.raises(MessageTooLarge) as refused:
        sending.send(big, limit=1000)
    assert refused.value.size is not None and refused.value.size > 5000
    sending.send(big)  # what a tool writing to the pipe itself could do
    with pytest.raises(MessageTooLarge):
        receiving.receive(limit=1000)
    assert wire_limit(None) == MAX_MESSAGE_BYTES and wire_limit(1000) > 2000


def test_half_a_frame_then_silence_times_out_at_the_deadline_instead_of_blocking() -> None:
    """A reader with a deadline never waits for bytes that do not come; nor a writer for room."""
    a, b = _pipe_pair()
    os.write(a._write_fd, _frame(b'{"result"', size=1000))
    started = time.monotonic()
    with pytest.raises(ChannelTimeout):
        b.receive(deadline=started + 0.3)
    assert time.monotonic() - started < 5
    os.set_blocking(a._write_fd, False)
    with pytest.raises(ChannelTimeout):  # b never reads: the pipe fills, the send gives up
        a.send({"data": "x" * 1_000_000}, deadline=time.monotonic() + 0.3)
    a.close()
    b.close()


def test_without_msgspec_the_frames_are_json_with_the_same_values(tmp_path: Path) -> None:
    """The msgspec extra is optional: without it both ends speak JSON and values read the same."""
    script = tmp_path / "no_msgspec.py"
    script.write_text(
        "import os, sys\n"
        "sys.modules['msgspec'] = None  # as if the extra were not installed\n"
        "from loader.isolation.protocol import Channel, encode_value\n"
        "r, w = os.pipe()\n"
        "sending, receiving = Channel(r, w), Channel(r, w)\n"
        "sending.send(encode_value({'b': b'\\x00\\xff', 't': (1, 2.5), 'n': None}))\n"
        "os.write(1, os.read(r, 1 << 16)[4:5])  # the frame's first byte\n"
        "sending.send(encode_value({'b': b'\\x00\\xff', 't': (1, 2.5), 'n': None}))\n"
        "assert receiving.receive() == {'b': b'\\x00\\xff', 't': [1, 2.5], 'n': None}\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"{"
