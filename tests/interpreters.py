"""An interpreter that runs a line of Python at start-up in every process it starts, as a ``.pth`` file does.

For what happens before a worker's own code runs: a library's ``.pth`` file
that starts a thread, or a machine whose kernel answers differently. A real
virtual environment, so the loader's workers (started with the loader's
``sys.executable``) run the line too.
"""

from __future__ import annotations

import site
import subprocess
import sys
from pathlib import Path

__all__ = ["interpreter_running"]


def interpreter_running(line: str, where: Path, base: str = sys.executable) -> Path:
    """A virtual environment at ``where``, made from ``base``, that sees this interpreter's packages
    (the loader, editable, included) and runs ``line`` at start-up; its ``python``."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    (packages,) = where.glob("lib/python3*/site-packages")
    adds = "; ".join(f"site.addsitedir({path!r})" for path in site.getsitepackages())
    (packages / "00-these-packages.pth").write_text(f"import site; {adds}\n")
    (packages / "zz-at-startup.pth").write_text(f"import sys; {line}\n")
    return where / "bin" / "python"
