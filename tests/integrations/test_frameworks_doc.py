"""The examples of ``docs/frameworks.md`` run and print what their comments say.

Each example is a ``python`` block holding ``with ToolLoader([folder]) as loader:``; it runs after
the setup block (the one defining ``edit_greet``), in a fresh namespace and an empty working
directory. A ``print(...)  # text`` line must print ``text``. Blocks that say they need an API
key are wiring one-liners and are not run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"
BLOCK = re.compile(r"^## (?P<heading>.+?)$|^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
EXPECTED = re.compile(r"^\s*print\(.*\)  # (?P<text>.+)$", re.MULTILINE)


def _examples() -> tuple[str, dict[str, str]]:
    setup = ""
    examples: dict[str, str] = {}
    heading = ""
    for found in BLOCK.finditer(DOC.read_text()):
        if found.group("heading"):
            heading = found.group("heading")
            continue
        code = found.group("code")
        if "def edit_greet" in code:
            setup = code
        elif "with ToolLoader([folder]) as loader:" in code:
            examples[heading] = code
    return setup, examples


SETUP, EXAMPLES = _examples()


def test_the_doc_has_an_example_per_framework() -> None:
    assert SETUP
    assert sorted(EXAMPLES) == [
        "Google ADK",
        "LangChain v1 / LangGraph",
        "LlamaIndex",
        "OpenAI Agents SDK",
        "pydantic-ai",
        "smolagents",
    ]


# LlamaIndex's workflows find their steps with inspect.getmembers on the (pydantic) agent.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
@pytest.mark.parametrize("heading", sorted(EXAMPLES))
def test_example_prints_what_it_says(
    heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code = EXAMPLES[heading]
    expected = [found.group("text") for found in EXPECTED.finditer(code)]
    assert len(expected) == 2, code
    exec(compile(SETUP + "\n" + code, f"docs/frameworks.md ({heading})", "exec"), {"__name__": "__doc__"})
    assert capsys.readouterr().out.splitlines() == expected
