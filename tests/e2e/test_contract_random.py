"""Contract point 14: after any sequence of operations, once idle, the registry equals what is on disk.

A randomized walk over creates, edits (in place, atomic rename, truncate-then-write),
breaks, fixes, empties, renames, moves into sub-folders and deletes, on the real
filesystem with the real watchdog observer, in both isolation modes. The oracle is computed from what the
test wrote: a good file contributes its tools; a broken file its last good
version (if the path had one); names are unique, so no conflicts arise.
"""

from __future__ import annotations

import itertools
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import MakeLoader, eventually

from loader.reload.loader import ToolLoader
from loader.status import FileState

_tokens = itertools.count(1)


@dataclass
class FileModel:
    tools: dict[str, str] = field(default_factory=dict)
    broken: bool = False
    last_good: dict[str, str] = field(default_factory=dict)

    def effective(self) -> dict[str, str]:
        return self.last_good if self.broken else self.tools


def _source(tools: dict[str, str]) -> str:
    parts = ["from loader import tool\n"]
    for name, token in tools.items():
        parts.append(f"\n@tool\ndef {name}() -> str:\n    '''Tool {name}.'''\n    return {token!r}\n")
    return "".join(parts)


def _save(rng: random.Random, path: Path, text: str) -> None:
    style = rng.choice(["in_place", "atomic", "truncate"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if style == "atomic":
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    elif style == "truncate" and path.exists():
        with open(path, "w") as handle:
            handle.flush()
            time.sleep(rng.choice([0, 0.01, 0.05]))  # the gap an editor leaves between truncate and write
            handle.write(text)
    else:
        path.write_text(text)


def _expected(models: dict[Path, FileModel]) -> dict[str, str]:
    result: dict[str, str] = {}
    for model in models.values():
        result.update(model.effective())
    return result


def _actual(loader: ToolLoader) -> dict[str, str]:
    actual: dict[str, str] = {}
    for name in loader.registry.names():
        content = loader.registry.invoke(name, {})["content"][0]
        actual[name] = str(content.get("text"))
    return actual


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Both isolation modes: the registry converges to the disk in each."""
    return str(request.param)


SEEDS = [int(s) for s in os.environ.get("TOOL_LOADER_RANDOM_SEEDS", "11,29,47").split(",")]
STEPS = int(os.environ.get("TOOL_LOADER_RANDOM_STEPS", "60"))
"""Every step runs: a run that is too slow hits the test timeout and fails, it is never cut short."""


def _check_statuses(
    loader: ToolLoader, models: dict[Path, FileModel], *, remembers: bool, where: str
) -> None:
    """Each file's status agrees with the model: broken files failed, serving their last good tools
    when the loader saw them (``remembers``), and nothing; every other file loaded with its tools."""
    for path, model in models.items():
        status = loader.file_status(path)
        assert status is not None, f"{where}: no status for {path.name}"
        if model.broken:
            served = sorted(model.last_good) if remembers else []
            assert (status.state, sorted(status.tools)) == (FileState.FAILED, served), f"{where}: {path.name}"
            assert status.error is not None and status.error.line is not None, f"{where}: {path.name}"
        else:
            assert (status.state, sorted(status.tools)) == (FileState.LOADED, sorted(model.tools)), (
                f"{where}: {path.name}"
            )


@pytest.mark.parametrize("seed", SEEDS)
def test_14_registry_converges_to_disk_after_random_operations(
    tools_dir: Path, make_loader: MakeLoader, seed: int
) -> None:
    rng = random.Random(seed)
    ld = make_loader(tools_dir)
    slots = [tools_dir / f"f{i}.py" for i in range(6)] + [tools_dir / "sub" / f"g{i}.py" for i in range(3)]
    models: dict[Path, FileModel] = {}
    for step in range(STEPS):
        existing = [p for p in slots if p in models]
        op = rng.choice(
            ["write", "write", "write", "break", "delete", "move", "empty"] if existing else ["write"]
        )
        if op == "write":
            path = rng.choice(slots)
            tools = {f"t{next(_tokens)}": f"v{seed}.{step}.{k}" for k in range(rng.randint(1, 3))}
            model = models.setdefault(path, FileModel())
            model.tools, model.last_good, model.broken = tools, tools, False
            _save(rng, path, _source(tools))
        elif op == "break":
            path = rng.choice(existing)
            assert ld.wait_idle(20), "the last good version must have been seen before breaking"
            models[path].broken = True
            _save(rng, path, "from loader import tool\n\n@tool\ndef broken(:\n")
        elif op == "empty":
            path = rng.choice(existing)
            model = models[path]
            model.tools, model.last_good, model.broken = {}, {}, False
            _save(rng, path, "")
        elif op == "delete":
            path = rng.choice(existing)
            path.unlink()
            del models[path]
            assert ld.wait_idle(20)
        elif op == "move":
            src = rng.choice(existing)
            dst = rng.choice([p for p in slots if p != src])
            if models[src].broken and dst in models:
                # The broken file takes over dst's last good version: it must have been seen.
                assert ld.wait_idle(20), "the last good version must have been seen before breaking"
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
            moved = models.pop(src)
            previous = models.get(dst)
            if moved.broken:
                moved.last_good = previous.last_good if previous is not None else {}
            models[dst] = moved
            assert ld.wait_idle(20)
        if step % 10 == 9:
            assert ld.wait_idle(20)
            assert _actual(ld) == _expected(models), f"seed {seed} step {step}"
    assert ld.wait_idle(20)
    expected = _expected(models)
    eventually(lambda: _actual(ld) == expected, timeout=10, message=f"seed {seed} final")
    assert ld.wait_idle(20)
    _check_statuses(ld, models, remembers=True, where=f"seed {seed} watching")

    # A fresh loader scanning the same folder serves exactly the healthy files' tools: a broken
    # file has no last good version there, and fails with its error.
    fresh = make_loader(tools_dir, watch=False)
    healthy = {n: t for m in models.values() if not m.broken for n, t in m.tools.items()}
    assert _actual(fresh) == healthy, f"seed {seed} fresh scan"
    _check_statuses(fresh, models, remembers=False, where=f"seed {seed} fresh scan")
