"""``tool-loader propose``, ``proposals`` and ``promote``, run for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli

from loader.isolation.sandbox import probe

pytestmark = pytest.mark.skipif(
    not all(layer.on for layer in probe()), reason="this machine cannot enforce every sandbox layer"
)

GOOD = '''from loader import tool


@tool(examples=[{"params": {"text": "abc"}, "expected_output": 3}])
def count_chars(text: str) -> int:
    """Count the characters of a text.

    Args:
        text: The text.
    """
    return len(text)
'''


def test_propose_then_promote_from_the_command_line(tmp_path: Path, private_bytecode_cache: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    (tmp_path / "count.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(GOOD.replace("return len(text)", "return 1 // 0"))

    passed = run_cli(
        "propose", "count.py", "--dir", "live", "--author", "agent-7", "--cases", "10", cwd=tmp_path
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert (
        "gate passed" in passed.stdout and "property tests: up to 10 cases per tool, seed 0" in passed.stdout
    )
    failed = run_cli("propose", "bad.py", "--dir", "live", "--json", "--cases", "10", cwd=tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    bad = json.loads(failed.stdout)
    assert bad["state"] == "failed" and bad["gate"] == "failed" and bad["tools"] == ["count_chars"]

    table = run_cli("proposals", "--dir", "live", cwd=tmp_path)
    assert table.returncode == 0 and json.loads(failed.stdout)["id"] in table.stdout, table.stdout
    listed = run_cli("proposals", "--dir", "live", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    records = {record["state"]: record for record in json.loads(listed.stdout)}
    assert set(records) == {"passed", "failed"}
    assert records["passed"]["author"] == "agent-7" and records["passed"]["spec"] == "new"

    refused = run_cli("promote", bad["id"], "--dir", "live", cwd=tmp_path)
    assert refused.returncode == 1 and "only a passed proposal is promoted" in refused.stderr
    promoted = run_cli("promote", records["passed"]["id"], "--dir", "live", cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr
    assert (live / "count.py").read_text() == GOOD
    # Hypothesis kept its caches in the loader's cache folder (the second proposal found the Unicode
    # tables the first computed), not in a .hypothesis folder of the working directory.
    assert not (tmp_path / ".hypothesis").exists()
    assert list((private_bytecode_cache / "hypothesis" / "unicode_data").glob("*/codec-*-utf-8.json.gz"))
    unknown = run_cli("promote", "no-such-id", "--dir", "live", cwd=tmp_path)
    assert unknown.returncode == 2 and "no proposal 'no-such-id'" in unknown.stderr


def test_a_cache_folder_others_can_write_gets_no_hypothesis_tables(
    tmp_path: Path, private_bytecode_cache: Path
) -> None:
    """Another user's tables there would choose the inputs the gate tries: the gate's scratch serves."""
    live = tmp_path / "live"
    live.mkdir()
    (tmp_path / "count.py").write_text(GOOD)
    private_bytecode_cache.mkdir(parents=True)
    private_bytecode_cache.chmod(0o777)
    passed = run_cli("propose", "count.py", "--dir", "live", "--cases", "10", cwd=tmp_path)
    assert passed.returncode == 0 and "gate passed" in passed.stdout, passed.stdout + passed.stderr
    assert list(private_bytecode_cache.iterdir()) == []
    assert not (tmp_path / ".hypothesis").exists()


def test_propose_without_the_authoring_extra_names_its_requirements(tmp_path: Path) -> None:
    hidden = tmp_path / "hidden" / "hypothesis_jsonschema"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text(
        'raise ModuleNotFoundError("hidden by the test", name="hypothesis_jsonschema")\n'
    )
    (tmp_path / "live").mkdir()
    (tmp_path / "count.py").write_text(GOOD)
    done = run_cli(
        "propose", "count.py", "--dir", "live", cwd=tmp_path, env={"PYTHONPATH": str(hidden.parent)}
    )
    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "need the authoring extra: pip install 'hypothesis-jsonschema>=0.23.1,<0.24'" in message, message
    assert "'hypothesis>=6.135,<6.170.10'" in message


HELPER_USER = '''
from loader import tool

import units


@tool
def to_fahrenheit(celsius: float) -> float:
    """Convert a temperature.

    Args:
        celsius: Degrees Celsius.
    """
    return units.fahrenheit(celsius)
'''


def test_a_folder_with_helpers_is_proposed_whole_promoted_and_a_withdrawn_one_never(tmp_path: Path) -> None:
    """A tool with its helpers, proposed as a folder, keeps its layout; withdraw stops a promotion."""
    live = tmp_path / "live"
    live.mkdir()
    kit = tmp_path / "weather_kit"
    (kit / "sub").mkdir(parents=True)
    (kit / "units.py").write_text("def fahrenheit(c: float) -> float:\n    return c * 9 / 5 + 32\n")
    (kit / "tool.py").write_text(HELPER_USER)
    (kit / "sub" / "kelvin.py").write_text(
        HELPER_USER.replace("import units\n", "")
        .replace("to_fahrenheit", "to_kelvin")
        .replace("units.fahrenheit(celsius)", "celsius + 273.15")
    )
    (kit / "notes.txt").write_text("not proposed")

    proposed = run_cli("propose", "weather_kit", "--dir", "live", "--json", "--cases", "5", cwd=tmp_path)
    assert proposed.returncode == 0, proposed.stdout + proposed.stderr
    record = json.loads(proposed.stdout)
    assert sorted(record["files"]) == [
        "weather_kit/sub/kelvin.py",
        "weather_kit/tool.py",
        "weather_kit/units.py",
    ]
    assert sorted(record["tools"]) == ["to_fahrenheit", "to_kelvin"]

    withdrawn = run_cli("withdraw", record["id"], "--dir", "live", cwd=tmp_path)
    assert withdrawn.returncode == 0 and "will not be promoted" in withdrawn.stdout, withdrawn.stderr
    listed = json.loads(run_cli("proposals", "--dir", "live", "--json", cwd=tmp_path).stdout)
    assert [r["state"] for r in listed] == ["withdrawn"]
    refused = run_cli("promote", record["id"], "--dir", "live", cwd=tmp_path)
    assert refused.returncode == 1 and "is withdrawn" in refused.stderr
    assert not (live / "weather_kit").exists()

    again = json.loads(run_cli("propose", "weather_kit", "--dir", "live", "--json", cwd=tmp_path).stdout)
    promoted = run_cli("promote", again["id"], "--dir", "live", cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr
    assert (live / "weather_kit" / "units.py").read_text() == (kit / "units.py").read_text()
    late = run_cli("withdraw", again["id"], "--dir", "live", cwd=tmp_path)
    assert late.returncode == 1 and "promoted already" in late.stderr

    (tmp_path / "linked").symlink_to(kit)
    linked = run_cli("propose", "linked", "--dir", "live", cwd=tmp_path)
    assert linked.returncode == 2 and "is a link" in linked.stderr
