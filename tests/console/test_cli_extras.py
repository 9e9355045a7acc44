"""A missing extra is met with a ``pip install`` line any index can serve: the requirement itself.

The extras are installed in the test environment, so each run hides one by
putting a package of the same name that fails to import first on
``PYTHONPATH``, as an environment without it would fail.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from serving import serve_http, server_env
from support import run_cli, write

from loader.distribution import FALLBACK, install_command

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

ECHO = '''
from loader import tool

@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``hidden/NAME`` holds a package ``NAME`` that fails to import (``mcp``, ``prometheus_client``, ``strands``, ``anyio``)."""
    folder = tmp_path_factory.mktemp("hidden")
    for name in ("mcp", "prometheus_client", "strands", "anyio"):
        write(
            folder / name / name / "__init__.py",
            f'raise ModuleNotFoundError("No module named {name!r} (hidden by the test)", name={name!r})\n',
        )
    return folder


def _without(hidden: Path, name: str) -> dict[str, str]:
    return {"PYTHONPATH": str(hidden / name)}


@pytest.mark.parametrize("module", ["mcp", "anyio"])
def test_serve_without_the_mcp_extra_names_the_extra_and_its_requirement(
    hidden: Path, tmp_path: Path, module: str
) -> None:
    write(tmp_path / "tools" / "echo.py", ECHO)
    done = run_cli("serve", cwd=tmp_path, env=_without(hidden, module))
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert message == (
        "error: `tool-loader serve` needs the mcp extra (the MCP SDK); "
        f"install it with: pip install 'mcp>=2.1,<3' (missing here: {module})"
    ), message
    assert "tool-loader[" not in message


def test_serve_without_prometheus_client_names_the_requirement(hidden: Path, tmp_path: Path) -> None:
    write(tmp_path / "tools" / "echo.py", ECHO)
    with serve_http(
        tmp_path / "tools", tmp_path, env=server_env(**_without(hidden, "prometheus_client")), wait_ready=True
    ) as served:
        notes = [line for line in served.lines if line.startswith("metrics off")]
    assert notes == ["metrics off: needs the metrics extra: pip install 'prometheus-client>=0.20'"]


@pytest.mark.parametrize(
    ("module", "requirement"),
    [("loader.mcp", "'mcp>=2.1,<3'"), ("loader.integrations.strands", "'strands-agents>=1.35'")],
    ids=["mcp", "strands"],
)
def test_importing_a_module_of_a_missing_extra_names_the_requirement(
    hidden: Path, tmp_path: Path, module: str, requirement: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=tmp_path,
        env=server_env(**_without(hidden, module.rsplit(".", 1)[-1])),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ") and last.endswith(f": pip install {requirement}"), last
    assert "tool-loader[" not in done.stderr


def test_the_fallback_is_what_pyproject_declares() -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    for_users = {extra: tuple(requirements) for extra, requirements in declared.items()}
    for_users = {k: v for k, v in for_users.items() if k not in {"test", "bench", "dev"}}
    assert dict(FALLBACK) == for_users  # every extra a user installs, as pyproject.toml spells it
    # Without installed metadata (a checkout on sys.path), the hint comes from the fallback.
    assert install_command("mcp", distribution="no-such-distribution") == "pip install 'mcp>=2.1,<3'"
    assert install_command("mcp") == "pip install 'mcp>=2.1,<3'"  # from the metadata: the same line
