"""The consistency contract, on the real filesystem with the real watchdog observer.

Each test names the point of the contract it proves. Assertions about "never
missing" are made on the registry's change sets, which record every commit, so
they hold without timing luck. Every test runs in every isolation mode: tools
imported and called in this process (``thread``) and in worker processes
(``process``), and in worker processes the kernel confines (``sandbox``).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from support import EVENTS_ONLY, FAST, MakeLoader, call_text, eventually, function_tool_source, write

from loader.registry.changes import ChangeKind, RegistryChangeSet
from loader.reload.loader import LoaderConfig, ToolLoader
from loader.reload.watcher import WatchTimings
from loader.status import FileState, LoaderEvent, LoaderEventKind


@pytest.fixture(params=["thread", "process", "sandbox"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Every isolation mode: every contract point holds in each."""
    return str(request.param)


def _recorder(loader: ToolLoader) -> list[RegistryChangeSet]:
    sets: list[RegistryChangeSet] = []
    loader.registry.subscribe(sets.append)
    return sets


def _removed(sets: list[RegistryChangeSet], name: str) -> list[int]:
    return [s.generation for s in sets for c in s.changes if c.name == name and c.kind is ChangeKind.REMOVED]


def _text_is(loader: ToolLoader, name: str, expected: str) -> bool:
    return name in loader.registry and call_text(loader, name) == expected


# 1 ---------------------------------------------------------------------------------------------
def test_01_new_file_appears(tools_dir: Path, make_loader: MakeLoader) -> None:
    ld = make_loader(tools_dir)
    write(tools_dir / "fresh.py", function_tool_source("fresh", "return 'new'"))
    eventually(lambda: _text_is(ld, "fresh", "new"))
    write(tools_dir / "deep" / "er" / "nested.py", function_tool_source("nested", "return 'deep'"))
    eventually(lambda: _text_is(ld, "nested", "deep"))


