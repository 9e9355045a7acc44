"""The package's public surface is importable from one place and typed."""

from __future__ import annotations

import importlib.resources

import loader


def test_every_exported_name_exists() -> None:
    for name in loader.__all__:
        assert hasattr(loader, name), name
    assert len(set(loader.__all__)) == len(loader.__all__)


def test_py_typed_ships() -> None:
    assert importlib.resources.files("loader").joinpath("py.typed").is_file()


def test_builtin_plugins_install_under_the_loader_package() -> None:
    from loader.plugins import BUILTIN_PLUGINS

    for module_name in BUILTIN_PLUGINS:
        assert module_name.startswith("loader.plugins.")
        importlib.import_module(module_name)
