"""Fault injection: every editor's save pattern at once, beside hostile and slow files.

Each stable file is saved over and over by its own thread, each save in a
pattern a real editor or tool uses (in place, temp-and-rename, vim's
backup-rename, JetBrains' safe write, delete-and-create, truncate-pause-write,
``sed -i``), while another thread creates, breaks and deletes other files,
some of them hostile (raising ``SystemExit`` or ``KeyboardInterrupt`` at
import, importing slowly, hanging past the import patience). The real
filesystem and the real watchdog observer; the graces are long, so only a
bug, never a slow machine, can make a stable tool vanish.

``TOOL_LOADER_STORM_SAVES`` (default 25) sets the saves per stable file; a
soak before a release runs it with a few thousand.
"""

from __future__ import annotations

import os
import random
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Literal

import pytest
from editors import SAVE_PATTERNS
from support import FAST, MakeLoader, call_text, eventually, function_tool_source

from loader import ChangeKind, RegistryChangeSet
from loader.reload.loader import ToolLoader
from loader.reload.watcher import WatchTimings

SAVES = int(os.environ.get("TOOL_LOADER_STORM_SAVES", "25"))
STABLE = 4

STORM = replace(
    FAST,
    timings=WatchTimings(settle=0.004, debounce=0.02, disappear_grace=2.0),
    empty_grace=2.0,
    import_patience=0.05,
)
"""Short settle, long graces: a vanished tool can only be a bug."""


HOSTILE_BODIES = [
    "raise SystemExit(3)\n",
    "raise KeyboardInterrupt\n",
    "import time\ntime.sleep(0.2)\n",  # slow, but within the import timeout
    "import time\ntime.sleep(1.5)\n",  # well past the import patience
    "def broken(:\n",
    "import no_such_module_anywhere\n",
]


def _noise(folder: Path, rng: random.Random, stop: threading.Event) -> dict[str, str | None]:
    """Create, break, make hostile and delete other files until ``stop``.

    Returns each touched name's final state: the text its good file returns,
    ``"deleted"``, or None for a hostile or broken file (which keeps serving its
    last good version, if it had one).
    """
    final: dict[str, str | None] = {}
    step = 0
    while not stop.is_set():
        step += 1
        name = f"noise_{rng.randrange(6)}"
        path = folder / f"{name}.py"
        roll = rng.random()
        if roll < 0.35:
            path.write_text(function_tool_source(name, f"return 'n{step}'"))
            final[name] = f"n{step}"
        elif roll < 0.6:
            path.write_text(rng.choice(HOSTILE_BODIES) + function_tool_source(name, "return 'hostile'"))
            final[name] = None
        elif path.exists():
            path.unlink()
            final[name] = "deleted"
        stop.wait(rng.uniform(0.0, 0.03))
    return final


def _recorder(ld: ToolLoader) -> list[RegistryChangeSet]:
    sets: list[RegistryChangeSet] = []
    ld.registry.subscribe(sets.append)
    return sets


def _serves(ld: ToolLoader, name: str, text: str) -> bool:
    return name in ld.registry and call_text(ld, name) == text


@pytest.mark.timeout(300)
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_storm_of_editor_saves_beside_hostile_files_never_drops_a_stable_tool(
    tools_dir: Path, make_loader: MakeLoader, isolation: Literal["thread", "process"]
) -> None:
    saves = SAVES if isolation == "thread" else max(5, SAVES // 3)
    stable = [tools_dir / f"stable_{i}.py" for i in range(STABLE)]
    for index, path in enumerate(stable):
        path.write_text(function_tool_source(f"stable_{index}", "return 's0'"))
    ld = make_loader(tools_dir, config=replace(STORM, isolation=isolation))
    sets = _recorder(ld)
    names = [f"stable_{i}" for i in range(STABLE)]
    missing: list[str] = []
    stop = threading.Event()

    def watch_registry() -> None:
        while not stop.is_set():
            snapshot = ld.registry.snapshot()
            missing.extend(name for name in names if name not in snapshot)

    def saver(index: int) -> None:
        rng = random.Random(1000 + index)
        for version in range(1, saves + 1):
            pattern = rng.choice(SAVE_PATTERNS)
            pattern(stable[index], function_tool_source(names[index], f"return 's{version}'"), rng)
            threading.Event().wait(rng.uniform(0.0, 0.02))

    noise_result: dict[str, str | None] = {}
    noise_stop = threading.Event()

    def noise() -> None:
        noise_result.update(_noise(tools_dir, random.Random(7), noise_stop))

    watcher = threading.Thread(target=watch_registry, daemon=True)
    noiser = threading.Thread(target=noise, daemon=True)
    savers = [threading.Thread(target=saver, args=(i,), daemon=True) for i in range(STABLE)]
    watcher.start()
    noiser.start()
    for thread in savers:
        thread.start()
    for thread in savers:
        thread.join(240)
    noise_stop.set()
    noiser.join(30)
    for name in names:
        eventually(partial(_serves, ld, name, f"s{saves}"), 30, f"{name} serves its last save")
    assert ld.wait_idle(30)
    stop.set()
    watcher.join(10)

    assert sorted(set(missing)) == []
    removed = [c.name for s in sets for c in s.changes if c.kind is ChangeKind.REMOVED and c.name in names]
    assert removed == []
    # Once idle the registry equals the disk for the noise too.
    for name, final in noise_result.items():
        if final == "deleted":
            assert name not in ld.registry
        elif final is not None:
            assert _serves(ld, name, final)
