"""ToolLoader without watching: scanning, status records, errors, conflicts, discovery styles."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support import FAST, MakeLoader, call_text, function_tool_source, write

from loader.hookspecs import hookimpl
from loader.reload import batch as batch_module
from loader.reload.loader import LoaderConfig, ToolLoader
from loader.status import FileState, FileStatus, LoadErrorInfo
from loader.types import AgentTool


def test_scan_reports_every_file_with_its_tools(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "a.py", function_tool_source("alpha"))
    write(tools_dir / "sub" / "b.py", function_tool_source("beta"))
    write(tools_dir / "helpers.py", "X = 1\n")
    ld = make_loader(tools_dir, watch=False)
    by_name = {s.path.name: s for s in ld.status()}
    assert set(by_name) == {"a.py", "b.py", "helpers.py"}
    assert by_name["a.py"].tools == ("alpha",)
    assert by_name["b.py"].tools == ("beta",)
    assert by_name["helpers.py"].tools == ()
    for status in by_name.values():
        assert status.state is FileState.LOADED
        assert status.content_hash and len(status.content_hash) == 12
        assert status.loaded_at and status.load_seconds is not None
        assert status.module_name.startswith("_tool_loader.")
    assert sorted(ld.registry.names()) == ["alpha", "beta"]
    assert all(tool.is_dynamic for tool in ld.registry.list())


def test_not_recursive_skips_subfolders(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "a.py", function_tool_source("alpha"))
    write(tools_dir / "sub" / "b.py", function_tool_source("beta"))
    ld = make_loader(tools_dir, watch=False, recursive=False)
    assert ld.registry.names() == ("alpha",)


def test_editor_temporaries_hidden_files_and_non_python_are_ignored(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    source = function_tool_source("real")
    for name in [
        ".#x.py",
        "x.py~",
        ".x.py.swp",
        "x.py.tmp",
        "x.py___jb_tmp___",
        "x.py___jb_old___",
        "#x.py#",
        "notes.txt",
        ".hidden.py",
    ]:
        write(tools_dir / name, source.replace("real", "ghost"))
    write(tools_dir / ".git" / "hooks.py", source.replace("real", "ghost2"))
    write(tools_dir / "__pycache__" / "cached.py", source.replace("real", "ghost3"))
    write(tools_dir / "x.py", source)
    ld = make_loader(tools_dir, watch=False)
    assert ld.registry.names() == ("real",)
    assert [s.path.name for s in ld.status()] == ["x.py"]


def test_syntax_error_names_file_and_line(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "bad.py", "x = 1\n\ndef broken(:\n    pass\n")
    ld = make_loader(tools_dir, watch=False)
    status = ld.status()[0]
    assert status.state is FileState.FAILED
    assert status.error is not None
    assert status.error.exc_type == "SyntaxError"
    assert status.error.file == str(tools_dir / "bad.py")
    assert status.error.line == 3


def test_exception_at_import_points_at_the_tool_file_line(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "boom.py", "import os\n\nvalue = 1\nraise RuntimeError('no config')\n")
    ld = make_loader(tools_dir, watch=False)
    error = ld.status()[0].error
    assert error is not None
    assert (error.exc_type, error.message, error.line) == ("RuntimeError", "no config", 4)
    assert "boom.py" in error.traceback


def test_import_error_and_sys_exit_at_import_are_load_failures(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "missing.py", "import definitely_not_installed_xyz\n")
    write(tools_dir / "exits.py", "import sys\nsys.exit(3)\n")
    write(tools_dir / "ok.py", function_tool_source("fine"))
    ld = make_loader(tools_dir, watch=False)
    states = {s.path.name: s for s in ld.status()}
    assert states["missing.py"].error is not None
    assert states["missing.py"].error.exc_type == "ModuleNotFoundError"
    assert states["exits.py"].state is FileState.FAILED
    assert states["exits.py"].error is not None and states["exits.py"].error.exc_type == "SystemExit"
    assert call_text(ld, "fine") == "v1"


def test_duplicate_name_within_a_file_fails_the_file(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "dup.py",
        """
        from loader import tool

        @tool(name="same")
        def one() -> str:
            \"\"\"One.\"\"\"
            return "1"

        @tool(name="same")
        def two() -> str:
            \"\"\"Two.\"\"\"
            return "2"
        """,
    )
    ld = make_loader(tools_dir, watch=False)
    status = ld.status()[0]
    assert status.state is FileState.FAILED
    assert status.error is not None and "defined twice" in status.error.message
    assert "same" not in ld.registry


def test_conflict_between_files_first_owner_keeps_the_name(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "a_first.py", function_tool_source("shared", "return 'first'"))
    write(tools_dir / "b_second.py", function_tool_source("shared", "return 'second'"))
    ld = make_loader(tools_dir, watch=False)
    states = {s.path.name: s for s in ld.status()}
    assert states["a_first.py"].state is FileState.LOADED
    assert states["b_second.py"].state is FileState.CONFLICT
    assert states["b_second.py"].conflicts == (("shared", tools_dir / "a_first.py"),)
    assert call_text(ld, "shared") == "first"


def test_imported_tools_are_not_rediscovered_in_the_importing_file(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "base.py", function_tool_source("base_tool"))
    write(tools_dir / "reexport.py", "from base import base_tool\n")
    ld = make_loader(tools_dir, watch=False)
    states = {s.path.name: s for s in ld.status()}
    assert states["base.py"].tools == ("base_tool",)
    assert states["reexport.py"].state is FileState.LOADED
    assert states["reexport.py"].tools == ()


def test_module_tool_style(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "echo_mod.py",
        """
        TOOL_SPEC = {
            "name": "echo_mod",
            "description": "Echo the message back.",
            "inputSchema": {"json": {"type": "object", "properties": {"message": {"type": "string"}},
                                      "required": ["message"]}},
        }

        def echo_mod(tool_use, **kwargs):
            return {"toolUseId": tool_use["toolUseId"], "status": "success",
                    "content": [{"text": tool_use["input"]["message"]}]}
        """,
    )
    ld = make_loader(tools_dir, watch=False)
    tool = ld.registry.get("echo_mod")
    assert tool is not None and tool.tool_type == "module" and tool.is_dynamic
    assert tool.tool_spec["inputSchema"]["json"]["required"] == ["message"]
    assert call_text(ld, "echo_mod", {"message": "hey"}) == "hey"


def test_module_tool_without_function_fails_clearly(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "lonely.py",
        "TOOL_SPEC = {'name': 'lonely', 'description': 'x', 'inputSchema': {'json': {}}}\n",
    )
    ld = make_loader(tools_dir, watch=False)
    error = ld.status()[0].error
    assert error is not None and "no function named 'lonely'" in error.message


def test_class_tool_is_instantiated_with_args_from_a_plugin(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "greeter.py",
        """
        from loader import tool

        @tool(name="greeter", description="Greets someone.",
              parameters={"who": {"type": "string", "description": "Who to greet"}})
        class Greeter:
            def __init__(self, greeting="Hello"):
                self.greeting = greeting

            def execute(self, params):
                return f"{self.greeting}, {params['who']}!"
        """,
    )

    class Args:
        @hookimpl
        def tool_loader_class_tool_args(self, cls: type, path: Path) -> tuple[tuple[()], dict[str, Any]]:
            return (), {"greeting": "Howdy"}

    ld = make_loader(tools_dir, watch=False, plugins=[Args()])
    tool = ld.registry.get("greeter")
    assert tool is not None and tool.tool_type == "class"
    assert call_text(ld, "greeter", {"who": "Ada"}) == "Howdy, Ada!"


def test_discovery_plugin_asking_for_the_loader_still_works_with_a_deprecation_warning(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """``loader=`` in ``tool_loader_discover_tools`` gives way to ``class_args`` over one release."""
    write(tools_dir / "plain.py", "def shout(text):\n    return text.upper()\n")
    given: list[object] = []

    class OldStyle:
        @hookimpl
        def tool_loader_discover_tools(self, module: ModuleType, path: Path, loader: Any) -> list[AgentTool]:
            from loader import tool

            given.append(loader)
            shout = vars(module).get("shout")
            return [tool(shout)] if shout is not None else []

    with pytest.warns(DeprecationWarning, match="take class_args instead"):
        ld = make_loader(tools_dir, watch=False, plugins=[OldStyle()])
    assert ld.registry.names() == ("shout",)
    assert given == [ld]


def test_configure_hook_meets_a_finished_loader(tools_dir: Path, make_loader: MakeLoader) -> None:
    """Plugins are configured once every part of the loader is built, so they may use any of it."""
    write(tools_dir / "good.py", function_tool_source("good"))
    sources: list[list[Path]] = []

    class Configured:
        @hookimpl
        def tool_loader_configure(self, loader: ToolLoader) -> None:
            sources.append([status.path for status in loader.status()])
            loader.register_plugin(object(), name="late")  # needs the source finder

    ld = make_loader(tools_dir, watch=False, plugins=[Configured()])
    assert sources == [[]]
    assert ld.registry.names() == ("good",)


def test_third_party_plugin_discovers_and_filters(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "plain.py", "def shout(text):\n    return text.upper()\n")
    write(tools_dir / "skip_me.py", function_tool_source("skipped"))

    class PlainFunctions:
        """Turns every public function of a module into a tool (a toy third-party plugin)."""

        @hookimpl
        def tool_loader_discover_tools(self, module: ModuleType, path: Path) -> list[AgentTool]:
            from loader import tool

            return [
                tool(fn)
                for name, fn in vars(module).items()
                if callable(fn)
                and not name.startswith("_")
                and getattr(fn, "__module__", "") == module.__name__
                and not hasattr(fn, "tool_spec")
            ]

        @hookimpl
        def tool_loader_is_tool_source(self, path: Path, root: Path) -> bool | None:
            return False if path.name.startswith("skip_") else None

    ld = make_loader(tools_dir, watch=False, plugins=[PlainFunctions()])
    assert ld.registry.names() == ("shout",)


def test_hooks_announce_tools_and_failures(tools_dir: Path, make_loader: MakeLoader) -> None:
    seen: list[tuple[str, str]] = []

    class Recorder:
        @hookimpl
        def tool_loader_configure(self, loader: ToolLoader) -> None:
            seen.append(("configure", type(loader).__name__))

        @hookimpl
        def tool_loader_tool_added(self, tool: AgentTool, path: Path) -> None:
            seen.append(("added", tool.tool_name))

        @hookimpl
        def tool_loader_load_failed(self, path: Path, error: LoadErrorInfo) -> None:
            seen.append(("failed", f"{path.name}:{error.line}"))

        @hookimpl
        def tool_loader_file_status_changed(self, status: FileStatus, previous: FileStatus | None) -> None:
            seen.append(("status", f"{status.path.name}={status.state}"))

    write(tools_dir / "good.py", function_tool_source("good"))
    write(tools_dir / "bad.py", "raise ValueError('x')\n")
    make_loader(tools_dir, watch=False, plugins=[Recorder()])
    assert ("configure", "ToolLoader") in seen
    assert ("added", "good") in seen
    assert ("failed", "bad.py:1") in seen
    assert ("status", "good.py=loaded") in seen and ("status", "bad.py=failed") in seen


def test_a_plugin_that_raises_in_a_notification_does_not_break_loading(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    class Broken:
        @hookimpl
        def tool_loader_tool_added(self, tool: AgentTool, path: Path) -> None:
            raise RuntimeError("plugin bug")

    write(tools_dir / "good.py", function_tool_source("good"))
    ld = make_loader(tools_dir, watch=False, plugins=[Broken()])
    assert call_text(ld, "good") == "v1"


def test_symlink_leading_outside_is_refused(tmp_path: Path, tools_dir: Path, make_loader: MakeLoader) -> None:
    outside = write(tmp_path / "outside" / "evil.py", function_tool_source("evil"))
    os.symlink(outside, tools_dir / "evil.py")
    inside = write(tools_dir / "real" / "inner.py", function_tool_source("inner"))
    os.symlink(inside, tools_dir / "alias.py")
    os.symlink(tmp_path / "outside", tools_dir / "linked_dir")
    ld = make_loader(tools_dir, watch=False)
    states = {s.path.name: s for s in ld.status()}
    assert "evil" not in ld.registry
    assert states["evil.py"].state is FileState.FAILED
    assert (
        states["evil.py"].error is not None
        and "outside the watched folder" in states["evil.py"].error.message
    )
    assert "inner" in ld.registry


def test_a_file_under_a_folder_linked_outside_is_refused_without_being_opened(
    tmp_path: Path, tools_dir: Path, make_loader: MakeLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folders above a file are checked before the file is opened: no byte is read through the link."""
    write(tmp_path / "outside" / "evil.py", function_tool_source("evil"))
    os.symlink(tmp_path / "outside", tools_dir / "linked_dir")
    ld = make_loader(tools_dir, watch=False, recursive=True)
    opened: list[Path] = []

    def spying(real: Callable[[Path], object]) -> Callable[[Path], object]:
        def read(path: Path) -> object:
            opened.append(path)
            return real(path)

        return read

    for name in ("read_unlinked_file", "read_file_stat"):
        monkeypatch.setattr(batch_module, name, spying(getattr(batch_module, name)))
    evil = tools_dir / "linked_dir" / "evil.py"
    ld._apply({evil})
    status = ld.file_status(evil)
    assert status is not None and status.error is not None
    assert "outside the watched folder" in status.error.message
    assert "evil" not in ld.registry
    assert opened == []


