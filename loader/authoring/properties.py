"""Property tests of a candidate tool, generated from its input schema (``hypothesis-jsonschema``).

The inputs are made here, in the host; every call goes through the registry to the tool's
sandboxed worker. A valid input may be refused by the tool's own input validation (a schema
says less than the code checks) or raise a declared tool error (``ValueError``); anything else
it raises, a call past the deadline, or a result off the declared output schema fails the tool.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

import jsonschema  # type: ignore[import-untyped]

from ..distribution import install_command
from ..reload.gate import result_output
from ..types import ToolResult, ToolSpec
from .area import ProposalError

__all__ = ["DECLARED_ERRORS", "MISSING_EXTRA", "PropertyRun", "judge_result", "run_properties"]

DECLARED_ERRORS: Final = frozenset({"ValueError", "ToolValidationError"})
"""What a tool may raise for an input it refuses: its declared errors."""
MISSING_EXTRA: Final = f"the gate's property tests need the authoring extra: {install_command('authoring')}"
_RAISED: Final = re.compile(r"^Error: (?P<type>[\w.]+) - ")
_REFUSED: Final = "Invalid input for tool"


@dataclass(frozen=True, slots=True)
class PropertyRun:
    """One tool's property run: the seed and case count asked for, what ran, the first failure."""

    tool: str
    seed: int
    cases: int
    ran: int = 0
    refused: int = 0
    failure: str | None = None
    failing_input: Any = None
    skipped: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field, by its name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def judge_result(result: ToolResult, seconds: float, deadline: float, spec: ToolSpec) -> str | None:
    """Why ``result`` of a valid input fails the tool, or None; ``"refused"`` for its own validation."""
    if seconds > deadline:
        return f"no result within the {deadline:g} s deadline ({seconds:.2f} s)"
    text = next((b["text"] for b in result.get("content", []) if "text" in b), "")
    if result.get("status") != "success":
        if text.startswith(_REFUSED):
            return "refused"
        raised = _RAISED.match(text)
        if raised is not None and raised["type"].rsplit(".", 1)[-1] in DECLARED_ERRORS:
            return None
        return f"error result: {text[:200]}"
    schema = (spec.get("outputSchema") or {}).get("json")
    if schema is None:
        return None
    try:
        jsonschema.validate(result_output(result), schema)
    except jsonschema.ValidationError as exc:
        return f"output does not match the output schema: {exc.message}"
    return None


@contextlib.contextmanager
def _storage_in(folder: Path) -> Iterator[None]:
    try:
        from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
    except ImportError as exc:
        raise ProposalError(MISSING_EXTRA) from exc

    # A Path before hypothesis 6.170, a StorageDirectory from then on.
    home: Any = storage_directory(intent_to_write=False)
    previous: Path = home if isinstance(home, Path) else home.home_directory
    set_hypothesis_home_dir(folder)
    try:
        yield
    finally:
        set_hypothesis_home_dir(previous)


def _input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The input schema; an object that does not say gets no extra properties (the loader refuses them)."""
    schema = dict(spec["inputSchema"].get("json") or {"type": "object"})
    if schema.get("type") == "object" and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    return schema


def run_properties(
    spec: ToolSpec,
    call: Callable[[Mapping[str, Any]], ToolResult],
    *,
    cases: int,
    seed: int,
    deadline: float,
    storage: Path,
) -> PropertyRun:
    """Call the tool with up to ``cases`` inputs generated from its input schema under ``seed``.

    Hypothesis keeps its caches in ``storage`` (the gate's choice) instead of a ``.hypothesis`` folder in
    the working directory; the examples database is off.
    """
    with _storage_in(storage):
        return _run(spec, call, cases=cases, seed=seed, deadline=deadline)


def _run(
    spec: ToolSpec, call: Callable[[Mapping[str, Any]], ToolResult], *, cases: int, seed: int, deadline: float
) -> PropertyRun:
    try:
        import hypothesis
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis_jsonschema import from_schema
    except ImportError as exc:
        raise ProposalError(MISSING_EXTRA) from exc

    name = spec["name"]
    try:
        strategy = from_schema(_input_schema(spec))
    except Exception as exc:  # an input schema hypothesis-jsonschema cannot read: reported, not run
        return PropertyRun(name, seed, cases, skipped=f"{type(exc).__name__}: {exc}")
    counts = {"ran": 0, "refused": 0}
    failed: list[tuple[str, Any]] = []

    @settings(
        max_examples=cases,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis.seed(seed)
    @given(strategy)
    def check(params: dict[str, Any]) -> None:
        if failed:
            return
        started = time.monotonic()
        result = call(params)
        verdict = judge_result(result, time.monotonic() - started, deadline, spec)
        counts["ran"] += 1
        if verdict == "refused":
            counts["refused"] += 1
        elif verdict is not None:
            failed.append((verdict, params))

    try:
        check()
    except Exception as exc:  # the strategy itself failed to generate (unsatisfiable schema...)
        return PropertyRun(
            name, seed, cases, counts["ran"], counts["refused"], skipped=f"{type(exc).__name__}: {exc}"
        )
    failure, failing = failed[0] if failed else (None, None)
    return PropertyRun(name, seed, cases, counts["ran"], counts["refused"], failure, failing)
