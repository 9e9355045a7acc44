"""Reading the ``examples`` a tool declares into ``ToolExample`` records.

Two spellings are accepted for each field, because the class-tool reference
writes ``expectedOutput`` while Python code writes ``expected_output``:
``params`` (or ``input``), ``expected_output`` (or ``expectedOutput``), and
``description``. Function tools (``@tool(examples=[...])``) are checked strictly
when decorated; class-tool metadata has always accepted any dicts, so there an
example without a params dict is kept for documentation but not run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ToolDefinitionError
from ..types import ToolExample

__all__ = ["example_from_mapping", "parse_examples", "runnable_examples"]

_PARAMS_KEYS = ("params", "input")
_EXPECTED_KEYS = ("expected_output", "expectedOutput")


def example_from_mapping(raw: Mapping[str, Any]) -> ToolExample | None:
    """One example dict as a ``ToolExample``; None when it has no params dict to call the tool with."""
    params = next((raw[key] for key in _PARAMS_KEYS if key in raw), None)
    if not isinstance(params, Mapping):
        return None
    description = raw.get("description")
    expected_key = next((key for key in _EXPECTED_KEYS if key in raw), None)
    if expected_key is None:
        return ToolExample(dict(params), str(description or ""))
    return ToolExample(dict(params), str(description or ""), raw[expected_key])


def parse_examples(raw: Any, owner: str) -> tuple[ToolExample, ...]:
    """Strictly read ``@tool(examples=...)`` for the tool named by ``owner``.

    Raises:
        ToolDefinitionError: Not a list of dicts, or an example without a ``params`` dict
            (the message names the tool and the example's position).
    """
    if raw is None:
        return ()
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise ToolDefinitionError(f"{owner}: examples must be a list of dicts, got {type(raw).__name__}")
    parsed: list[ToolExample] = []
    for index, item in enumerate(raw):
        if isinstance(item, ToolExample):
            parsed.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ToolDefinitionError(f"{owner}: example {index} must be a dict, got {type(item).__name__}")
        example = example_from_mapping(item)
        if example is None:
            raise ToolDefinitionError(
                f"{owner}: example {index} needs 'params', a dict of the tool's input "
                '(e.g. {"params": {"a": 1}, "expected_output": 2})'
            )
        unknown = sorted(set(item) - {*_PARAMS_KEYS, *_EXPECTED_KEYS, "description"})
        if unknown:
            raise ToolDefinitionError(
                f"{owner}: example {index} has unknown keys {', '.join(unknown)} "
                "(use description, params, expected_output)"
            )
        parsed.append(example)
    return tuple(parsed)


def runnable_examples(raw: Iterable[Mapping[str, Any]]) -> tuple[ToolExample, ...]:
    """Leniently read class-tool metadata examples, keeping those that can be run."""
    found = (example_from_mapping(item) for item in raw if isinstance(item, Mapping))
    return tuple(example for example in found if example is not None)
