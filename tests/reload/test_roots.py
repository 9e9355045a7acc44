"""Roots and files that move under the loader, on the real filesystem with the real watchdog observer.

Every test here runs with the periodic rescan off (and folder supervision slowed
to a crawl), so it proves that file events alone keep the registry right.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from fs_layouts import ConfigMapLayout, GitSyncLayout
from support import FAST, call_text, eventually, function_tool_source, require

from loader import tool
from loader.registry.changes import ChangeKind, RegistryChangeSet
from loader.registry.tool_registry import ToolRegistry
from loader.reload.disk import IS_A_LINK, NotARegularFile, names_a_file, read_file, read_unlinked_file
from loader.reload.loader import LoaderConfig, ToolLoader
from loader.reload.watcher import WatchMode
from loader.status import FileState, FileStatus, LoadErrorKind

EVENTS_ONLY = replace(FAST, rescan_interval=0, supervise_interval=3600.0)


@pytest.fixture
def events_loader(make_loader: Callable[..., ToolLoader]) -> Callable[..., ToolLoader]:
    """``make_loader`` with the rescan off, for tests that prove OS events alone suffice.

    When the OS gives no more watches the loader polls instead; such a run would
    prove nothing about events, so it is skipped (the machine's inotify instances
    are shared by every process of the user).
    """

    def build(*paths: Path, config: LoaderConfig = EVENTS_ONLY) -> ToolLoader:
        loader = make_loader(*paths, config=config)
        modes = loader.watch_modes()
        if any(mode is WatchMode.POLLING for mode in modes.values()):
            pytest.skip(f"the OS gives no more watches, folders are polled: {modes}")
        return loader

    return build


def _recorder(loader: ToolLoader) -> list[RegistryChangeSet]:
    sets: list[RegistryChangeSet] = []
    loader.registry.subscribe(sets.append)
    return sets


def _removed(sets: list[RegistryChangeSet], name: str) -> list[int]:
    return [s.generation for s in sets for c in s.changes if c.name == name and c.kind is ChangeKind.REMOVED]


def _differs(loader: ToolLoader, path: Path, before: FileStatus | None) -> bool:
    return loader.file_status(path) != before


def _text_is(loader: ToolLoader, name: str, expected: str) -> bool:
    return name in loader.registry and call_text(loader, name) == expected


@contextmanager
def never_vanishes(loader: ToolLoader, *names: str) -> Iterator[list[str]]:
    """Poll the registry on a thread for the whole block; the list collects every moment a name was missing."""
    missing: list[str] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            snapshot = loader.registry.snapshot()
            missing.extend(name for name in names if name not in snapshot)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield missing
    finally:
        stop.set()
        thread.join(10)


def _revision(greet: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    files = {
        "greet.py": function_tool_source("greet", f"return {greet!r}"),
        "stable.py": function_tool_source("stable", "return 'same'"),
    }
    files.update(extra or {})
    return files


# 1 git-sync ------------------------------------------------------------------------------------
def test_git_sync_flip_reloads_changed_files_keeps_unchanged_and_never_drops(
    tmp_path: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    layout = GitSyncLayout(tmp_path / "git")
    layout.sync(_revision("v1", {"dropped.py": function_tool_source("dropped")}))
    ld = events_loader(layout.link)
    assert ld.paths == (layout.link,)
    assert set(ld.registry.names()) == {"greet", "stable", "dropped"}
    sets = _recorder(ld)
    stable = ld.registry.get("stable")
    with never_vanishes(ld, "greet", "stable") as missing:
        for version in ("v2", "v3", "v4"):
            layout.sync(_revision(version, {"added.py": function_tool_source("added")}))
            eventually(partial(_text_is, ld, "greet", version), message=f"greet serves {version}")
            eventually(lambda: "added" in ld.registry and "dropped" not in ld.registry)
        assert ld.wait_idle(10)
    assert missing == []
    assert _removed(sets, "greet") == [] and _removed(sets, "stable") == []
    assert ld.registry.get("stable") is stable  # unchanged bytes: not reloaded
    states = {s.path.name: s.state for s in ld.status()}
    assert states == {
        "greet.py": FileState.LOADED,
        "stable.py": FileState.LOADED,
        "added.py": FileState.LOADED,
        "dropped.py": FileState.REMOVED,
    }
    assert all(s.path.parent == layout.link for s in ld.status())


def test_git_sync_flip_is_followed_by_the_links_event_even_if_the_old_worktree_stays(
    tmp_path: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    """Nothing happens inside the old target, so only the rename of the link can tell."""
    layout = GitSyncLayout(tmp_path / "git")
    layout.sync(_revision("v1"))
    ld = events_loader(layout.link)
    sets = _recorder(ld)
    for version in ("v2", "v3"):
        layout.sync(_revision(version), keep_old=True)
        eventually(partial(_text_is, ld, "greet", version), message=f"greet serves {version}")
    assert _removed(sets, "greet") == []


def test_git_sync_flip_is_followed_when_the_root_is_a_folder_inside_the_link(
    tmp_path: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    layout = GitSyncLayout(tmp_path / "git")
    layout.sync({f"tools/{k}": v for k, v in _revision("v1").items()})
    ld = events_loader(layout.link / "tools")
    sets = _recorder(ld)
    for version in ("v2", "v3"):
        layout.sync({f"tools/{k}": v for k, v in _revision(version).items()})
        eventually(partial(_text_is, ld, "greet", version))
    assert _removed(sets, "greet") == []


def test_git_sync_edits_inside_the_new_worktree_are_seen(
    tmp_path: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    layout = GitSyncLayout(tmp_path / "git")
    layout.sync(_revision("v1"))
    ld = events_loader(layout.link)
    worktree = layout.sync(_revision("v2"))
    eventually(lambda: _text_is(ld, "greet", "v2"))
    (worktree / "greet.py").write_text(function_tool_source("greet", "return 'edited'"))
    eventually(lambda: _text_is(ld, "greet", "edited"))


# 1 ConfigMap -----------------------------------------------------------------------------------
def test_configmap_data_swap_is_picked_up_by_events(
    tmp_path: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    layout = ConfigMapLayout(tmp_path / "volume")
    layout.update(_revision("v1", {"dropped.py": function_tool_source("dropped")}))
    ld = events_loader(layout.folder)
    assert set(ld.registry.names()) == {"greet", "stable", "dropped"}
    sets = _recorder(ld)
    stable = ld.registry.get("stable")
    with never_vanishes(ld, "greet", "stable") as missing:
        for version in ("v2", "v3"):
            layout.update(_revision(version, {"added.py": function_tool_source("added")}))
            eventually(partial(_text_is, ld, "greet", version), message=f"greet serves {version}")
            eventually(lambda: "added" in ld.registry and "dropped" not in ld.registry)
        assert ld.wait_idle(10)
    assert missing == []
    assert _removed(sets, "greet") == [] and _removed(sets, "stable") == []
    assert ld.registry.get("stable") is stable


# 2 ownership and races -------------------------------------------------------------------------
def test_a_moved_file_keeps_its_names_against_a_waiting_claimant(
    tools_dir: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    greet = tools_dir / "greet.py"
    greet.write_text(function_tool_source("greet", "return 'owner'"))
    ld = events_loader(tools_dir)
    rival = tools_dir / "greet2.py"
    rival.write_text(function_tool_source("greet", "return 'rival'"))
    eventually(lambda: (s := ld.file_status(rival)) is not None and s.state is FileState.CONFLICT)
    sets = _recorder(ld)
    hello = tools_dir / "hello.py"
    with never_vanishes(ld, "greet") as missing:
        os.rename(greet, hello)
        eventually(lambda: ld.registry.source_of("greet") == str(hello))
        assert ld.wait_idle(10)
    assert missing == [] and _removed(sets, "greet") == []
    assert call_text(ld, "greet") == "owner"
    status = ld.file_status(rival)
    assert status is not None and status.state is FileState.CONFLICT
    assert status.conflicts == (("greet", hello),)


def _vim_save(path: Path, text: str, meanwhile: Callable[[], None]) -> None:
    """vim with ``writebackup``: rename the file to a backup, write it anew, drop the backup.

    ``meanwhile`` runs while the file is absent (another file is created then).
    """
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    meanwhile()
    path.write_text(text)
    backup.unlink()


def _temp_then_rename(path: Path, text: str, meanwhile: Callable[[], None]) -> None:
    """Write a temporary under another name, then rename it over the file."""
    temp = path.with_name(f".{path.name}.swx")
    temp.write_text(text)
    meanwhile()
    os.rename(temp, path)


@pytest.mark.parametrize(
    "save",
    [
        _vim_save,
        _temp_then_rename,
    ],
)
def test_a_save_coinciding_with_another_file_created_never_drops_its_tools(
    tools_dir: Path,
    events_loader: Callable[..., ToolLoader],
    save: Callable[[Path, str, Callable[[], None]], None],
) -> None:
    saved = tools_dir / "saved.py"
    saved.write_text(function_tool_source("saved", "return 'v0'"))
    # A long grace: only a bug, never a slow machine, can drop the saved file's tools here.
    ld = events_loader(
        tools_dir, config=replace(EVENTS_ONLY, timings=replace(FAST.timings, disappear_grace=5.0))
    )
    sets = _recorder(ld)

    def create_another(version: int) -> None:
        (tools_dir / f"new_{version}.py").write_text(function_tool_source(f"new_{version}"))
        eventually(lambda: f"new_{version}" in ld.registry, message="the other file loaded")

    with never_vanishes(ld, "saved") as missing:
        for version in range(1, 6):
            save(
                saved,
                function_tool_source("saved", f"return 'v{version}'"),
                partial(create_another, version),
            )
            eventually(partial(_text_is, ld, "saved", f"v{version}"))
        assert ld.wait_idle(10)
    assert missing == [] and _removed(sets, "saved") == []


def test_truncate_then_write_coinciding_with_a_helper_edit_never_drops_tools(
    tools_dir: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    helper = tools_dir / "helper.py"
    helper.write_text("WORD = 'h0'\n")
    user = tools_dir / "user.py"
    user.write_text("import helper\n" + function_tool_source("user", "return helper.WORD"))
    ld = events_loader(tools_dir)
    sets = _recorder(ld)
    with never_vanishes(ld, "user") as missing:
        for version in range(1, 4):
            before = ld.file_status(helper)
            with open(user, "w") as handle:  # truncated now, written once the helper has reloaded
                handle.flush()
                helper.write_text(f"WORD = 'h{version}'\n")
                eventually(partial(_differs, ld, helper, before), message="helper reloaded")
                handle.write("import helper\n" + function_tool_source("user", "return helper.WORD + '!'"))
            eventually(partial(_text_is, ld, "user", f"h{version}!"))
            user.write_text("import helper\n" + function_tool_source("user", "return helper.WORD"))
            eventually(partial(_text_is, ld, "user", f"h{version}"))
        assert ld.wait_idle(10)
    assert missing == [] and _removed(sets, "user") == []


# 3 unreadable files ----------------------------------------------------------------------------
def _dangling_link(path: Path) -> None:
    temp = path.with_name(".link.tmp")
    os.symlink("no_such_target.py", temp)
    os.replace(temp, path)


def _link_loop(path: Path) -> None:
    temp = path.with_name(".loop.tmp")
    os.symlink(path.name, temp)
    os.replace(temp, path)


def _fifo(path: Path) -> None:
    temp = path.with_name(".fifo.tmp")
    os.mkfifo(temp)
    os.replace(temp, path)


UNREADABLE = {
    "dangling_link": (_dangling_link, "FileNotFoundError"),
    "link_loop": (_link_loop, "OSError"),
    "fifo": (_fifo, "NotARegularFile"),
}


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_a_file_that_cannot_be_read_fails_with_the_os_error_and_keeps_serving(
    tools_dir: Path, events_loader: Callable[..., ToolLoader], kind: str
) -> None:
    path = tools_dir / "shaky.py"
    path.write_text(function_tool_source("shaky", "return 'good'"))
    ld = events_loader(tools_dir)
    sets = _recorder(ld)
    make_unreadable, exc_type = UNREADABLE[kind]
    make_unreadable(path)
    status = eventually(lambda: (s := ld.file_status(path)) and s.state is FileState.FAILED and s)
    assert status.error is not None and status.error.exc_type == exc_type
    assert status.error.kind is LoadErrorKind.UNREADABLE
    assert status.tools == ("shaky",) and call_text(ld, "shaky") == "good"
    assert ld.wait_idle(10)
    path.unlink()
    path.write_text(function_tool_source("shaky", "return 'back'"))
    eventually(lambda: _text_is(ld, "shaky", "back"))
    assert ld.wait_idle(10)  # the registry swaps before the statuses are published: let the batch end
    status = ld.file_status(path)
    assert status is not None and status.state is FileState.LOADED
    assert _removed(sets, "shaky") == []


def test_a_new_file_that_cannot_be_read_is_reported(
    tools_dir: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    ld = events_loader(tools_dir)
    os.symlink("missing_target.py", tools_dir / "orphan.py")
    status = eventually(lambda: ld.file_status(tools_dir / "orphan.py"))
    assert status.state is FileState.FAILED and status.tools == ()


_CHMOD_SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from support import FAST, function_tool_source
from loader.reload.loader import ToolLoader

folder = Path(sys.argv[1])
path = folder / "locked.py"
path.write_text(function_tool_source("locked", "return 'good'"))
loader = ToolLoader([folder], config=FAST)
loader.scan()
path.chmod(0)
loader.scan()  # the same transaction a file event runs, without depending on the watch mode
failed = loader.file_status(path)
path.chmod(0o644)
loader.scan()
recovered = loader.file_status(path)
loader.close()
print(json.dumps({
    "failed": [failed.state, failed.error.exc_type, failed.error.kind, list(failed.tools)],
    "recovered": [recovered.state, list(recovered.tools)],
}))
"""


