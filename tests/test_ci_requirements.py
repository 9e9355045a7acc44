"""``support.require``: a test whose tool is missing skips on a developer's machine and fails in CI."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import CI_ENV, require, require_module


def test_a_missing_tool_skips_here_and_fails_in_ci_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CI_ENV, raising=False)
    require(True, "haproxy is not on PATH", "apt-get install haproxy")  # present: nothing happens
    with pytest.raises(pytest.skip.Exception, match=r"haproxy is not on PATH \(apt-get install haproxy\)"):
        require(False, "haproxy is not on PATH", "apt-get install haproxy")
    monkeypatch.setenv(CI_ENV, "1")
    with pytest.raises(
        pytest.fail.Exception, match=r"haproxy is not on PATH, and CI.*: apt-get install haproxy"
    ):
        require(False, "haproxy is not on PATH", "apt-get install haproxy")
    with pytest.raises(
        pytest.fail.Exception, match=r"'no_such_package_here' is not installed.*pip install it"
    ):
        require_module("no_such_package_here", "pip install it")


def test_ci_sets_the_variable_and_installs_haproxy_or_stops() -> None:
    """``.ci/run`` exports it before any test runs, and a failed haproxy install ends the run."""
    script = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    tests_start = script.index(".venv/bin/pytest")
    assert script.index(f"export {CI_ENV}=1") < tests_start
    install = script[script.index("apt-get install -y -qq haproxy") :].splitlines()[0]
    assert "||" not in install, install
