"""``call NAME key=value``: each value is read as its parameter's JSON-schema type says, as ``fastmcp call`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli, write

TYPED = '''
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from loader import tool


class Box(BaseModel):
    width: int


@tool
def typed(
    city: str,
    count: int = 0,
    ratio: float = 0.0,
    flag: bool = False,
    tags: list[str] | None = None,
    options: dict[str, int] | None = None,
    maybe: int | None = None,
    either: int | str = "",
    unit: Literal["m", "km"] = "m",
    box: Box | None = None,
) -> str:
    """Echo what arrived, with the Python type of each value.

    Args:
        city: A city.
        count: A count.
        ratio: A ratio.
        flag: A flag.
        tags: Tags.
        options: Options.
        maybe: Maybe a number.
        either: A number or a text.
        unit: A unit.
        box: A box.
    """
    seen = dict(city=city, count=count, ratio=ratio, flag=flag, tags=tags, options=options, maybe=maybe,
                either=either, unit=unit, box=box.model_dump() if box else None)
    return json.dumps({key: [value, type(value).__name__] for key, value in seen.items()})


import json
'''


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_each_value_takes_its_parameters_type(tmp_path: Path, isolation: str) -> None:
    write(tmp_path / "tools" / "typed.py", TYPED)
    done = run_cli(
        "call",
        "typed",
        "city=123",
        "count=7",
        "ratio=2.5",
        "flag=true",
        'tags=["a", "b"]',
        'options={"x": 1}',
        "maybe=null",
        "either=42",
        "unit=km",
        'box={"width": 3}',
        "--isolation",
        isolation,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == {
        "city": ["123", "str"],
        "count": [7, "int"],
        "ratio": [2.5, "float"],
        "flag": [True, "bool"],
        "tags": [["a", "b"], "list"],
        "options": [{"x": 1}, "dict"],
        "maybe": [None, "NoneType"],
        "either": [42, "int"],
        "unit": ["km", "str"],
        "box": [{"width": 3}, "dict"],
    }
    # A string parameter keeps what looks like JSON as text; a union with a string falls back to it.
    text = run_cli("call", "typed", "city=true", "either=Ada", "ratio=3", cwd=tmp_path)
    assert text.returncode == 0, text.stdout + text.stderr
    got = json.loads(text.stdout)
    assert (got["city"], got["either"], got["ratio"]) == (["true", "str"], ["Ada", "str"], [3.0, "float"])


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("count=seven", "parameter 'count' takes a whole number, not 'seven': write it as count=10"),
        (
            "flag=maybe",
            "parameter 'flag' takes true or false, not 'maybe': write it as flag=true or flag=false",
        ),
        (
            "tags=a,b",
            "parameter 'tags' takes null or a JSON array, not 'a,b': write it as tags=null, tags='[1, 2]'",
        ),
        (
            "maybe=x",
            "parameter 'maybe' takes null or a whole number, not 'x': write it as maybe=null, maybe=10",
        ),
    ],
)
def test_a_value_its_parameter_cannot_take_is_a_usage_error_naming_it(
    tmp_path: Path, pair: str, message: str
) -> None:
    write(tmp_path / "tools" / "typed.py", TYPED)
    done = run_cli("call", "typed", "city=x", pair, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in " ".join(done.stderr.split()), done.stderr
