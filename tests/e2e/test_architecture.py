"""ARCHITECTURE.md matches the code: the "leans on" column, and the registry and loader contracts.

The table lists every package and root module of ``loader`` (and the
top-level ``plugins/`` folder, mounted as ``loader.plugins``) with what it
leans on: the ``loader`` packages and root modules its code imports. Here the
real imports are read with ``ast`` (relative imports resolved; imports inside
functions and under ``TYPE_CHECKING`` count) and compared row by row. The
contract blocks are Python stubs: each class in them is looked up in the code,
and its methods (parameter names, kinds, defaults), properties, dataclass
fields and enum members must be the real ones, with nothing public left out.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import inspect
import re
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
LOADER = ROOT / "loader"
PLUGINS = ROOT / "plugins"
FACE = "__init__"
TABLE_SECTION = "## Packages and what they lean on"
CONTRACT_SECTIONS = ("## Registry contract", "## Loader contract")
CONTRACT_MODULES = ("loader", "loader.registry.snapshot", "loader.status", "loader.reload.loader")

pytestmark = pytest.mark.skipif(
    not ARCHITECTURE.is_file() or not PLUGINS.is_dir(),
    reason="ARCHITECTURE.md ships with the repository only",
)


# -- the real imports -----------------------------------------------------------------------------


def units(loader_dir: Path, plugins_dir: Path | None) -> dict[str, list[Path]]:
    """Every package and root module of ``loader_dir`` (and ``plugins``) with its Python files; a stub
    counts (``loader/__init__.pyi`` lists the names ``lazy_loader`` imports when they are used)."""
    found: dict[str, list[Path]] = {}
    for path in sorted([*loader_dir.rglob("*.py"), *loader_dir.rglob("*.pyi")]):
        found.setdefault(Path(path.relative_to(loader_dir).parts[0]).stem, []).append(path)
    if plugins_dir is not None:
        found["plugins"] = sorted(plugins_dir.rglob("*.py"))
    return found


def _package_of(path: Path, loader_dir: Path, plugins_dir: Path | None) -> list[str]:
    """The dotted package ``path`` belongs to, as parts (``plugins/`` is ``loader.plugins``)."""
    if plugins_dir is not None and path.is_relative_to(plugins_dir):
        return ["loader", "plugins", *path.relative_to(plugins_dir).parent.parts]
    return ["loader", *path.relative_to(loader_dir).parent.parts]


def _unit_of(module: str, name: str | None, loader_dir: Path) -> str | None:
    """The first-level unit an import of ``module`` (``from module import name``) lands in."""
    parts = module.split(".")
    if parts[0] != "loader":
        return None
    if len(parts) > 1:
        return parts[1]
    if name is not None and (
        (loader_dir / f"{name}.py").is_file() or (loader_dir / name).is_dir() or name == "plugins"
    ):
        return name
    return FACE


def leans_on(files: Iterable[Path], loader_dir: Path, plugins_dir: Path | None = None) -> set[str]:
    """The ``loader`` units the code of ``files`` imports, anywhere in the file."""
    found: set[str] = set()
    for path in files:
        package = _package_of(path, loader_dir, plugins_dir)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(u for a in node.names if (u := _unit_of(a.name, None, loader_dir)))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    module = ".".join([*base, node.module] if node.module else base)
                else:
                    module = node.module or ""
                found.update(u for a in node.names if (u := _unit_of(module, a.name, loader_dir)))
    return found


def test_the_import_walker_sees_every_kind_of_import(tmp_path: Path) -> None:
    loader_dir = tmp_path / "loader"
    for folder in ("alpha", "beta", "gamma", "delta"):
        (loader_dir / folder).mkdir(parents=True)
        (loader_dir / folder / "__init__.py").write_text("")
    (loader_dir / "__init__.py").write_text("__version__ = '1'\n")
    (loader_dir / "types.py").write_text("")
    (loader_dir / "alpha" / "deep.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import json\n"
        "from . import sibling\n"  # its own package: not a leaning
        "from ..beta import thing\n"
        "from .. import types, __version__\n"
        "if TYPE_CHECKING:\n"
        "    from loader.gamma.sub import Hint\n"
        "def later():\n"
        "    import loader.delta\n"
    )
    found = units(loader_dir, None)
    assert set(found) == {"alpha", "beta", "gamma", "delta", "types", FACE}
    assert leans_on(found["alpha"], loader_dir) - {"alpha"} == {"beta", "gamma", "delta", "types", FACE}


# -- the table ------------------------------------------------------------------------------------


def _section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def _unit_name(cell: str) -> str:
    return cell.strip("`").removesuffix("/").removesuffix(".py")


def documented_leanings(text: str) -> dict[str, set[str]]:
    """Row name -> the names in its "leans on" cell, from the table of ARCHITECTURE.md."""
    rows: dict[str, set[str]] = {}
    for line in _section(text, TABLE_SECTION).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        name = _unit_name(re.findall(r"`[^`]+`", cells[0])[0])
        assert name not in rows, f"ARCHITECTURE.md: the row {name!r} appears twice"
        rows[name] = {_unit_name(token) for token in re.findall(r"`[^`]+`", cells[2])}
    return rows


def test_the_table_names_every_package_and_root_module() -> None:
    rows = documented_leanings(ARCHITECTURE.read_text(encoding="utf-8"))
    real = set(units(LOADER, PLUGINS))
    assert sorted(real - set(rows)) == [], "ARCHITECTURE.md has no row for these"
    assert sorted(set(rows) - real) == [], "ARCHITECTURE.md has rows for these, which do not exist"


def test_every_leans_on_cell_is_what_the_code_imports() -> None:
    rows = documented_leanings(ARCHITECTURE.read_text(encoding="utf-8"))
    wrong: list[str] = []
    for name, files in sorted(units(LOADER, PLUGINS).items()):
        if name not in rows:
            continue
        real = leans_on(files, LOADER, PLUGINS) - {name}
        missing, extra = sorted(real - rows[name]), sorted(rows[name] - real)
        if missing or extra:
            wrong.append(f"row {name!r}: missing {missing}, not imported {extra}")
    assert wrong == [], "ARCHITECTURE.md's leans-on column differs from the imports:\n" + "\n".join(wrong)


# -- the contracts --------------------------------------------------------------------------------


def contract_classes(text: str) -> list[ast.ClassDef]:
    """The classes of the python blocks under the contract headings."""
    classes: list[ast.ClassDef] = []
    for heading in CONTRACT_SECTIONS:
        for block in re.findall(r"```python\n(.*?)```", _section(text, heading), re.DOTALL):
            classes += [node for node in ast.parse(block).body if isinstance(node, ast.ClassDef)]
    return classes


def _real_class(name: str) -> type[Any]:
    modules: list[ModuleType] = [importlib.import_module(m) for m in CONTRACT_MODULES]
    for module in modules:
        found = getattr(module, name, None)
        if isinstance(found, type):
            return found
    raise AssertionError(f"ARCHITECTURE.md documents class {name}, which none of {CONTRACT_MODULES} has")


def _stub_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str, bool]]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    shown = [
        (a.arg, "POSITIONAL_ONLY" if a in args.posonlyargs else "POSITIONAL_OR_KEYWORD", d)
        for a, d in zip(positional, defaults, strict=True)
    ]
    if args.vararg:
        shown.append((args.vararg.arg, "VAR_POSITIONAL", False))
    shown += [
        (a.arg, "KEYWORD_ONLY", d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        shown.append((args.kwarg.arg, "VAR_KEYWORD", False))
    return shown


def _real_parameters(function: Any) -> list[tuple[str, str, bool]]:
    return [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(function).parameters.values()
    ]


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def _check_member(cls: type[Any], node: ast.stmt, problems: list[str]) -> str | None:
    """Compare one stub statement with the real class; returns the member name it documents."""
    where = cls.__name__
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        real = inspect.getattr_static(cls, node.name, None)
        if _is_property(node):
            if not isinstance(real, property):
                problems.append(f"{where}.{node.name} is not a property")
        elif not callable(real):
            problems.append(f"{where}.{node.name} does not exist")
        else:
            is_async = inspect.iscoroutinefunction(real) or inspect.isasyncgenfunction(real)
            if is_async != isinstance(node, ast.AsyncFunctionDef):
                problems.append(f"{where}.{node.name}: async is {is_async} in the code")
            if _stub_parameters(node) != _real_parameters(real):
                problems.append(f"{where}.{node.name}{inspect.signature(real)} differs from the stub")
        return node.name
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        name = node.target.id
        if dataclasses.is_dataclass(cls):
            field = next((f for f in dataclasses.fields(cls) if f.name == name), None)
            has_default = field is not None and (
                field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            )
            if field is None or has_default != (node.value is not None):
                problems.append(f"{where}.{name}: no such field, or its default differs")
        elif not re.search(rf"self\.{name}\s*[:=]", inspect.getsource(cls)):
            problems.append(f"{where}.{name}: never assigned as an attribute")
        return name
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and issubclass(cls, enum.Enum):
        name = node.targets[0].id
        value = ast.literal_eval(node.value)
        if name not in cls.__members__ or cls[name].value != value:
            problems.append(f"{where}.{name} = {value!r} is not a member of the enum")
        return name
    return None


def _public_members(cls: type[Any]) -> set[str]:
    """What the stub must show: public methods and properties, fields, enum members, documented dunders."""
    if issubclass(cls, enum.Enum):
        return set(cls.__members__)
    names = {
        name
        for name, member in vars(cls).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    }
    if dataclasses.is_dataclass(cls):
        names |= {f.name for f in dataclasses.fields(cls)}
    return names


def test_the_contracts_show_the_real_signatures() -> None:
    classes = contract_classes(ARCHITECTURE.read_text(encoding="utf-8"))
    assert {"ToolRegistry", "RegistrySnapshot", "RegistryBatch", "ToolLoader", "FileStatus"} <= {
        c.name for c in classes
    }
    problems: list[str] = []
    for stub in classes:
        cls = _real_class(stub.name)
        shown = {name for node in stub.body if (name := _check_member(cls, node, problems))}
        left_out = sorted(_public_members(cls) - shown)
        if left_out:
            problems.append(f"{stub.name}: the contract leaves out {left_out}")
    assert problems == [], "ARCHITECTURE.md's contracts differ from the code:\n" + "\n".join(problems)
