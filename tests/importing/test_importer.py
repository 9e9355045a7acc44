"""Namespaced imports: no bare names in sys.modules, siblings first, current bytes always."""

from __future__ import annotations

import colorsys
import json
import os
import sys
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from support import MakeLoader, call_text, write

from loader.importing.importer import NAMESPACE, ToolImporter


@pytest.fixture(params=["thread", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Tests that go through a loader hold in both modes (the worker uses the same importer)."""
    return str(request.param)


def _bare_names_from(folder: Path) -> list[str]:
    """Modules in sys.modules whose file lives in ``folder`` but whose name is not namespaced."""
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and Path(file).parent == folder and not name.startswith(NAMESPACE + "."):
            found.append(name)
    return found


def test_tool_named_like_stdlib_module_never_shadows_it(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "json.py",
        """
        from loader import tool

        @tool
        def json_tool() -> str:
            \"\"\"Says hi.\"\"\"
            return "hi"
        """,
    )
    ld = make_loader(tools_dir, watch=False)
    assert call_text(ld, "json_tool") == "hi"
    import json as json_again

    assert sys.modules["json"] is json
    assert json_again is json
    assert json.dumps({"a": 1}) == '{"a": 1}'
    assert _bare_names_from(tools_dir) == []


def test_sibling_file_named_like_stdlib_never_stands_in_for_it(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    write(tools_dir / "colorsys.py", "def rgb_to_yiq(*args):\n    return 'sibling'\n")
    write(
        tools_dir / "paint.py",
        """
        import colorsys
        from colorsys import rgb_to_yiq
        from loader import tool

        @tool
        def paint() -> str:
            \"\"\"Uses colorsys, which is the standard library's whatever the folder holds.\"\"\"
            return f"{colorsys.rgb_to_yiq(1.0, 1.0, 1.0)[0]:.2f}/{rgb_to_yiq(1.0, 1.0, 1.0)[0]:.2f}"
        """,
    )
    ld = make_loader(tools_dir, watch=False)
    assert call_text(ld, "paint") == "1.00/1.00"
    assert sys.modules["colorsys"] is colorsys
    assert _bare_names_from(tools_dir) == []


def test_import_helpers_from_and_relative_forms(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(tools_dir / "helpers.py", "GREETING = 'hello'\ndef shout(x):\n    return x.upper()\n")
    write(tools_dir / "pkg" / "__init__.py", "")
    write(tools_dir / "pkg" / "util.py", "def twice(x):\n    return x * 2\n")
    write(
        tools_dir / "greet.py",
        """
        import helpers
        from helpers import shout
        from . import helpers as rel
        from .helpers import GREETING
        import pkg.util
        from pkg import util
        from loader import tool

        @tool
        def greet() -> str:
            \"\"\"Greets.\"\"\"
            return "|".join([helpers.GREETING, shout("a"), rel.GREETING, GREETING,
                             pkg.util.twice("b"), util.twice("c")])
        """,
    )
    ld = make_loader(tools_dir, watch=False)
    assert call_text(ld, "greet") == "hello|A|hello|hello|bb|cc"
    assert "helpers" not in sys.modules
    assert "pkg" not in sys.modules and "pkg.util" not in sys.modules
    assert _bare_names_from(tools_dir) == []


def test_each_load_compiles_current_bytes_even_with_same_size_and_mtime(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """CPython's .pyc check trusts size + whole-second mtime; an edit keeping both must still be seen."""
    path = write(
        tools_dir / "ver.py",
        'from loader import tool\n\n@tool\ndef ver() -> str:\n    """v."""\n    return \'AAAA\'\n',
    )
    ld = make_loader(tools_dir, watch=False)
    assert call_text(ld, "ver") == "AAAA"
    stat = path.stat()
    path.write_text(path.read_text().replace("AAAA", "BBBB"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    ld.scan()
    assert call_text(ld, "ver") == "BBBB"
    assert not (tools_dir / "__pycache__").exists()


def test_module_names_are_private_and_distinct_per_loader(tools_dir: Path) -> None:
    first = ToolImporter([tools_dir])
    second = ToolImporter([tools_dir])
    try:
        a = first.module_name_for(tools_dir / "weather.py")
        b = second.module_name_for(tools_dir / "weather.py")
        assert a.startswith(NAMESPACE + ".") and b.startswith(NAMESPACE + ".")
        assert a != b
        assert a.endswith(".weather")
        odd = first.module_name_for(tools_dir / "my-tool.v2.py")
        assert all(part.isidentifier() for part in odd.split("."))
    finally:
        first.close()
        second.close()


def test_failed_load_keeps_previous_module_current(tools_dir: Path) -> None:
    importer = ToolImporter([tools_dir])
    try:
        path = tools_dir / "thing.py"
        good = importer.load(path, b"VALUE = 1\n")
        with pytest.raises(RuntimeError, match="boom"):
            importer.load(path, b"VALUE = 2\nraise RuntimeError('boom')\n")
        assert sys.modules[importer.module_name_for(path)] is good
        assert importer.executions == 2
    finally:
        importer.close()
    assert all(not n.startswith(importer.prefix) for n in sys.modules)


class _Recording(ToolImporter):
    """A subclass through the documented hooks only: bytes to run in place of a file, and what ran."""

    def __init__(self, roots: list[Path], given: dict[str, bytes]) -> None:
        super().__init__(roots)
        self.given = given
        self.ran: list[tuple[str, bytes]] = []

    def source_for(self, fullname: str) -> bytes | None:
        return self.given.pop(fullname, None)

    def module_ran(self, module: ModuleType, path: Path, source: bytes) -> None:
        self.ran.append((path.name, source))


def test_a_subclass_runs_given_bytes_and_hears_what_ran(tools_dir: Path) -> None:
    write(tools_dir / "helper.py", "WHERE = 'disk'\n")
    write(tools_dir / "top.py", "import helper\nWHERE = helper.WHERE\n")
    write(tools_dir / "pkg" / "__init__.py", "WHERE = 'disk'\n")
    importer = _Recording([tools_dir], {})
    try:
        importer.given[importer.module_name_for(tools_dir / "helper.py")] = b"WHERE = 'given'\n"
        top = importer.load(tools_dir / "top.py", (tools_dir / "top.py").read_bytes())
        assert top.WHERE == "given"
        assert importer.ran == [
            ("helper.py", b"WHERE = 'given'\n"),
            ("top.py", b"import helper\nWHERE = helper.WHERE\n"),
        ]
        name = importer.module_name_for(tools_dir / "pkg" / "__init__.py")
        package = importer.run_package(name, tools_dir / "pkg" / "__init__.py", b"WHERE = 'sent'\n")
        assert package.WHERE == "sent" and package.__path__ == [str(tools_dir / "pkg")]
        assert sys.modules[name] is package
        with pytest.raises(RuntimeError, match="bad"):
            importer.run_package(name, tools_dir / "pkg" / "__init__.py", b"raise RuntimeError('bad')\n")
        assert sys.modules[name] is package  # a failed run keeps the previous version
    finally:
        importer.close()


def test_dependents_are_transitive(tools_dir: Path) -> None:
    write(tools_dir / "base.py", "X = 1\n")
    write(tools_dir / "middle.py", "import base\nY = base.X\n")
    write(tools_dir / "top.py", "import middle\nZ = middle.Y\n")
    importer = ToolImporter([tools_dir])
    try:
        importer.load(tools_dir / "top.py", (tools_dir / "top.py").read_bytes())
        base = importer.module_name_for(tools_dir / "base.py")
        assert importer.dependents([base]) == {
            importer.module_name_for(tools_dir / "middle.py"),
            importer.module_name_for(tools_dir / "top.py"),
        }
    finally:
        importer.close()


def test_loaded_modules_carry_the_attributes_the_import_system_would_set(tools_dir: Path) -> None:
    write(tools_dir / "attrs.py", "import inspect\nSOURCE = inspect.getsource(inspect.currentframe())\n")
    write(tools_dir / "pkg" / "__init__.py", "")
    write(tools_dir / "pkg" / "leaf.py", "from . import sibling\nX = sibling.Y\n")
    write(tools_dir / "pkg" / "sibling.py", "Y = 'é'\n")
    importer = ToolImporter([tools_dir])
    try:
        path = tools_dir / "attrs.py"
        module = importer.load(path, path.read_bytes())
        assert module.__file__ == str(path) and module.__cached__ is None
        spec = module.__spec__
        assert spec is not None and spec.origin == str(path) and spec.has_location
        assert module.__loader__ is spec.loader
        assert module.__package__ == module.__name__.rpartition(".")[0]
        assert "SOURCE = inspect.getsource" in module.SOURCE  # linecache holds the bytes that ran
        leaf = importer.load(tools_dir / "pkg" / "leaf.py", (tools_dir / "pkg" / "leaf.py").read_bytes())
        assert leaf.X == "é"
        assert leaf.__package__ is not None
        package = sys.modules[leaf.__package__]
        assert package.__path__ == [str(tools_dir / "pkg")] and package.__file__ == str(
            tools_dir / "pkg" / "__init__.py"
        )
    finally:
        importer.close()


def test_every_import_form_finds_siblings_through_one_shared_builtins_namespace(tools_dir: Path) -> None:
    write(tools_dir / "helpers.py", "GREETING = 'hello'\n")
    write(
        tools_dir / "caller.py",
        """
        import helpers

        def at_call_time():
            import helpers as again
            return again.GREETING

        BARE = __import__("helpers").GREETING
        BY_STATEMENT = helpers.GREETING
        """,
    )
    write(tools_dir / "other.py", "X = 1\n")
    importer = ToolImporter([tools_dir])
    try:
        caller = importer.load(tools_dir / "caller.py", (tools_dir / "caller.py").read_bytes())
        other = importer.load(tools_dir / "other.py", (tools_dir / "other.py").read_bytes())
        assert (caller.BARE, caller.BY_STATEMENT, caller.at_call_time()) == ("hello", "hello", "hello")
        assert "helpers" not in sys.modules
        helpers = importer.module_name_for(tools_dir / "helpers.py")
        assert importer.dependents([helpers]) == {importer.module_name_for(tools_dir / "caller.py")}
        # One namespace serves every module (a copy per module cost about 4 KB each).
        assert caller.__builtins__ is other.__builtins__
        # Code that is not one of this importer's modules imports as usual, through the same hook.
        namespace: dict[str, object] = {"__builtins__": caller.__builtins__, "__name__": "elsewhere"}
        exec("import json as found", namespace)
        assert namespace["found"] is json
    finally:
        importer.close()


GATE = "_tool_loader_test_gate"
"""A module the test plants in ``sys.modules``: the helper's import waits on its events."""


def test_a_module_still_executing_is_never_seen_from_another_thread(
    tools_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = SimpleNamespace(entered=threading.Event(), release=threading.Event())
    monkeypatch.setitem(sys.modules, GATE, gate)
    slow = f"import {GATE} as gate\nVALUE = 2\ngate.entered.set()\ngate.release.wait(30)\nDONE = True\n"
    write(tools_dir / "helper.py", "VALUE = 1\nDONE = True\n")
    write(
        tools_dir / "caller.py",
        """
        def plain():
            import helper
            return helper

        def names():
            from helper import VALUE, DONE
            return VALUE, DONE

        def relative():
            from . import helper
            from .helper import DONE
            return helper.VALUE, DONE
        """,
    )
    importer = ToolImporter([tools_dir])
    helper_path = tools_dir / "helper.py"
    try:
        first = importer.load(helper_path, helper_path.read_bytes())
        caller = importer.load(tools_dir / "caller.py", (tools_dir / "caller.py").read_bytes())
        loading = threading.Thread(target=importer.load, args=(helper_path, slow.encode()))
        loading.start()
        try:
            assert gate.entered.wait(30)
            # The new version is half-executed now: every other thread still gets the last good one.
            assert caller.plain() is first
            assert caller.names() == (1, True)
            assert caller.relative() == (1, True)
        finally:
            gate.release.set()
            loading.join(30)
        assert caller.plain() is not first and caller.names() == (2, True) == caller.relative()

        gate.entered.clear()
        gate.release.clear()
        new = write(tools_dir / "new.py", slow)
        write(tools_dir / "user.py", "def use():\n    import new\n    return new.DONE\n")
        user = importer.load(tools_dir / "user.py", (tools_dir / "user.py").read_bytes())
        loading = threading.Thread(target=importer.load, args=(new, slow.encode()))
        loading.start()
        try:
            assert gate.entered.wait(30)
            with pytest.raises(ImportError, match="'new' is still importing"):
                user.use()
        finally:
            gate.release.set()
            loading.join(30)
        assert user.use() is True
    finally:
        importer.close()


def test_a_tool_in_a_folder_whose_name_is_no_identifier_imports(
    tools_dir: Path, make_loader: MakeLoader
) -> None:
    """``pdf-forms/tools/fill.py`` (a skill's tools, a ``2026 notes`` folder): the module name spells the
    folder ``pdf_forms_<hash>``, and the finder maps it back to the folder."""
    source = """
        from loader import tool

        @tool
        def {name}() -> str:
            \"\"\"Answer.\"\"\"
            return "{name} ok"
    """
    write(tools_dir / "pdf-forms" / "tools" / "fill.py", source.format(name="fill"))
    write(tools_dir / "2026 notes" / "note.py", source.format(name="note"))
    loader = make_loader(tools_dir, watch=False)
    assert [s.error for s in loader.scan().failed] == []
    assert call_text(loader, "fill") == "fill ok"
    assert call_text(loader, "note") == "note ok"