def test_paths_are_resolved_at_creation(tmp_path: Path, tools_dir: Path) -> None:
    write(tools_dir / "a.py", function_tool_source("alpha"))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        ld = ToolLoader(["tools"], config=FAST)
        os.chdir(tools_dir)
        ld.scan()
        assert ld.paths == (tools_dir.resolve(),)
        assert ld.registry.names() == ("alpha",)
        ld.close()
    finally:
        os.chdir(cwd)


def test_close_unregisters_and_drops_modules(tools_dir: Path) -> None:
    import sys

    write(tools_dir / "a.py", function_tool_source("alpha"))
    ld = ToolLoader([tools_dir], config=FAST)
    report = ld.scan()
    (status,) = report.files
    assert status.module_name in sys.modules
    ld.close()
    assert "alpha" not in ld.registry
    assert status.module_name not in sys.modules


def test_stuck_import_is_reported_and_others_still_load(tools_dir: Path) -> None:
    write(tools_dir / "a_loop.py", "x = 0\nwhile True:\n    x += 1\n")
    write(tools_dir / "b_ok.py", function_tool_source("fine"))
    config = LoaderConfig(import_timeout=2.0, entry_point_plugins=False)  # b_ok.py must beat it
    ld = ToolLoader([tools_dir], config=config)
    try:
        ld.scan()
        states = {s.path.name: s for s in ld.status()}
        assert states["a_loop.py"].state is FileState.STUCK
        error = states["a_loop.py"].error
        assert error is not None and error.line in (2, 3) and "did not finish" in error.message
        assert call_text(ld, "fine") == "v1"
    finally:
        ld.close()


