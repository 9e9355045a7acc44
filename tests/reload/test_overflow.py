"""Events the kernel dropped when its inotify queue overflowed: no file is lost.

The overflow is forced, not hoped for: a helper process stops this process
(``SIGSTOP``, as a busy machine deschedules a loader in the middle of a
``git checkout``), makes more events than the kernel queues for one reader,
then changes the tool files (their events are dropped), and lets this process
go on. Some files are replaced as git does (new inode, new size), others are
rewritten in place at the same size with their mtime put back (as ``tar`` and
``rsync -t`` do), so their stat is exactly what the loader last read: only
their content tells. Once idle, every tool must answer its new version.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import MakeLoader, call_text, eventually, function_tool_source, write

from loader.reload.overflow import overflows_seen

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

_WRITER = r"""
import os, signal, subprocess, sys, time

parent, folder, noise_events = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rewrites = sys.argv[4:]
# Whatever happens to this writer, the test process is let go again.
guardian = subprocess.Popen(
    ["sh", "-c", f"sleep 60; kill -CONT {parent} 2>/dev/null"], start_new_session=True
)
os.kill(parent, signal.SIGSTOP)
try:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(f"/proc/{parent}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "T":
                break
    fd = os.open(os.path.join(folder, "noise.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    for _ in range(noise_events // 2 + 1):  # a write and an attribute change: two events that never merge
        os.write(fd, b"x")
        os.utime(fd)
    os.close(fd)
    for item in rewrites:
        how, path, text = item.split("|", 2)
        if how == "git":
            os.unlink(path)
            with open(path, "x") as handle:
                handle.write(text)
        else:
            before = os.stat(path)
            with open(path, "r+") as handle:
                handle.write(text)
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
finally:
    os.kill(parent, signal.SIGCONT)
    guardian.kill()
"""


def _queue_limit() -> int:
    return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())


def test_after_a_queue_overflow_every_changed_file_is_reloaded(
    tools_dir: Path, make_loader: MakeLoader, caplog: pytest.LogCaptureFixture
) -> None:
    names = [f"t{i}" for i in range(40)]
    for name in names:
        write(tools_dir / f"{name}.py", function_tool_source(name, "return 'old'"))
    ld = make_loader(tools_dir)
    assert [call_text(ld, name) for name in names] == ["old"] * len(names)
    new = {name: function_tool_source(name, "return 'new'") for name in names}
    rewrites = [
        f"{'git' if i % 2 else 'inplace'}|{tools_dir / f'{name}.py'}|{new[name]}"
        for i, name in enumerate(names)
    ]
    heard = overflows_seen()
    caplog.set_level(logging.WARNING, logger="loader.reload.overflow")
    subprocess.run(
        [
            sys.executable,
            "-c",
            _WRITER,
            str(os.getpid()),
            str(tools_dir),
            str(_queue_limit() + 2000),
            *rewrites,
        ],
        check=True,
        timeout=120,
    )
    eventually(
        lambda: any("overflowed" in r.getMessage() for r in caplog.records), 30, "the overflow is logged"
    )
    assert overflows_seen() > heard
    assert ld.wait_idle(60)
    lost = [name for name in names if call_text(ld, name) != "new"]
    assert lost == [], f"{len(lost)} of {len(names)} files still serve their old version once idle"