def test_chmod_000_fails_with_permission_error_not_removed(tmp_path: Path) -> None:
    """As root, DAC checks are bypassed, so the loader runs in a child without those capabilities."""
    folder = tmp_path / "tools"
    folder.mkdir()
    command = [sys.executable, "-c", _CHMOD_SCRIPT, str(folder), str(Path(__file__).resolve().parents[1])]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: chmod 000 cannot make a file unreadable")
        command = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["failed"] == ["failed", "PermissionError", "unreadable", ["locked"]]
    assert result["recovered"] == ["loaded", ["locked"]]


# 3 watch limit ---------------------------------------------------------------------------------
_WATCH_LIMIT_SCRIPT = """
import json, logging, sys
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from support import FAST, eventually, function_tool_source
from loader.reload.loader import ToolLoader

# /proc/sys/user/ limits belong to this user namespace: the host's watchers are not affected.
Path("/proc/sys/user/max_inotify_instances").write_text("0")
warnings = []
handler = logging.Handler()
handler.emit = warnings.append
logging.getLogger("loader.reload.watcher").addHandler(handler)
folder = Path(sys.argv[1])
config = replace(FAST, rescan_interval=0, supervise_interval=0.02)
with ToolLoader([folder], config=config) as loader:
    (folder / "late.py").write_text(function_tool_source("late", "return 'polled'"))
    eventually(lambda: "late" in loader.registry, message="a new file seen by polling")
    (folder / "late.py").write_text(function_tool_source("late", "return 'again'"))
    eventually(lambda: loader.registry.invoke("late", {})["content"][0]["text"] == "again")
    modes = {str(k): v.value for k, v in loader.watch_modes().items()}
print(json.dumps({"modes": modes, "warnings": [w.getMessage() for w in warnings if w.levelno >= logging.WARNING]}))
"""