@pytest.mark.parametrize("name", ["bad name", "x" * 65])
def test_invalid_tool_names_fail_the_file(tools_dir: Path, make_loader: MakeLoader, name: str) -> None:
    write(
        tools_dir / "named.py",
        f"TOOL_SPEC = {{'name': {name!r}, 'description': 'd', 'inputSchema': {{'json': {{}}}}}}\n"
        "def named(tool_use, **kw):\n    return 'x'\n",
    )
    ld = make_loader(tools_dir, watch=False)
    status = ld.status()[0]
    assert status.state is FileState.FAILED
    assert status.error is not None and "Invalid tool name" in status.error.message


def test_third_party_plugins_load_from_the_entry_point_group(
    tmp_path: Path, tools_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution that declares a ``tool_loader.plugins`` entry point is picked up by every loader."""
    site = tmp_path / "site"
    write(
        site / "shouting_plugin.py",
        """
        from loader.hookspecs import hookimpl

        @hookimpl
        def tool_loader_is_tool_source(path, root):
            return False if path.name.startswith("draft_") else None
        """,
    )
    dist = site / "shouting_plugin-1.0.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: shouting-plugin\nVersion: 1.0\n")
    write(dist / "entry_points.txt", "[tool_loader.plugins]\nshouting = shouting_plugin\n")
    monkeypatch.syspath_prepend(str(site))
    write(tools_dir / "draft_idea.py", function_tool_source("draft_idea"))
    write(tools_dir / "final.py", function_tool_source("final"))
    config = LoaderConfig(entry_point_plugins=True)
    ld = make_loader_with(tools_dir, config)
    try:
        assert ld.registry.names() == ("final",)
        assert ld.plugin_manager.has_plugin("shouting")
    finally:
        ld.close()
    without = make_loader_with(tools_dir, LoaderConfig(entry_point_plugins=False))
    try:
        assert without.registry.names() == ("draft_idea", "final")
    finally:
        without.close()


def make_loader_with(folder: Path, config: LoaderConfig) -> ToolLoader:
    loader = ToolLoader([folder], config=config)
    loader.scan()
    return loader
