"""``tool-loader list`` as a real subprocess: the table, ``--json``, failures, defaults and exit statuses."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support import run_cli, write, write_conflict_and_broken

from loader.fingerprint import spec_digest

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"
SAMPLE_NAMES = {
    "calculator",
    "call_info",
    "count_primes",
    "currency_converter",
    "shipping_quote",
    "slugify",
    "unit_converter",
    "word_count",
}


def short_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def row_of(stdout: str, name: str) -> str:
    return next(line for line in stdout.splitlines() if line.strip().startswith(name + " "))


def test_table_lists_every_sample_tool_with_kind_source_parameters_and_version(tmp_path: Path) -> None:
    done = run_cli("list", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for name in SAMPLE_NAMES:
        assert name in done.stdout
    calculator = row_of(done.stdout, "calculator")
    assert "function" in calculator
    assert f"{SAMPLE_TOOLS}/calculator.py:12" in calculator
    assert "Apply an arithmetic operation to two numbers." in calculator
    assert "operation*" in calculator
    assert "math" in calculator and "arithmetic" in calculator
    assert "#" + short_hash(SAMPLE_TOOLS / "calculator.py")[:8] in calculator
    assert calculator.rstrip().endswith("yes")  # dynamic
    currency = row_of(done.stdout, "currency_converter")
    assert "class" in currency and "1.2.0" in currency and "finance" in currency
    assert "module" in row_of(done.stdout, "word_count")
    assert "8 tools from 9 files" in done.stdout
    assert "did not load" not in done.stdout


def test_json_holds_full_specs_metadata_and_file_status(tmp_path: Path) -> None:
    done = run_cli("list", "--json", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # nothing but JSON on stdout
    tools = {tool["name"]: tool for tool in document["tools"]}
    assert set(tools) == SAMPLE_NAMES
    calculator = tools["calculator"]
    assert calculator["spec"] == {
        "name": "calculator",
        "description": "Apply an arithmetic operation to two numbers.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {
                    "operation": {
                        "description": "What to do: add, subtract, multiply or divide.",
                        "enum": ["add", "subtract", "multiply", "divide"],
                        "type": "string",
                    },
                    "a": {"description": "The left operand.", "type": "number"},
                    "b": {"description": "The right operand (the divisor for divide).", "type": "number"},
                },
                "required": ["operation", "a", "b"],
            }
        },
    }
    assert calculator["kind"] == "function"
    assert calculator["source"]["file"] == str(SAMPLE_TOOLS / "calculator.py")
    assert calculator["source"]["line"] == 12
    assert calculator["content_hash"] == short_hash(SAMPLE_TOOLS / "calculator.py")
    assert (calculator["category"], calculator["tags"], calculator["dynamic"]) == (
        "math",
        ["arithmetic"],
        True,
    )
    assert calculator["metadata"] is None and calculator["version"] is None
    currency = tools["currency_converter"]
    assert currency["kind"] == "class"
    assert currency["version"] == "1.2.0"
    assert currency["metadata"]["tags"] == ["currency", "conversion", "offline"]
    assert currency["metadata"]["examples"][0]["input"] == {
        "amount": 100,
        "from_currency": "USD",
        "to_currency": "EUR",
    }
    assert tools["word_count"]["kind"] == "module"
    assert {name: tool["digest"] for name, tool in tools.items()} == {
        name: spec_digest(tool["spec"]) for name, tool in tools.items()
    }
    files = {Path(f["path"]).name: f for f in document["files"]}
    assert len(files) == 9
    assert all(f["state"] == "loaded" and f["error"] is None for f in files.values())
    assert files["text_helpers.py"]["tools"] == []
    assert document["summary"] == {**document["summary"], "tools": 8, "files": 9, "failed": 0}


def test_failures_and_conflicts_have_their_own_section_and_exit_status_1(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write_conflict_and_broken(tools)
    done = run_cli("list", cwd=tmp_path)  # no directory: ./tools
    assert done.returncode == 1
    assert "Files that did not load" in done.stdout
    broken = row_of(done.stdout, "tools/broken.py:3")
    assert "failed" in broken and "SyntaxError" in broken
    conflict = row_of(done.stdout, "tools/b.py")
    assert "conflict" in conflict and "'dup' is already defined in tools/a.py" in conflict
    assert "1 file failed, 1 conflict" in done.stdout  # conflicts counted apart from failures
    assert "load failed" not in done.stderr  # the loader's own warnings stay off the console

    as_json = run_cli("list", "--json", cwd=tmp_path)
    assert as_json.returncode == 1
    files = {Path(f["path"]).name: f for f in json.loads(as_json.stdout)["files"]}
    assert files["broken.py"]["state"] == "failed"
    error = files["broken.py"]["error"]
    assert (error["type"], error["line"], error["location"]) == ("SyntaxError", 3, "tools/broken.py:3")
    assert files["b.py"]["state"] == "conflict"
    assert files["b.py"]["conflicts"] == [{"tool": "dup", "owner": str((tools / "a.py").resolve())}]


def test_no_directory_and_missing_directory_are_usage_errors(tmp_path: Path) -> None:
    done = run_cli("list", cwd=tmp_path)
    assert done.returncode == 2
    assert "no tool directory given" in done.stderr
    missing = run_cli("list", str(tmp_path / "nope"), cwd=tmp_path)
    assert missing.returncode == 2
    assert f"not a directory: {tmp_path / 'nope'}" in missing.stderr


def _greet(says: str) -> str:
    return f'from loader import tool\n\n@tool\ndef greet(who: str) -> str:\n    """Greet."""\n    return "{says}"\n'


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_with_several_folders_the_conflict_says_which_file_keeps_the_name_and_why(
    tmp_path: Path, isolation: str
) -> None:
    write(tmp_path / "fb" / "greet.py", _greet("b"))
    write(tmp_path / "fa" / "zgreet.py", _greet("a"))  # its path sorts first, though its folder is named last
    done = run_cli("list", "fb", "fa", "--isolation", isolation, cwd=tmp_path)
    assert done.returncode == 1
    message = " ".join(done.stdout.split())
    assert (
        "fb/greet.py conflict tool 'greet' is already defined in fa/zgreet.py, which keeps it "
        "(the first owner keeps a name; among files loaded together, the path that sorts first)"
    ) in message, done.stdout
