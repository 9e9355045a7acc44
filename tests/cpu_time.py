"""``pytest --cpu-time``: the CPU seconds each test file and the costliest tests cost, child processes included.

On two cores the suite is bound by CPU, not by waiting (``/usr/bin/time`` shows it near 190 %), so
its wall time is its CPU time over two; this says where that CPU goes. Each test's cost is
``getrusage`` of this process and of its waited-for children, from the start of its setup to the
end of its teardown: a ``tool-loader`` command, a server, a worker template and the workers it forked
count once they have exited and been reaped, and a command ``run_cli`` ran in a fork of the warm
interpreter counts as the CPU that interpreter reaped it with (``warm_cli.cpu_seconds``). Under pytest-xdist each worker measures its own tests
and the totals come back to the controller with the reports.
"""

from __future__ import annotations

import resource
from collections import defaultdict
from collections.abc import Generator

import pytest
import warm_cli

_KEY = "cpu_seconds"
_started = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-time",
        action="store_true",
        help="print the CPU seconds of each test file and of the costliest tests, child processes included (tests/README.md)",
    )


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    warm = warm_cli.cpu_seconds()  # commands run in a fork of the warm interpreter, its children, not ours
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + warm


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.config.getoption("--cpu-time"):
        item.stash[_started] = _cpu()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if call.when == "teardown" and _started in item.stash:
        report.user_properties.append((_KEY, _cpu() - item.stash[_started]))
    return report


_by_file: defaultdict[str, float] = defaultdict(float)
_by_test: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for key, value in report.user_properties:
        if key == _KEY and isinstance(value, float):
            _by_file[report.nodeid.split("::")[0]] += value
            _by_test[report.nodeid] = value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not config.getoption("--cpu-time") or not _by_file:
        return
    total = sum(_by_file.values())
    terminalreporter.section(f"CPU seconds by test file, child processes included ({total:.0f} s in all)")
    packages: defaultdict[str, float] = defaultdict(float)
    for path, seconds in _by_file.items():
        packages["/".join(path.split("/")[:2])] += seconds
    ranked = (
        sorted(packages.items(), key=lambda kv: -kv[1])
        + sorted(_by_file.items(), key=lambda kv: -kv[1])[:20]
        + sorted(_by_test.items(), key=lambda kv: -kv[1])[:40]
    )
    for name, seconds in ranked:
        terminalreporter.write_line(f"{seconds:8.1f}  {name}")
