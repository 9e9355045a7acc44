"""Imports on a worker thread with a deadline."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from loader.reload.worker import ImportTimeout, ImportWorker


def test_results_and_exceptions_come_back() -> None:
    worker = ImportWorker()
    try:
        assert worker.run(lambda: 41 + 1, 5) == 42
        with pytest.raises(ZeroDivisionError):
            worker.run(lambda: 1 / 0, 5)
        names = {worker.run(lambda: threading.current_thread().name, 5) for _ in range(3)}
        assert names == {"tool-loader-import"}
    finally:
        worker.close()


def test_an_overrunning_job_is_reported_interrupted_and_replaced(tmp_path: Path) -> None:
    source = tmp_path / "spin.py"
    source.write_text("def spin():\n    while True:\n        pass\n")
    namespace: dict[str, object] = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    finished = threading.Event()

    def job() -> None:
        try:
            namespace["spin"]()  # type: ignore[operator]
        finally:
            finished.set()

    worker = ImportWorker()
    try:
        with pytest.raises(ImportTimeout) as caught:
            worker.run(job, 0.3, watch_file=source)
        assert caught.value.line == 3 or caught.value.line == 2
        assert "spin.py" in caught.value.stack
        assert finished.wait(10), "the abandoned thread was not interrupted"
        assert worker.run(lambda: "fresh worker", 5) == "fresh worker"
    finally:
        worker.close()
