"""``tool-loader check`` as a real subprocess: findings with file:line, severities, --strict, exit status."""

from __future__ import annotations

import json
from pathlib import Path

from support import run_cli, write, write_conflict_and_broken

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"

WARNINGS_ONLY = '''
from loader import tool

@tool
def undocumented(x: int) -> int:
    return x

@tool
def overdocumented(a: int) -> int:
    """Return a.

    Args:
        a: The value.
        b: A parameter the function no longer has.
    """
    return a
'''

MODULE_TOOL = """
TOOL_SPEC = {
    "name": "bare_module",
    "description": "A module tool with an undescribed parameter.",
    "inputSchema": {"json": {"type": "object", "properties": {"q": {"type": "string"}}}},
}

def bare_module(tool_use, **kwargs):
    return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "ok"}]}
"""


def findings(stdout: str) -> list[list[str]]:
    """The rows of the findings table as [location, severity, check, message]."""
    rows = []
    for line in stdout.splitlines():
        parts = [part for part in line.split("  ") if part.strip()]
        if len(parts) >= 4 and parts[1].strip() in ("error", "warning"):
            rows.append([parts[0].strip(), parts[1].strip(), parts[2].strip(), "  ".join(parts[3:]).strip()])
    return rows


def test_sample_tools_pass_strict(tmp_path: Path) -> None:
    done = run_cli("check", str(SAMPLE_TOOLS), "--strict", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "checked 8 tools in 9 files" in done.stdout
    assert "no problems found" in done.stdout


def test_warnings_pass_unless_strict(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "warn.py", WARNINGS_ONLY)
    write(tmp_path / "tools" / "bare_module.py", MODULE_TOOL)
    done = run_cli("check", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert findings(done.stdout) == [
        [
            "tools/bare_module.py:7",
            "warning",
            "parameter-description",
            "tool 'bare_module': parameter 'q' has no description (document it under Args:)",
        ],
        [
            "tools/warn.py:3",
            "warning",
            "no-description",
            "tool 'undocumented' has no description (write a docstring: the model chooses tools by it)",
        ],
        [
            "tools/warn.py:3",
            "warning",
            "parameter-description",
            "tool 'undocumented': parameter 'x' has no description (document it under Args:)",
        ],
        [
            "tools/warn.py:7",
            "warning",
            "docstring-parameter",
            "tool 'overdocumented': the docstring documents 'b', which is not a parameter of the function",
        ],
    ]
    assert "0 errors, 4 warnings" in done.stdout

    strict = run_cli("check", "tools", "--strict", cwd=tmp_path)
    assert strict.returncode == 1
    assert [row[1] for row in findings(strict.stdout)] == ["error"] * 4
    assert "4 errors, 0 warnings" in strict.stdout


def test_load_failures_conflicts_and_invalid_names_are_errors(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write_conflict_and_broken(tools)
    write(
        tools / "named.py",
        'from loader import tool\n\n@tool(name="has space")\ndef f() -> str:\n    """F."""\n',
    )
    done = run_cli("check", str(tools), cwd=tmp_path)
    assert done.returncode == 1
    rows = findings(done.stdout)
    assert [row[:3] for row in rows] == [
        ["tools/b.py", "error", "conflict"],
        ["tools/broken.py:3", "error", "load-failed"],
        ["tools/named.py:3", "error", "invalid-name"],
    ]
    assert rows[0][3] == (
        "tool 'dup' is already defined in tools/a.py, which keeps it "
        "(the first owner keeps a name; among files loaded together, the path that sorts first)"
    )
    assert rows[1][3] == "SyntaxError: invalid syntax"
    assert rows[2][3].startswith("InvalidToolNameError: Invalid tool name 'has space'")
    assert "3 errors, 0 warnings" in done.stdout


DOUBLE = '''
from loader import tool


@tool(examples=[{"description": "twice", "params": {"a": 4}, "expected_output": 8}])
def double(a: int) -> int:
    """Double a number.

    Args:
        a: The number.
    """
    return 2 * a
'''

ADD = '''

@tool(
    examples=[
        {"description": "one and two", "params": {"a": 1, "b": 2}, "expected_output": 3},
        {"description": "wrong on purpose", "params": {"a": 2, "b": 2}, "expected_output": 5},
    ]
)
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b
'''


def test_check_examples_says_how_many_ran_and_failed(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "maths.py", DOUBLE + ADD)
    done = run_cli("check", "--examples", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        "checked 2 tools in 1 file in tools: 1 error, 0 warnings; 3 examples ran, 1 failed"
    )
    as_json = json.loads(run_cli("check", "--examples", "--json", cwd=tmp_path).stdout)
    assert as_json["summary"]["examples"] == {"ran": 3, "failed": 1}

    write(tmp_path / "one" / "double.py", DOUBLE)
    single = run_cli("check", "one", "--examples", cwd=tmp_path)
    assert single.returncode == 0, single.stdout
    assert (
        single.stdout.splitlines()[-1]
        == "checked 1 tool in 1 file in one: no problems found; 1 example ran, 0 failed"
    )
    without = run_cli("check", "one", cwd=tmp_path)  # no examples run: nothing said about them
    assert without.stdout.splitlines()[-1] == "checked 1 tool in 1 file in one: no problems found"


def test_exactly_one_error_exits_1_in_both_output_formats(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(
        tools / "ok.py",
        'from loader import tool\n\n@tool\ndef ok() -> str:\n    """Fine."""\n    return "ok"\n',
    )
    write(tools / "broken.py", "x = 1\n\ndef broken(:\n    pass\n")
    table = run_cli("check", str(tools), cwd=tmp_path)
    assert table.returncode == 1, table.stdout
    assert [row[:3] for row in findings(table.stdout)] == [["tools/broken.py:3", "error", "load-failed"]]
    assert "1 error, 0 warnings" in table.stdout
    as_json = run_cli("check", str(tools), "--json", cwd=tmp_path)
    assert as_json.returncode == 1, as_json.stdout
    document = json.loads(as_json.stdout)
    assert document["summary"]["errors"] == 1
    assert [(f["severity"], f["code"]) for f in document["findings"]] == [("error", "load-failed")]
