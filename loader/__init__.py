"""Hot-reloading tool-directory loader for AI-agent tools.

Everything a user imports lives here; the submodules are the implementation. The names are
listed once, in ``__init__.pyi``: ``lazy_loader`` imports each on first use, so that a worker
process or a tool file's ``from loader import tool`` does not import the loader, the console's
dependencies and the authoring gate it never uses.
"""

from pathlib import Path as _Path

import lazy_loader as _lazy

from .distribution import mount_checkout_plugins as _mount_checkout_plugins

_mount_checkout_plugins(_Path(__file__).resolve().parent)

__getattr__, __dir__, _public = _lazy.attach_stub(__name__, __file__)

__version__ = "0.1.0"

__all__ = [*_public, "__version__"]