def test_over_the_inotify_limit_the_folder_is_polled_with_one_warning(tmp_path: Path) -> None:
    """The limit is lowered inside a fresh user namespace, which has limits of its own."""
    unshare = _unshare_lowering_the_inotify_limit()
    folder = tmp_path / "tools"
    folder.mkdir()
    command = [
        unshare,
        "-U",
        "-r",
        sys.executable,
        "-c",
        _WATCH_LIMIT_SCRIPT,
        str(folder),
        str(Path(__file__).resolve().parents[1]),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["modes"] == {str(folder): "polling"}
    assert len(result["warnings"]) == 1, result["warnings"]
    assert "polling the folder instead" in result["warnings"][0]


_INOTIFY_INSTANCES = "raise fs.inotify.max_user_instances (sysctl), or stop what holds them"


def _unshare_lowering_the_inotify_limit() -> str:
    """``unshare``, where it can make a user namespace whose inotify limit can be lowered (else skip or fail)."""
    unshare = shutil.which("unshare")
    probe = ["sh", "-c", "echo 0 > /proc/sys/user/max_inotify_instances"]
    works = (
        unshare is not None
        and subprocess.run([unshare, "-U", "-r", *probe], capture_output=True).returncode == 0
    )
    require(
        works,
        "cannot lower the inotify limit in a user namespace here",
        "install util-linux (unshare) and allow unprivileged user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1; user.max_user_namespaces > 0)",
    )
    assert unshare is not None
    return unshare


def _inotify_available() -> bool:
    """Whether this user may open one more inotify instance now (the limit is shared by the whole machine)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init()
    if fd < 0:
        return False
    os.close(fd)
    return True


_EVENTS_BACK_SCRIPT = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from support import eventually
from loader.reload.watcher import ChangeScheduler, FolderWatcher, WatchMode, WatchTimings

limit = Path("/proc/sys/user/max_inotify_instances")
limit.write_text("0")
seen = set()
scheduler = ChangeScheduler(seen.update)
watcher = FolderWatcher(scheduler, WatchTimings(), recursive=True, on_dir=lambda p: None, events_retry=0.05)
folder = Path(sys.argv[1])
watcher.start()
scheduler.start()
assert watcher.ensure_watch(folder) and watcher.mode(folder) is WatchMode.POLLING
limit.write_text("16")
eventually(lambda: watcher.ensure_watch(folder) or watcher.mode(folder) is WatchMode.EVENTS)
(folder / "a.py").write_text("x = 1\\n")
eventually(lambda: folder / "a.py" in seen, message="an event after polling stopped")
scheduler.stop()
watcher.stop()
print("ok")
"""


def test_a_polled_folder_gets_events_again_once_the_os_has_watches(tmp_path: Path) -> None:
    unshare = _unshare_lowering_the_inotify_limit()
    require(_inotify_available(), "no inotify instance is available to this user now", _INOTIFY_INSTANCES)
    folder = tmp_path / "tools"
    folder.mkdir()
    command = [
        unshare,
        "-U",
        "-r",
        sys.executable,
        "-c",
        _EVENTS_BACK_SCRIPT,
        str(folder),
        str(Path(__file__).resolve().parents[1]),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_watch_modes_say_events_normally_and_none_for_a_missing_folder(
    tmp_path: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    if not sys.platform.startswith("linux") or not _inotify_available():
        pytest.skip("no inotify instance available to this user right now")
    present = tmp_path / "present"
    present.mkdir()
    absent = tmp_path / "absent"
    ld = make_loader(present, absent, config=EVENTS_ONLY)
    assert ld.watch_modes() == {present: WatchMode.EVENTS, absent: WatchMode.NONE}
    ld.stop()
    assert ld.watch_modes() == {present: WatchMode.NONE, absent: WatchMode.NONE}


# 4 stop, close and with ------------------------------------------------------------------------
def _threads_settle_to(baseline: int) -> bool:
    return threading.active_count() <= baseline


def test_two_hundred_with_blocks_release_threads_and_modules(tools_dir: Path) -> None:
    (tools_dir / "alpha.py").write_text(function_tool_source("alpha"))
    baseline = threading.active_count()
    modules: set[str] = set()
    for _ in range(200):
        with ToolLoader([tools_dir], config=EVENTS_ONLY) as ld:
            assert call_text(ld, "alpha") == "v1"
            modules.update(s.module_name for s in ld.status())
    eventually(lambda: _threads_settle_to(baseline), message=f"threads back to {baseline}")
    assert not modules & set(sys.modules)


def test_two_hundred_start_stop_cycles_do_not_grow_threads(tools_dir: Path) -> None:
    path = tools_dir / "alpha.py"
    path.write_text(function_tool_source("alpha"))
    baseline = threading.active_count()
    ld = ToolLoader([tools_dir], config=EVENTS_ONLY)
    try:
        ld.scan()
        for version in range(200):
            ld.start()
            if version % 50 == 0:
                path.write_text(function_tool_source("alpha", f"return 'v{version}'"))
                eventually(partial(_text_is, ld, "alpha", f"v{version}"))
            ld.stop()
        eventually(lambda: _threads_settle_to(baseline), message=f"threads back to {baseline}")
        # stop() keeps the tools and their modules: they still answer, and start() resumes.
        assert call_text(ld, "alpha") == "v150"
        status = ld.file_status(path)
        assert status is not None and status.module_name in sys.modules
    finally:
        ld.close()


def test_leaving_with_unregisters_only_the_loaders_tools_from_a_given_registry(tools_dir: Path) -> None:
    (tools_dir / "alpha.py").write_text(function_tool_source("alpha"))
    registry = ToolRegistry()
    registry.register(tool(by_hand))
    with ToolLoader([tools_dir], registry, config=EVENTS_ONLY):
        assert set(registry.names()) == {"alpha", "by_hand"}
    assert registry.names() == ("by_hand",)


def by_hand() -> str:
    """A tool registered by hand, not by the loader."""
    return "mine"


def test_read_file_tells_gone_from_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    assert read_file(path) == b"x = 1\n"
    assert read_file(tmp_path / "gone.py") is None
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    assert isinstance(read_file(tmp_path / "dangling.py"), FileNotFoundError)
    assert names_a_file(tmp_path / "dangling.py") and not names_a_file(tmp_path / "gone.py")
    (tmp_path / "dir.py").mkdir()
    assert isinstance(read_file(tmp_path / "dir.py"), IsADirectoryError)
    assert not names_a_file(tmp_path / "dir.py")
    os.mkfifo(tmp_path / "fifo.py")
    assert isinstance(read_file(tmp_path / "fifo.py"), NotARegularFile)  # and it did not block


def test_read_unlinked_file_reads_plain_files_whole_and_leaves_links_to_the_caller(tmp_path: Path) -> None:
    """The save path's read: a plain file in one read (however its size compares), a link never opened."""
    small, large = tmp_path / "small.py", tmp_path / "large.py"
    small.write_text("x = 1\n")
    large.write_bytes(b"#" * (3 << 20))  # more than one read's worth past its size
    for path in (small, large):
        read = read_unlinked_file(path)
        assert isinstance(read, tuple)
        data, st = read
        assert data == path.read_bytes() and st.st_size == len(data)
    (tmp_path / "empty.py").write_text("")
    read = read_unlinked_file(tmp_path / "empty.py")
    assert isinstance(read, tuple) and read[0] == b""
    # The file's identity and content stamp: its access time moves with every read, on a busy machine too.
    on_disk = os.stat(tmp_path / "empty.py")
    assert (read[1].st_ino, read[1].st_size, read[1].st_mtime_ns) == (on_disk.st_ino, 0, on_disk.st_mtime_ns)
    os.symlink(small, tmp_path / "link.py")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    assert read_unlinked_file(tmp_path / "link.py") == IS_A_LINK
    assert read_unlinked_file(tmp_path / "dangling.py") == IS_A_LINK
    assert read_unlinked_file(tmp_path / "gone.py") is None
    (tmp_path / "dir.py").mkdir()
    assert read_unlinked_file(tmp_path / "dir.py") is None  # a folder is no file here
    os.mkfifo(tmp_path / "fifo.py")
    assert isinstance(read_unlinked_file(tmp_path / "fifo.py"), NotARegularFile)  # and it did not block


def test_a_file_vanishing_between_listing_and_stat_waits_out_its_grace(
    tools_dir: Path, events_loader: Callable[..., ToolLoader], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reconcile lists the folder, then a save renames the file away before its stat.

    The loader reconciles when it starts watching and in ``wait_idle``; a vim-style
    save (rename to a backup, write anew) landing between the listing and the stat
    once scheduled the file as changed (due at once) instead of gone (due after the
    disappear grace), and its tools vanished until the new file loaded.
    """
    saved = tools_dir / "saved.py"
    saved.write_text(function_tool_source("saved", "return 'v0'"))
    ld = events_loader(
        tools_dir, config=replace(EVENTS_ONLY, timings=replace(FAST.timings, disappear_grace=5.0))
    )
    reconciler = ld._reconciler
    eventually(lambda: ld._scheduler.quiet_for(1.0), message="the start's own reconcile ran")
    listing = reconciler._sources.list_sources

    def list_then_a_save_begins(root: Path, under: Path | None = None) -> list[Path]:
        found = listing(root, under)
        if saved in found and saved.exists():
            os.rename(saved, saved.with_name("saved.py~"))
            # The rename's event is in (the old name pending; the backup name is no source, so it is
            # not scheduled) before the stat: the order that lost the tools.
            eventually(lambda: ld._scheduler.pending() >= 1, message="the rename's event arrived")
        return found

    monkeypatch.setattr(reconciler._sources, "list_sources", list_then_a_save_begins)
    with never_vanishes(ld, "saved") as missing:
        ld._scheduler.submit(reconciler.reconcile_all)
        # Settled: the reconcile ran and nothing is due before the grace ends.
        eventually(lambda: not saved.exists() and ld._scheduler.quiet_for(1.0), message="reconcile settled")
        monkeypatch.undo()
        saved.write_text(function_tool_source("saved", "return 'v1'"))
        eventually(partial(_text_is, ld, "saved", "v1"))
    assert missing == []


def test_an_empty_save_while_newer_content_is_still_importing_gets_a_fresh_grace(
    tools_dir: Path, events_loader: Callable[..., ToolLoader]
) -> None:
    """Emptied, refilled with content whose import is slow, emptied again: the tools stay.

    The grace measures how long the file has been empty without a break. The
    refill is still importing when the file is emptied again, so nothing ended
    the first grace; its old start once dropped the tools at once.
    """
    path = tools_dir / "slowly.py"
    path.write_text(function_tool_source("slowly", "return 'v1'"))
    # Each grace must outlast the test's own next step (a write), which a loaded machine can hold up
    # for a second: a grace that ran out first would drop the tools by design, not by the bug.
    grace = 3.0
    config = replace(EVENTS_ONLY, empty_grace=grace, import_patience=0.05, import_timeout=30.0)
    ld = events_loader(tools_dir, config=config)
    with never_vanishes(ld, "slowly") as missing:
        path.write_text("")
        first = eventually(lambda: ld._records[path].grace, message="the empty-file grace began")
        path.write_text("import time\ntime.sleep(20)\n" + function_tool_source("slowly", "return 'slow'"))
        eventually(lambda: [i.path for i in ld.imports_in_progress()] == [path], message="the refill imports")
        # The first grace would be over now, had nothing ended it.
        eventually(
            lambda: time.monotonic() - first.since > grace + 0.2, message="the first grace's length passed"
        )
        path.write_text("")
        emptied_again = time.monotonic()

        def second_empty_seen() -> bool:
            grace_now = ld._records[path].grace
            return "slowly" not in ld.registry or (grace_now is not None and grace_now.since >= emptied_again)

        eventually(second_empty_seen, message="the second empty read was applied")
        path.write_text(function_tool_source("slowly", "return 'v2'"))
        eventually(partial(_text_is, ld, "slowly", "v2"))
    assert missing == []
