"""No stale answers: once a save is live, no call that starts later is answered by an older version.

Stable files are saved over and over in every editor's pattern while agents
call their tools, and hostile files (exiting, interrupting, slow, hanging and
broken imports) come and go beside them. Every call notes the version live
when it started (the registry's tool at that moment, whose description names
its version) and the version that answered; an answer older than the version
live at the start is stale. A call that started before a swap may finish on
the old version: that is not stale. Both isolation modes; the real filesystem
and the real watchdog observer.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Literal

import pytest
from editors import SAVE_PATTERNS
from support import FAST, MakeLoader, call_text, eventually

from loader.reload.loader import ToolLoader
from loader.reload.watcher import WatchTimings
from loader.status import FileStatus

MODES = ["thread", "process"]
STABLE = 3
SAVES = 12
CALLERS = 2

CONFIG = replace(
    FAST,
    timings=WatchTimings(settle=0.004, debounce=0.02, disappear_grace=2.0),
    empty_grace=2.0,
    import_patience=0.05,
    import_timeout=2.0,
)

HOSTILE = [
    "raise SystemExit(3)\n",
    "raise KeyboardInterrupt\n",
    "import time\ntime.sleep(0.3)\n",
    "while True:\n    pass\n",  # hangs until the import deadline
    "def broken(:\n",
]


def _versioned(name: str, version: int) -> str:
    return (
        "from loader import tool\n\n"
        "@tool\n"
        f"def {name}() -> int:\n"
        f'    """Version {version}."""\n'
        f"    return {version}\n"
    )


def _live_version(loader: ToolLoader, name: str) -> int:
    tool = loader.registry.get(name)
    assert tool is not None, f"{name} vanished"
    return int(tool.tool_spec["description"].split()[1].rstrip("."))


@pytest.mark.timeout(240)
@pytest.mark.parametrize("isolation", MODES)
def test_no_call_is_answered_by_a_version_older_than_the_one_live_when_it_started(
    tools_dir: Path, make_loader: MakeLoader, isolation: Literal["thread", "process"]
) -> None:
    names = [f"stable_{i}" for i in range(STABLE)]
    paths = [tools_dir / f"{name}.py" for name in names]
    for name, path in zip(names, paths, strict=True):
        path.write_text(_versioned(name, 0))
    loader = make_loader(tools_dir, config=replace(CONFIG, isolation=isolation))
    stop = threading.Event()
    stale: list[tuple[str, int, int]] = []
    answered = [0]
    saved_at: dict[str, list[float]] = {name: [0.0] for name in names}
    late = [0]  # answers older than a version saved more than 2 s before: latency, reported only

    def caller(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            name = rng.choice(names)
            live = _live_version(loader, name)
            answer = int(call_text(loader, name))
            answered[0] += 1
            if answer < live:
                stale.append((name, live, answer))
            times = saved_at[name]
            if answer + 1 < len(times) and time.monotonic() - times[answer + 1] > 2.0:
                late[0] += 1

    def saver(index: int) -> None:
        rng = random.Random(100 + index)
        for version in range(1, SAVES + 1):
            rng.choice(SAVE_PATTERNS)(paths[index], _versioned(names[index], version), rng)
            saved_at[names[index]].append(time.monotonic())
            stop.wait(rng.uniform(0.05, 0.25))

    def noise() -> None:
        rng = random.Random(7)
        while not stop.is_set():
            path = tools_dir / f"noise_{rng.randrange(3)}.py"
            if rng.random() < 0.3 and path.exists():
                path.unlink()
            else:
                path.write_text(rng.choice(HOSTILE))
            stop.wait(rng.uniform(0.05, 0.3))

    callers = [threading.Thread(target=caller, args=(i,), daemon=True) for i in range(CALLERS)]
    savers = [threading.Thread(target=saver, args=(i,), daemon=True) for i in range(STABLE)]
    noiser = threading.Thread(target=noise, daemon=True)
    for thread in [*callers, noiser, *savers]:
        thread.start()
    try:
        for thread in savers:
            thread.join(120)
        for name in names:
            eventually(partial(lambda n: call_text(loader, n) == str(SAVES), name), 30, f"{name} is live")
    finally:
        stop.set()
        for thread in [*callers, noiser]:
            thread.join(30)
    print(f"{isolation}: {answered[0]} answers, {len(stale)} stale, {late[0]} older than a save 2 s before")
    assert answered[0] > 0
    assert stale == []


LAZY = '''
from loader import tool

@tool
def lazy() -> str:
    """Read the helper when called, not when loaded."""
    import helper
    return helper.WORD
'''


@pytest.mark.parametrize("isolation", MODES)
def test_a_helper_imported_at_call_time_answers_with_its_live_version(
    tools_dir: Path, make_loader: MakeLoader, isolation: Literal["thread", "process"]
) -> None:
    helper = tools_dir / "helper.py"
    helper.write_text("WORD = 'one'\n")
    (tools_dir / "lazy.py").write_text(LAZY)
    loader = make_loader(tools_dir, config=replace(FAST, isolation=isolation))
    assert call_text(loader, "lazy") == "one"
    for word in ("two", "three"):
        before = loader.file_status(helper)
        assert before is not None
        helper.write_text(f"WORD = {word!r}\n")
        eventually(partial(_newer, loader, helper, before), message="the helper's save is live")
        assert call_text(loader, "lazy") == word


def _newer(loader: ToolLoader, path: Path, before: FileStatus) -> bool:
    """Whether ``path`` loaded content other than ``before``'s, and the loader is idle."""
    status = loader.file_status(path)
    return (
        status is not None
        and status.content_hash != before.content_hash
        and status.loaded_at is not None
        and loader.wait_idle(10)
    )
