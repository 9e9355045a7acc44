"""The gate a proposal passes before it may be promoted, run only in sandbox isolation.

The proposal's files are copied to a temporary folder and loaded by a ``ToolLoader`` with
``isolation="sandbox"``: every import and every call runs in a confined worker, never in this
process. The gate reports each step: the sandbox layers, the load (``check``-level problems),
the tools' examples, property tests from the input schemas, and the spec diff against the live
tools of the same names (loaded the same way).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..fingerprint import canonical_json, tool_digest
from ..importing.bytecode_cache import private_cache_dir
from ..isolation.sandbox.options import SandboxOptions
from ..isolation.sandbox.probe import SandboxUnavailable, check_layers
from ..reload.config import LoaderConfig
from ..reload.gate import run_example
from ..reload.loader import ToolLoader
from ..spec_diff import SpecChangeKind, compare_specs, describe_change
from ..status import FileState
from ..types import AgentTool, ToolResult
from .area import ProposalError
from .properties import MISSING_EXTRA, run_properties

__all__ = ["GateOptions", "gate_digest", "run_gate", "spec_verdict"]

_SEVERITY: Final = ("new", "none", "cosmetic", "additive", "breaking")


@dataclass(frozen=True, slots=True)
class GateOptions:
    """How hard the gate tries: property cases and seed, deadlines, and the sandbox it runs in."""

    cases: int = 100
    seed: int = 0
    deadline: float = 5.0
    """Seconds one call (an example or a property case) may take."""
    import_timeout: float = 10.0
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)


def gate_digest(report: Mapping[str, Any]) -> str:
    """The sha256 of a report's canonical JSON: what a promoted version's provenance names."""
    return hashlib.sha256(canonical_json(dict(report))).hexdigest()


def spec_verdict(report: Mapping[str, Any]) -> str:
    """The most severe spec change of a report against the live tools (``new`` when it replaces none)."""
    kinds = [str(entry["kind"]) for entry in report.get("spec_diff", {}).get("tools", [])]
    return max(kinds, key=_SEVERITY.index, default="new")


def _config(options: GateOptions) -> LoaderConfig:
    return LoaderConfig(
        isolation="sandbox",
        sandbox=options.sandbox,
        rescan_interval=0,
        call_timeout=options.deadline,
        import_timeout=options.import_timeout,
    )


def _load_step(loader: ToolLoader) -> dict[str, Any]:
    report = loader.scan()
    problems = [
        f"{status.path.name}: {status.error.one_line() if status.error else status.state.value}"
        for status in report.files
        if status.state is not FileState.LOADED
    ]
    if len(report.files) == 1:  # beside other files, a file without tools is a helper they import
        problems += [
            f"{status.path.name}: no tools"
            for status in report.files
            if status.state is FileState.LOADED and not status.tools
        ]
    tools = sorted(loader.registry.names())
    if not tools and not problems:
        problems.append("the proposal defines no tools")
    return {"ok": not problems, "problems": problems, "tools": tools}


def _examples_step(tools: list[AgentTool], timeout: float) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    for tool in tools:
        for index, example in enumerate(tool.examples):
            failure = run_example(tool, example, index, timeout)
            runs.append(
                {
                    "tool": tool.tool_name,
                    "index": index,
                    "failure": None if failure is None else failure.message(),
                }
            )
    return {"ok": all(run["failure"] is None for run in runs), "count": len(runs), "runs": runs}


def _properties_step(
    loader: ToolLoader, tools: list[AgentTool], options: GateOptions, storage: Path
) -> dict[str, Any]:
    def caller(name: str) -> Callable[[Mapping[str, Any]], ToolResult]:
        return lambda params: loader.registry.invoke(name, dict(params))

    runs = [
        run_properties(
            tool.tool_spec,
            caller(tool.tool_name),
            cases=options.cases,
            seed=options.seed,
            deadline=options.deadline,
            storage=storage,
        )
        for tool in tools
    ]
    return {
        "ok": all(run.failure is None for run in runs),
        "seed": options.seed,
        "cases": options.cases,
        "runs": [run.to_json() for run in runs],
    }


def _spec_step(tools: list[AgentTool], live_dir: Path, options: GateOptions) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    live = ToolLoader([live_dir], config=_config(options))
    try:
        live.scan()
        for tool in tools:
            old = live.registry.get(tool.tool_name)
            if old is None:
                entries.append(
                    {"tool": tool.tool_name, "kind": "new", "change": "new tool", "replaced_digest": None}
                )
                continue
            change = compare_specs(old.tool_spec, tool.tool_spec)
            entries.append(
                {
                    "tool": tool.tool_name,
                    "kind": change.kind.value,
                    "change": describe_change(change),
                    "replaced_digest": tool_digest(old),
                    "replaced_file": live.registry.source_of(tool.tool_name),
                }
            )
    finally:
        live.close()
    breaking = [e["tool"] for e in entries if e["kind"] == SpecChangeKind.BREAKING.value]
    return {"ok": True, "breaking": breaking, "tools": entries}


def _hypothesis_home(scratch: Path) -> Path:
    """Where Hypothesis keeps its caches: the loader's cache folder (``private_cache_dir``), so only a
    machine's first proposal computes the Unicode tables behind a string strategy (about 2 s of CPU);
    the gate's scratch when that folder is off, or not this user's own (another user's tables would
    choose the inputs the gate tries). Never a ``.hypothesis`` folder in the working directory."""
    cache = private_cache_dir()
    return (scratch if cache is None else cache) / "hypothesis"


def run_gate(
    files: Mapping[str, bytes], live_dir: Path, options: GateOptions | None = None
) -> dict[str, Any]:
    """The gate's report on ``files`` (relative name -> bytes) as candidates for ``live_dir``.

    Fails closed: when the machine cannot enforce the sandbox (and ``options.sandbox`` is not
    best effort) the report says so and nothing is imported.

    Raises:
        ProposalError: ``hypothesis-jsonschema`` is not installed (the ``authoring`` extra).
    """
    options = options or GateOptions()
    if importlib.util.find_spec("hypothesis_jsonschema") is None:  # found, not imported: see properties
        raise ProposalError(MISSING_EXTRA)
    report: dict[str, Any] = {"passed": False}
    try:
        layers = check_layers(options.sandbox)
    except SandboxUnavailable as exc:
        report["sandbox"] = {"ok": False, "problems": [str(exc)]}
        return report
    report["sandbox"] = {"ok": True, "layers": {layer.name: layer.on for layer in layers}}
    with tempfile.TemporaryDirectory(prefix="tool-loader-gate-") as scratch:
        folder = Path(scratch) / "proposal"
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        loader = ToolLoader([folder], config=_config(options))
        try:
            report["load"] = _load_step(loader)
            tools = loader.registry.list()
            report["examples"] = _examples_step(tools, options.deadline)
            report["properties"] = _properties_step(loader, tools, options, _hypothesis_home(Path(scratch)))
            report["spec_diff"] = _spec_step(tools, live_dir, options)
        finally:
            loader.close()
    report["passed"] = all(report[step]["ok"] for step in ("sandbox", "load", "examples", "properties"))
    return json.loads(json.dumps(report, default=str))  # type: ignore[no-any-return]
