"""``tool-loader call`` as a real subprocess: input forms, streaming, results, errors and exit statuses."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support import run_cli, write

from loader.console.call import parse_input

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"


def call(*args: str, cwd: Path, merge: bool = False) -> subprocess.CompletedProcess[str]:
    return run_cli("call", *args, "--dir", str(SAMPLE_TOOLS), cwd=cwd, merge=merge)


def test_key_value_pairs_are_json_when_they_parse_and_strings_otherwise(tmp_path: Path) -> None:
    assert parse_input(["a=2", "name=Ada", "flag=true", "items=[1, 2]", "empty=", "x=null"], None) == {
        "a": 2,
        "name": "Ada",
        "flag": True,
        "items": [1, 2],
        "empty": "",
        "x": None,
    }
    assert parse_input(["b=3"], Path("-"), stdin=lambda: '{"a": 1, "b": 2}') == {"a": 1, "b": 3}
    done = call("calculator", "operation=multiply", "a=6", "b=7", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "42.0\n", "")


def test_json_argument_then_pairs_override_and_input_file_comes_first(tmp_path: Path) -> None:
    (tmp_path / "input.json").write_text('{"operation": "subtract", "a": 10, "b": 1}')
    done = call("calculator", '{"a": 20}', "b=5", "--input-file", str(tmp_path / "input.json"), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "15.0\n")


def test_json_result_is_pretty_printed_and_the_context_tool_sees_its_call(tmp_path: Path) -> None:
    done = call("call_info", "note=Ada", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{\n  ")  # pretty-printed
    result = json.loads(done.stdout)
    assert result["tool_use_id"].startswith("tooluse_")
    assert {k: v for k, v in result.items() if k != "tool_use_id"} == {
        "note": "Ada",
        "tool_name": "call_info",
        "agent": None,
        "invocation_state_keys": [],
    }


def test_stream_events_are_shown_as_they_come_before_the_result(tmp_path: Path) -> None:
    done = call("count_primes", "limit=100", "chunks=4", cwd=tmp_path, merge=True)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    progress = [line for line in lines if line.startswith('event {"progress"')]
    assert progress == [
        'event {"progress": 0.25, "checked": 25, "found": 9}',
        'event {"progress": 0.5, "checked": 50, "found": 15}',
        'event {"progress": 0.75, "checked": 75, "found": 21}',
        'event {"progress": 1.0, "checked": 100, "found": 25}',
    ]
    result_start = lines.index("{")
    assert lines.index(progress[-1]) < result_start
    assert json.loads("\n".join(lines[result_start:])) == {"limit": 100, "count": 25, "largest": 97}


def test_error_result_exits_1(tmp_path: Path) -> None:
    divide = call("calculator", "operation=divide", "a=1", "b=0", cwd=tmp_path)
    assert (divide.returncode, divide.stdout) == (1, "Cannot divide by zero\n")
    assert "Traceback" not in divide.stderr
    invalid = call("calculator", "operation=power", "a=1", "b=2", cwd=tmp_path)
    assert invalid.returncode == 1
    assert "Invalid input for tool 'calculator'" in invalid.stdout
    assert "operation: must be 'add', 'subtract', 'multiply' or 'divide'" in invalid.stdout


def test_invalid_json_names_the_problem_and_position(tmp_path: Path) -> None:
    done = run_cli("call", "calculator", '{"a": 1,}', cwd=tmp_path)  # rejected before any loading
    assert done.returncode == 2
    assert (
        "invalid JSON in argument 1: Expecting property name enclosed in double quotes at line 1, column 9"
        in (done.stderr)
    )
    assert '  {"a": 1,}\n          ^' in done.stderr  # the caret under the offending character
    (tmp_path / "bad.json").write_text('{\n  "a": tru\n}')
    from_file = run_cli("call", "calculator", "--input-file", str(tmp_path / "bad.json"), cwd=tmp_path)
    assert from_file.returncode == 2
    assert f"invalid JSON in {tmp_path / 'bad.json'}: Expecting value at line 2, column 8" in from_file.stderr
    not_object = run_cli("call", "calculator", "[1, 2]", cwd=tmp_path)
    assert not_object.returncode == 2
    assert "must be a JSON object, not list" in not_object.stderr


def test_unknown_tool_lists_the_available_ones(tmp_path: Path) -> None:
    done = call("no_such_tool", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert (
        "unknown tool 'no_such_tool'; available: calculator, call_info, count_primes, currency_converter, "
        "shipping_quote, slugify, unit_converter, word_count"
    ) in " ".join(done.stderr.split())


def test_a_typo_gets_the_closest_names_first(tmp_path: Path) -> None:
    done = call("calculater", "a=1", cwd=tmp_path)
    assert done.returncode == 2
    assert " ".join(done.stderr.split()).startswith(
        "error: unknown tool 'calculater'; did you mean 'calculator'? available: calculator, call_info, "
    )
    several = call("count-prime", cwd=tmp_path)  # '-' for '_', one letter short
    assert "unknown tool 'count-prime'; did you mean 'count_primes'?" in " ".join(several.stderr.split())
    inspected = run_cli("inspect", "word_cont", "--dir", str(SAMPLE_TOOLS), cwd=tmp_path)
    assert inspected.returncode == 2
    assert "unknown tool 'word_cont'; did you mean 'word_count'?" in " ".join(inspected.stderr.split())


def test_a_folder_first_says_how_call_takes_it(tmp_path: Path) -> None:
    write(tmp_path / "my tools" / "calc.py", CALCULATOR)
    done = run_cli("call", "my tools", "calculator", "a=1", "b=2", cwd=tmp_path)
    assert done.returncode == 2
    assert " ".join(done.stderr.split()) == (
        "error: 'my tools' is a folder: call takes the tool name first and its folders with --dir, "
        "e.g. tool-loader call calculator a=1 b=2 --dir 'my tools'"
    )
    fixed = run_cli("call", "calculator", "a=1", "b=2", "--dir", "my tools", cwd=tmp_path)
    assert (fixed.returncode, fixed.stdout) == (0, "3\n")


NOT_FINITE = '''
from loader import tool


@tool
def ratio(a: float, b: float) -> float:
    """a / b, NaN for 0 / 0 and infinite for x / 0."""
    if b == 0:
        return float("nan") if a == 0 else float("inf")
    return a / b


@tool
def stats(values: list[float]) -> dict:
    """The mean and the spread of the values (NaN for an empty list)."""
    mean = sum(values) / len(values) if values else float("nan")
    return {"mean": mean, "range": [min(values, default=float("-inf")), max(values, default=float("inf"))]}
'''


def test_a_result_that_is_not_finite_prints_as_json_null_as_mcp_clients_get_it(tmp_path: Path) -> None:
    write(tmp_path / "tools" / "maths.py", NOT_FINITE)
    nan = run_cli("call", "ratio", "a=0", "b=0", cwd=tmp_path)
    assert (nan.returncode, nan.stdout) == (0, "null\n"), nan.stderr
    assert run_cli("call", "ratio", "a=1", "b=4", cwd=tmp_path).stdout == "0.25\n"
    nested = run_cli("call", "stats", "values=[]", cwd=tmp_path)
    assert nested.returncode == 0, nested.stderr
    assert json.loads(nested.stdout, parse_constant=_not_json) == {"mean": None, "range": [None, None]}


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def test_inputs_may_follow_options(tmp_path: Path) -> None:
    done = run_cli(
        "call", "calculator", "--dir", str(SAMPLE_TOOLS), "operation=multiply", "a=6", "b=7", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout
    bad = run_cli("list", str(SAMPLE_TOOLS), "--bogus", cwd=tmp_path)
    assert bad.returncode == 2 and "unrecognized arguments: --bogus" in bad.stderr


CALCULATOR = '''
from loader import tool


@tool
def calculator(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''

RAISING = '''
from loader import tool


def _fetch(city: str) -> str:
    raise RuntimeError("weather service down")


@tool
def forecast(city: str) -> str:
    """Forecast for a city."""
    return _fetch(city)
'''


def test_a_tool_exception_names_the_raising_line_and_offers_the_traceback(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "weather.py").write_text(RAISING.lstrip())
    done = run_cli("call", "forecast", "city=Lisbon", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == "Error: RuntimeError - weather service down\n"
    assert "raised at tools/weather.py:5 in _fetch (-v for the traceback)" in done.stderr
    assert "Traceback" not in done.stderr

    verbose = run_cli("call", "forecast", "city=Lisbon", "-v", cwd=tmp_path)  # -v after the command
    assert verbose.returncode == 1
    assert "Traceback (most recent call last)" in verbose.stderr
    assert 'raise RuntimeError("weather service down")' in verbose.stderr
    assert "raised at tools/weather.py:5 in _fetch\n" in verbose.stderr


def test_a_word_without_equals_sign_asks_for_key_value(tmp_path: Path) -> None:
    done = call("forecast_city", "city", cwd=tmp_path)
    assert done.returncode == 2
    assert "argument 1: expected key=value (or a JSON object), got 'city'" in done.stderr
    assert "JSON" not in done.stderr.split("got")[0].replace("(or a JSON object)", "")


def test_validation_problems_are_printed_once(tmp_path: Path) -> None:
    done = call("calculator", "operation=add", "a=1", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == "Invalid input for tool 'calculator':\n- b: missing required parameter\n"


def test_json_nested_ten_thousand_deep_is_a_usage_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"a": ' + "[" * 10_000 + "]" * 10_000 + "}")
    done = call("calculator", "--input-file", str(deep), cwd=tmp_path)
    assert done.returncode == 2
    assert f"the JSON in {deep} is nested too deeply to read" in done.stderr
    assert "RecursionError" not in done.stderr and "Traceback" not in done.stderr