# 2 ---------------------------------------------------------------------------------------------
def test_02_edit_in_place_swaps_all_tools_of_the_file_together(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    two = "from loader import tool\n\n@tool\ndef one() -> str:\n    '''1'''\n    return 'A1'\n\n@tool\ndef two() -> str:\n    '''2'''\n    return 'A2'\n"
    path = write(tools_dir / "pair.py", two)
    ld = make_loader(tools_dir)
    sets = _recorder(ld)
    path.write_text(two.replace("A1", "B1").replace("A2", "B2"))
    eventually(lambda: _text_is(ld, "one", "B1") and _text_is(ld, "two", "B2"))
    replaced = [s for s in sets if any(c.kind is ChangeKind.REPLACED for c in s.changes)]
    assert len(replaced) == 1
    assert sorted(c.name for c in replaced[0].changes) == ["one", "two"]


# 3 ---------------------------------------------------------------------------------------------
def _atomic_rename(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _backup_then_rename(path: Path, text: str) -> None:
    backup = path.with_name(path.name + "~")
    os.replace(path, backup)
    path.write_text(text)
    backup.unlink()


def _jetbrains(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    tmp.write_text(text)
    os.replace(path, old)
    os.replace(tmp, path)
    old.unlink()


def _delete_then_create(path: Path, text: str) -> None:
    path.unlink()
    path.write_text(text)


@pytest.mark.parametrize("save", [_atomic_rename, _backup_then_rename, _jetbrains, _delete_then_create])
def test_03_editor_atomic_saves_are_edits(
    tools_dir: Path, make_loader: MakeLoader, save: Callable[[Path, str], None]
) -> None:
    path = write(tools_dir / "saved.py", function_tool_source("saved", "return 'v1'"))
    ld = make_loader(tools_dir)
    sets = _recorder(ld)
    for version in range(2, 5):
        save(path, function_tool_source("saved", f"return 'v{version}'"))
        eventually(partial(_text_is, ld, "saved", f"v{version}"))
    assert ld.wait_idle(10)
    assert _removed(sets, "saved") == []
    assert [s.path.name for s in ld.status(include_removed=False)] == ["saved.py"]


# 4 ---------------------------------------------------------------------------------------------
PATIENT_WITH_EMPTY = replace(FAST, empty_grace=3.0)
"""``FAST`` with an empty file's grace well past the pauses these tests make between truncate and write."""


def test_04_truncate_then_write_with_a_pause_never_drops_tools(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    path = write(tools_dir / "trunc.py", function_tool_source("trunc", "return 'v1'"))
    # The pauses below are 0.1 s; the grace an empty file gets is far longer, so that a writer thread
    # starved on a loaded machine (CI saw one sit past FAST's 0.3 s) is still within it.
    ld = make_loader(tools_dir, config=PATIENT_WITH_EMPTY)
    sets = _recorder(ld)
    for version in (2, 3):
        with open(path, "w") as handle:  # truncates now
            handle.flush()
            os.fsync(handle.fileno())
            threading.Event().wait(0.1)  # an editor between truncating and writing
            handle.write(function_tool_source("trunc", f"return 'v{version}'"))
        path.write_text("")  # a second writer style: empty file closed, then filled
        threading.Event().wait(0.1)
        path.write_text(function_tool_source("trunc", f"return 'v{version}'"))
        eventually(partial(_text_is, ld, "trunc", f"v{version}"))
    assert ld.wait_idle(10)
    assert _removed(sets, "trunc") == []


def test_04_an_empty_moment_during_a_save_is_no_update(tools_dir: Path, make_loader: MakeLoader) -> None:
    """The file empty between truncate and write keeps its status: the one update is the new content's."""
    path = write(tools_dir / "trunc.py", function_tool_source("trunc", "return 'v1'"))
    ld = make_loader(tools_dir, config=PATIENT_WITH_EMPTY)
    events: list[LoaderEvent] = []
    ld.subscribe(events.append)
    with open(path, "w") as handle:  # truncates now
        handle.flush()
        threading.Event().wait(0.15)  # an editor's pause, past the debounce and within the empty grace
        handle.write(function_tool_source("trunc", "return 'v2'"))
    eventually(partial(_text_is, ld, "trunc", "v2"))
    assert ld.wait_idle(10)
    assert [event.kind for event in events] == [LoaderEventKind.UPDATED], events


def test_04_file_that_stays_empty_or_loses_its_tools_drops_them_after_the_window(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    empty = write(tools_dir / "empty.py", function_tool_source("goes_empty"))
    commented = write(tools_dir / "commented.py", function_tool_source("commented_out"))
    ld = make_loader(tools_dir)
    assert {"goes_empty", "commented_out"} <= set(ld.registry.names())
    empty.write_text("")
    commented.write_text("# " + commented.read_text().replace("\n", "\n# "))
    eventually(lambda: "goes_empty" not in ld.registry and "commented_out" not in ld.registry)
    assert ld.wait_idle(10)
    states = {s.path.name: s for s in ld.status()}
    assert states["empty.py"].state is FileState.LOADED and states["empty.py"].tools == ()


# 5 ---------------------------------------------------------------------------------------------
def test_05_burst_of_saves_coalesces_into_one_execution(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "burst.py", function_tool_source("burst", "return 'v0'"))
    config = LoaderConfig(
        timings=WatchTimings(settle=0.15, debounce=0.15, disappear_grace=0.15),
        entry_point_plugins=False,
    )
    ld = make_loader(tools_dir, config=config)
    assert ld.wait_idle(10)
    before = ld.module_executions
    for version in range(1, 31):
        path.write_text(function_tool_source("burst", f"return 'v{version}'"))
    # 30 s, as in the matrix: a sandbox worker starting on a loaded machine can take longer than 15 s
    eventually(lambda: _text_is(ld, "burst", "v30"), 30, "the last save answers")
    assert ld.wait_idle(10)
    assert ld.module_executions - before == 1


def test_05_unchanged_content_is_not_reloaded(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "same.py", function_tool_source("same"))
    ld = make_loader(tools_dir)
    assert ld.wait_idle(10)
    before = ld.module_executions
    path.write_text(path.read_text())
    path.touch()
    # Once a later file has loaded, the touch's event has arrived too (events come in order),
    # so wait_idle covers its batch: without the sentinel, wait_idle could return before it.
    write(tools_dir / "sentinel.py", function_tool_source("sentinel", "return 'seen'"))
    eventually(lambda: _text_is(ld, "sentinel", "seen"), message="the sentinel loads")
    assert ld.wait_idle(10)
    assert ld.module_executions - before == 1  # the sentinel only


# 6 ---------------------------------------------------------------------------------------------
def test_06_delete_and_move_out_remove_tools(
    tmp_path: Path, tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "gone.py", function_tool_source("gone"))
    write(tools_dir / "moved_out.py", function_tool_source("moved_out"))
    write(tools_dir / "renamed_ext.py", function_tool_source("renamed_ext"))
    ld = make_loader(tools_dir)
    (tools_dir / "gone.py").unlink()
    shutil.move(str(tools_dir / "moved_out.py"), str(tmp_path / "moved_out.py"))
    os.replace(tools_dir / "renamed_ext.py", tools_dir / "renamed_ext.txt")
    eventually(lambda: not {"gone", "moved_out", "renamed_ext"} & set(ld.registry.names()))
    assert ld.wait_idle(10)
    assert {s.path.name: s.state for s in ld.status()} == {
        "gone.py": FileState.REMOVED,
        "moved_out.py": FileState.REMOVED,
        "renamed_ext.py": FileState.REMOVED,
    }


def test_06_move_within_folder_keeps_tools_with_new_source(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "before.py", function_tool_source("wanderer"))
    ld = make_loader(tools_dir)
    sets = _recorder(ld)
    (tools_dir / "sub").mkdir()
    os.replace(tools_dir / "before.py", tools_dir / "sub" / "after.py")
    after = tools_dir / "sub" / "after.py"
    eventually(lambda: ld.registry.source_of("wanderer") == str(after))
    assert ld.wait_idle(10)
    assert _removed(sets, "wanderer") == []
    status = ld.file_status(after)
    assert status is not None and status.state is FileState.LOADED and status.tools == ("wanderer",)


def test_06_a_move_whose_new_import_is_slow_keeps_serving_the_tool(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """The moved bytes run again under their new module name; until that import settles, the tool they
    defined keeps serving (a worker's import on a loaded machine once left the name empty a while)."""
    slow = "import time\ntime.sleep(0.6)\n" + function_tool_source("wanderer", "return 'here'")
    write(tools_dir / "before.py", slow)
    (tools_dir / "sub").mkdir()
    ld = make_loader(tools_dir, config=replace(EVENTS_ONLY, import_patience=0.05))
    sets = _recorder(ld)
    after = tools_dir / "sub" / "after.py"
    os.replace(tools_dir / "before.py", after)
    eventually(lambda: ld.registry.source_of("wanderer") == str(after), message="the move is applied")
    assert call_text(ld, "wanderer") == "here"  # while the new import may still be running
    assert ld.wait_idle(30)
    assert call_text(ld, "wanderer") == "here"
    assert _removed(sets, "wanderer") == []
    status = ld.file_status(after)
    assert status is not None and status.state is FileState.LOADED and status.tools == ("wanderer",)


def test_06_moved_owner_keeps_its_names_over_a_conflicting_file(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    greet = write(tools_dir / "greet.py", function_tool_source("greet", "return 'first'"))
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    second = write(tools_dir / "greet2.py", function_tool_source("greet", "return 'second'"))
    eventually(lambda: (s := ld.file_status(second)) and s.state is FileState.CONFLICT)
    events: list[LoaderEvent] = []
    ld.subscribe(events.append)
    hello = tools_dir / "hello.py"
    os.replace(greet, hello)
    eventually(lambda: ld.registry.source_of("greet") == str(hello), message="greet follows the moved file")
    assert ld.wait_idle(10)
    assert call_text(ld, "greet") == "first"
    second_status = ld.file_status(second)
    assert second_status is not None and second_status.state is FileState.CONFLICT
    moved = [e for e in events if e.kind is LoaderEventKind.MOVED]
    assert [(e.moved_from, e.path) for e in moved] == [(greet, hello)]
    assert not [e for e in events if e.kind in (LoaderEventKind.REMOVED, LoaderEventKind.ADDED)]


# 7 ---------------------------------------------------------------------------------------------
def test_07_tool_removed_or_renamed_inside_a_file_disappears(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    src = "from loader import tool\n\n@tool\ndef keep() -> str:\n    '''k'''\n    return 'k'\n\n@tool\ndef drop() -> str:\n    '''d'''\n    return 'd'\n"
    path = write(tools_dir / "several.py", src)
    ld = make_loader(tools_dir)
    path.write_text(src.replace("def drop", "def renamed"))
    eventually(lambda: "renamed" in ld.registry and "drop" not in ld.registry)
    path.write_text(src.split("@tool\ndef drop")[0])
    eventually(lambda: set(ld.registry.names()) == {"keep"})


# 8 ---------------------------------------------------------------------------------------------
BROKEN_SAVES = {
    "syntax": ("from loader import tool\n\n@tool\ndef fragile() -> str:\n    '''x'''\n    return 'v2\n", 6),
    "import": ("import not_a_real_module_zz\n", 1),
    "exception": ("from loader import tool\nraise RuntimeError('broken at import')\n", 2),
    "invalid_spec": ("TOOL_SPEC = {'name': 'fragile'}\ndef fragile(tool_use, **kw):\n    return 'x'\n", None),
    "duplicate": (
        "from loader import tool\n\n@tool(name='fragile')\ndef a() -> str:\n    '''a'''\n    return 'a'\n\n"
        "@tool(name='fragile')\ndef b() -> str:\n    '''b'''\n    return 'b'\n",
        None,
    ),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_SAVES))
def test_08_broken_save_keeps_last_good_version(tools_dir: Path, make_loader: MakeLoader, kind: str) -> None:
    path = write(tools_dir / "fragile.py", function_tool_source("fragile", "return 'good'"))
    ld = make_loader(tools_dir)
    sets = _recorder(ld)
    source, line = BROKEN_SAVES[kind]
    path.write_text(source)
    status = eventually(lambda: (s := ld.file_status(path)) and s.state is FileState.FAILED and s)
    assert status.error is not None
    if line is not None:
        assert status.error.line == line
    assert status.tools == ("fragile",)
    assert call_text(ld, "fragile") == "good"
    path.write_text(function_tool_source("fragile", "return 'fixed'"))
    eventually(lambda: _text_is(ld, "fragile", "fixed"))
    assert ld.wait_idle(10)  # the registry swaps before the statuses are published: let the batch end
    status = ld.file_status(path)
    assert status is not None and status.state is FileState.LOADED
    assert _removed(sets, "fragile") == []


# 9 ---------------------------------------------------------------------------------------------
def test_09_conflicting_name_moves_to_the_other_file_when_owner_drops_it(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    owner = write(tools_dir / "owner.py", function_tool_source("contested", "return 'owner'"))
    ld = make_loader(tools_dir)
    challenger = write(tools_dir / "challenger.py", function_tool_source("contested", "return 'challenger'"))
    status = eventually(lambda: (s := ld.file_status(challenger)) and s.state is FileState.CONFLICT and s)
    assert status.conflicts == (("contested", owner),)
    assert call_text(ld, "contested") == "owner"
    owner.write_text(function_tool_source("other_name", "return 'renamed'"))
    eventually(lambda: _text_is(ld, "contested", "challenger"))
    assert ld.wait_idle(10)  # the registry swaps before the statuses are published: let the batch end
    status = ld.file_status(challenger)
    assert status is not None and status.state is FileState.LOADED
    assert call_text(ld, "other_name") == "renamed"


# 10 --------------------------------------------------------------------------------------------
@pytest.fixture
def probe(tmp_path: Path) -> Path:
    """A folder the tool files use to talk to the test (files work across processes too)."""
    folder = tmp_path / "probe"
    folder.mkdir()
    return folder


SLOW_CLASS = """
import pathlib, time
from loader import tool

PROBE = pathlib.Path(PROBE_DIR)

@tool(name="slow", description="Waits for the test.", parameters={})
class Slow:
    def execute(self, params):
        (PROBE / "started").touch()
        deadline = time.monotonic() + 20
        while not (PROBE / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        return "VERSION"

    def cleanup(self):
        with open(PROBE / "log", "a") as log:
            log.write("cleanup VERSION\\n")
"""


def _probe_log(probe: Path) -> list[str]:
    log = probe / "log"
    return log.read_text().splitlines() if log.exists() else []


def test_10_in_flight_call_finishes_on_its_version_then_cleanup(
    tools_dir: Path, make_loader: MakeLoader, probe: Path
) -> None:
    source = SLOW_CLASS.replace("PROBE_DIR", repr(str(probe)))
    path = write(tools_dir / "slow.py", source.replace("VERSION", "v1"))
    ld = make_loader(tools_dir)
    results: list[str] = []
    caller = threading.Thread(target=lambda: results.append(call_text(ld, "slow")))
    caller.start()
    eventually(lambda: (probe / "started").exists())
    first = ld.registry.get("slow")
    v1 = ld.file_status(path)
    assert first is not None and v1 is not None and v1.content_hash is not None
    path.write_text(source.replace("VERSION", "v2"))
    eventually(
        lambda: (
            (s := ld.file_status(path)) is not None
            and s.state is FileState.LOADED
            and s.content_hash not in (None, v1.content_hash)
            and ld.registry.get("slow") not in (None, first)
        ),
        message="v2 is registered while v1 still serves its call",
    )
    assert _probe_log(probe) == []  # the old instance is still serving a call
    (probe / "release").touch()
    caller.join(10)
    assert results == ["v1"]
    eventually(lambda: _probe_log(probe) == ["cleanup v1"])
    assert call_text(ld, "slow") == "v2"


# 11 --------------------------------------------------------------------------------------------
def test_11_two_hundred_files_at_once_all_load(
    tmp_path: Path, tools_dir: Path, make_loader: MakeLoader
) -> None:
    ld = make_loader(tools_dir)
    staging = tmp_path / "checkout"
    for i in range(200):
        write(staging / f"pkg{i % 5}" / f"t{i}.py", function_tool_source(f"t{i}", f"return '{i}'"))
    for sub in staging.iterdir():
        shutil.copytree(sub, tools_dir / sub.name)
    expected = {f"t{i}" for i in range(200)}
    eventually(lambda: set(ld.registry.names()) == expected, timeout=30)
    assert ld.wait_idle(20)
    assert set(ld.registry.names()) == expected
    assert call_text(ld, "t137") == "137"


# 12 --------------------------------------------------------------------------------------------
def test_12_stuck_import_while_watching_does_not_block_others(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "ok.py", function_tool_source("ok", "return 'fine'"))
    config = LoaderConfig(
        # ok.py must import within the deadline on a busy machine too; stuck.py never does.
        timings=FAST.timings,
        import_timeout=3.0,
        supervise_interval=0.1,
        entry_point_plugins=False,
    )
    ld = make_loader(tools_dir, config=config)
    stuck = write(tools_dir / "stuck.py", "while True:\n    pass\n")
    status = eventually(lambda: (s := ld.file_status(stuck)) and s.state is FileState.STUCK and s)
    assert status.error is not None and status.error.line in (1, 2)
    assert call_text(ld, "ok") == "fine"
    write(tools_dir / "later.py", function_tool_source("later", "return 'later'"))
    eventually(lambda: _text_is(ld, "later", "later"))
    stuck.write_text(function_tool_source("unstuck", "return 'free'"))
    eventually(lambda: _text_is(ld, "unstuck", "free"))


# 13 --------------------------------------------------------------------------------------------
def test_13_folder_missing_at_start_then_deleted_and_recreated(
    tmp_path: Path, make_loader: MakeLoader
) -> None:
    folder = tmp_path / "later"
    ld = make_loader(folder)
    assert ld.registry.names() == ()
    write(folder / "a.py", function_tool_source("appeared", "return 'yes'"))
    eventually(lambda: _text_is(ld, "appeared", "yes"))
    shutil.rmtree(folder)
    eventually(lambda: "appeared" not in ld.registry)
    write(folder / "b.py", function_tool_source("back", "return 'again'"))
    eventually(lambda: _text_is(ld, "back", "again"))
    write(folder / "c.py", function_tool_source("third", "return '3'"))
    eventually(lambda: _text_is(ld, "third", "3"))


def test_13_file_moved_in_from_outside_loads(
    tmp_path: Path, tools_dir: Path, make_loader: MakeLoader
) -> None:
    ld = make_loader(tools_dir)
    outside = write(tmp_path / "elsewhere" / "incoming.py", function_tool_source("incoming", "return 'in'"))
    os.replace(outside, tools_dir / "incoming.py")
    eventually(lambda: _text_is(ld, "incoming", "in"))
    other = write(tmp_path / "elsewhere" / "dir" / "inner.py", function_tool_source("inner", "return 'dir'"))
    shutil.move(str(other.parent), str(tools_dir / "dir"))
    eventually(lambda: _text_is(ld, "inner", "dir"))


def _helper_chain(tools_dir: Path) -> Path:
    """``base`` imported by ``middle`` imported by tool ``user_a``; tool ``user_b`` imports ``base`` itself."""
    base = write(tools_dir / "base.py", "WORD = 'one'\n")
    write(tools_dir / "middle.py", "import base\n\ndef word():\n    return base.WORD\n")
    write(tools_dir / "user_a.py", "import middle\n" + function_tool_source("user_a", "return middle.word()"))
    write(tools_dir / "user_b.py", "from base import WORD\n" + function_tool_source("user_b", "return WORD"))
    return base


def test_helper_edit_reloads_every_dependent_transitively(tools_dir: Path, make_loader: MakeLoader) -> None:
    base = _helper_chain(tools_dir)
    # write_text truncates, then writes: a batch can read the helper empty in between (CI did, at
    # c3829d7), and the grace an empty helper gets must outlast a writer starved on a loaded machine.
    ld = make_loader(tools_dir, config=PATIENT_WITH_EMPTY)
    assert call_text(ld, "user_a") == "one" and call_text(ld, "user_b") == "one"
    assert ld.wait_idle(10)
    before = ld.module_executions
    base.write_text("WORD = 'two'\n")
    eventually(lambda: _text_is(ld, "user_a", "two") and _text_is(ld, "user_b", "two"))
    assert ld.wait_idle(10)
    assert ld.module_executions - before == 4  # base, middle, user_a, user_b: each once


def test_a_helper_read_empty_mid_save_runs_no_dependent_until_its_bytes_are_there(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    base = _helper_chain(tools_dir)
    ld = make_loader(tools_dir, config=PATIENT_WITH_EMPTY)
    assert call_text(ld, "user_b") == "one" and ld.wait_idle(10)
    events: list[LoaderEvent] = []
    ld.subscribe(events.append)
    before = ld.module_executions
    base.write_text("")  # a writer that empties the file and closes it, then fills it
    threading.Event().wait(0.15)  # an editor's pause, within the empty grace
    assert call_text(ld, "user_a") == "one" and call_text(ld, "user_b") == "one"
    base.write_text("WORD = 'two'\n")
    eventually(lambda: _text_is(ld, "user_a", "two") and _text_is(ld, "user_b", "two"))
    assert ld.wait_idle(10)
    assert ld.module_executions - before == 4, events  # each once, none against the empty helper
    assert {event.kind for event in events} == {LoaderEventKind.UPDATED}, events


def test_a_helper_that_stays_empty_reruns_its_dependents_after_the_grace(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    base = _helper_chain(tools_dir)
    ld = make_loader(tools_dir)
    assert call_text(ld, "user_b") == "one"
    base.write_text("")
    user_b = tools_dir / "user_b.py"
    failed = eventually(lambda: (s := ld.file_status(user_b)) and s.state is FileState.FAILED and s)
    assert failed.error is not None and "WORD" in failed.error.message
    assert call_text(ld, "user_b") == "one"  # its last good version keeps serving
    base.write_text("WORD = 'three'\n")
    eventually(lambda: _text_is(ld, "user_a", "three") and _text_is(ld, "user_b", "three"))


def test_broken_helper_keeps_dependents_on_last_good_version(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    helper = write(tools_dir / "helper.py", "WORD = 'good'\n")
    write(tools_dir / "user.py", "import helper\n" + function_tool_source("user", "return helper.WORD"))
    ld = make_loader(tools_dir)
    helper.write_text("WORD = 'broken\n")
    eventually(lambda: (s := ld.file_status(helper)) and s.state is FileState.FAILED)
    assert call_text(ld, "user") == "good"
    helper.write_text("WORD = 'mended'\n")
    eventually(lambda: _text_is(ld, "user", "mended"))


def test_calls_keep_working_while_another_file_reloads(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "steady.py", function_tool_source("steady", "return 'ok'"))
    path = write(tools_dir / "churn.py", function_tool_source("churn", "return 'v0'"))
    ld = make_loader(tools_dir)
    errors: list[str] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            for name in ("steady", "churn"):
                result = ld.registry.invoke(name, {})
                if result["status"] != "success":
                    errors.append(str(result))

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        for version in range(1, 15):
            path.write_text(function_tool_source("churn", f"return 'v{version}'"))
            eventually(partial(_text_is, ld, "churn", f"v{version}"))
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert errors == []


@pytest.mark.parametrize("isolation", ["thread"])  # process mode has one import worker: see README
def test_12_a_hanging_import_never_delays_other_files(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "ok.py", function_tool_source("ok", "return 'v1'"))
    config = replace(FAST, import_timeout=60.0, rescan_interval=0)
    ld = make_loader(tools_dir, config=config)
    hang = write(tools_dir / "hang.py", "import time\nwhile True:\n    time.sleep(0.01)\n")
    eventually(
        lambda: [p.path for p in ld.imports_in_progress()] == [hang], message="hang.py shown as importing"
    )
    write(tools_dir / "ok.py", function_tool_source("ok", "return 'v2'"))
    eventually(lambda: _text_is(ld, "ok", "v2"), message="the other file's edit is served")
    assert [p.path for p in ld.imports_in_progress()] == [hang], "the edit showed while hang.py still imports"
    hang.write_text(function_tool_source("freed", "return 'free'"))
    eventually(lambda: _text_is(ld, "freed", "free"))
    assert ld.imports_in_progress() == ()


def _stuck_at(ld: ToolLoader, path: Path, lines: tuple[int, ...]) -> bool:
    status = ld.file_status(path)
    return (
        status is not None
        and status.state is FileState.STUCK
        and status.error is not None
        and status.error.line in lines
    )


def test_12_stuck_saves_reuse_a_bounded_number_of_threads(tools_dir: Path, make_loader: MakeLoader) -> None:
    config = replace(FAST, import_timeout=0.3, rescan_interval=0)
    ld = make_loader(tools_dir, config=config)
    before = threading.active_count()
    stuck = tools_dir / "stuck.py"
    for round_ in range(12):
        stuck.write_text("import time\n" + "\n" * (2 * round_) + "while True:\n    time.sleep(0.01)\n")
        eventually(
            partial(_stuck_at, ld, stuck, (2 * round_ + 2, 2 * round_ + 3)),
            message="each stuck save is reported where it hangs",
        )
    assert threading.active_count() <= before + 5


def test_every_update_carries_how_each_tool_spec_changed(tools_dir: Path, make_loader: MakeLoader) -> None:
    calc = write(
        tools_dir / "calc.py",
        "from loader import tool\n\n@tool\ndef calc(a: int, b: int) -> int:\n    '''Add.'''\n    return a + b\n",
    )
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    events: list[LoaderEvent] = []
    ld.subscribe(events.append)
    calc.write_text(
        "from loader import tool\n\n@tool\ndef calc(b: int) -> int:\n    '''Add.'''\n    return b\n"
    )
    event = eventually(lambda: next((e for e in events if e.kind is LoaderEventKind.UPDATED), None))
    ((name, change),) = event.status.spec_changes
    assert name == "calc" and change.kind.value == "breaking"
    assert any("'a'" in reason and "removed" in reason for reason in change.reasons), change.reasons
    status = ld.file_status(calc)
    assert status is not None and status.breaking_changes == event.status.spec_changes
    events.clear()
    calc.write_text(
        "from loader import tool\n\n@tool\ndef calc(b: int, c: int = 0) -> int:\n    '''Add.'''\n    return b + c\n"
    )
    event = eventually(lambda: next((e for e in events if e.kind is LoaderEventKind.UPDATED), None))
    assert [(n, c.kind.value) for n, c in event.status.spec_changes] == [("calc", "additive")]
    status = ld.file_status(calc)
    assert status is not None and status.breaking_changes == ()


# Event-only ------------------------------------------------------------------------------------
# With the periodic rescan off, every change below is seen through the watcher's file events or
# not at all: a watcher that dropped a kind of event would fail here (with the rescan on, the
# tests above pass by polling alike).


def test_events_only_atomic_save_reloads(tools_dir: Path, make_loader: MakeLoader) -> None:
    path = write(tools_dir / "atomic.py", function_tool_source("atomic", "return 'v1'"))
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    sets = _recorder(ld)
    for version in (2, 3):
        _atomic_rename(path, function_tool_source("atomic", f"return 'v{version}'"))
        eventually(partial(_text_is, ld, "atomic", f"v{version}"), message=f"v{version} served")
    assert ld.wait_idle(10)
    assert _removed(sets, "atomic") == []
    assert [s.path.name for s in ld.status(include_removed=False)] == ["atomic.py"]


def test_events_only_move_keeps_the_tool_under_its_new_path(tools_dir: Path, make_loader: MakeLoader) -> None:
    before = write(tools_dir / "before.py", function_tool_source("mover", "return 'same'"))
    (tools_dir / "sub").mkdir()
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    sets = _recorder(ld)
    after = tools_dir / "sub" / "after.py"
    os.replace(before, after)
    eventually(lambda: ld.registry.source_of("mover") == str(after), message="mover follows the move")
    assert ld.wait_idle(10)
    assert call_text(ld, "mover") == "same"
    assert _removed(sets, "mover") == []
    status = ld.file_status(before)
    assert status is not None and status.state is FileState.REMOVED


def test_events_only_delete_removes_the_tool(tools_dir: Path, make_loader: MakeLoader) -> None:
    doomed = write(tools_dir / "doomed.py", function_tool_source("doomed"))
    write(tools_dir / "stays.py", function_tool_source("stays", "return 'here'"))
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    sets = _recorder(ld)
    doomed.unlink()
    eventually(lambda: "doomed" not in ld.registry, message="doomed removed")
    assert ld.wait_idle(10)
    assert _removed(sets, "doomed") != []
    assert call_text(ld, "stays") == "here"


def test_events_only_new_sub_folder_is_watched(tools_dir: Path, make_loader: MakeLoader) -> None:
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    write(tools_dir / "fresh" / "deeper" / "first.py", function_tool_source("first", "return '1'"))
    eventually(lambda: _text_is(ld, "first", "1"), message="a file in a new sub-folder loads")
    write(tools_dir / "fresh" / "deeper" / "second.py", function_tool_source("second", "return '2'"))
    eventually(lambda: _text_is(ld, "second", "2"), message="the new sub-folder is watched afterwards")
    (tools_dir / "fresh" / "deeper" / "first.py").write_text(function_tool_source("first", "return '1b'"))
    eventually(lambda: _text_is(ld, "first", "1b"), message="an edit in the new sub-folder reloads")


def test_missing_helper_appearing_later_loads_the_tool(tools_dir: Path, make_loader: MakeLoader) -> None:
    user = write(
        tools_dir / "needs_helper.py",
        "import late_helper\n" + function_tool_source("needs_helper", "return late_helper.WORD"),
    )
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    status = ld.file_status(user)
    assert status is not None and status.state is FileState.FAILED
    assert status.error is not None and "late_helper" in status.error.message
    before = user.stat().st_mtime_ns
    write(tools_dir / "late_helper.py", "WORD = 'arrived'\n")
    eventually(
        lambda: _text_is(ld, "needs_helper", "arrived"), message="the tool loads once its helper exists"
    )
    assert ld.wait_idle(10)  # the registry swaps before the statuses are published: let the batch end
    status = ld.file_status(user)
    assert status is not None and status.state is FileState.LOADED
    assert user.stat().st_mtime_ns == before  # the tool file itself was never touched


def test_helper_missing_from_an_edit_appearing_later_loads_the_edit(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    user = write(tools_dir / "user.py", function_tool_source("user", "return 'v1'"))
    ld = make_loader(tools_dir, config=EVENTS_ONLY)
    user.write_text("import helper_v2\n" + function_tool_source("user", "return helper_v2.WORD"))
    eventually(lambda: (s := ld.file_status(user)) is not None and s.state is FileState.FAILED)
    assert call_text(ld, "user") == "v1"  # the last good version serves meanwhile
    write(tools_dir / "helper_v2.py", "WORD = 'v2'\n")
    eventually(lambda: _text_is(ld, "user", "v2"), message="the edit loads once its helper exists")
