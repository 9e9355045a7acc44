"""How proposals and gate reports read on the console: every user-facing word of agent authoring."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from ..authoring.area import ProposalRecord
from ..authoring.gate import spec_verdict

__all__ = ["gate_lines", "print_report", "proposal_json", "provenance_phrase", "quarantine_phrase"]


def _step(ok: bool) -> Text:
    return Text("ok  ", style="green") if ok else Text("FAIL", style="bold red")


def gate_lines(report: Mapping[str, Any]) -> Iterator[tuple[bool, str]]:
    """One (ok, line) per step of the gate, then one per problem under it."""
    sandbox = report.get("sandbox", {})
    if not sandbox.get("ok"):
        yield False, "sandbox: " + "; ".join(sandbox.get("problems", []))
        return
    off = [name for name, on in sandbox.get("layers", {}).items() if not on]
    yield True, "sandbox: " + (f"best effort, OFF: {', '.join(off)}" if off else "every layer enforced")
    load = report["load"]
    yield load["ok"], f"load: {', '.join(load['tools']) or 'no tools'}"
    for problem in load["problems"]:
        yield False, f"  {problem}"
    examples = report["examples"]
    yield examples["ok"], f"examples: {examples['count']} run"
    for run in examples["runs"]:
        if run["failure"]:
            yield False, f"  {run['failure']}"
    props = report["properties"]
    yield props["ok"], f"property tests: up to {props['cases']} cases per tool, seed {props['seed']}"
    for run in props["runs"]:
        if run["skipped"]:
            yield (
                True,
                f"  {run['tool']}: not run, its input schema cannot be generated from ({run['skipped']})",
            )
        elif run["failure"]:
            yield False, f"  {run['tool']} with {run['failing_input']!r}: {run['failure']}"
        else:
            yield (
                True,
                f"  {run['tool']}: {run['ran']} cases, {run['refused']} refused by its input validation",
            )
    for entry in report["spec_diff"]["tools"]:
        kind = entry["kind"]
        yield kind != "breaking", f"spec vs live: {entry['tool']}: {entry['change']}"


def print_report(console: Console, record: ProposalRecord) -> None:
    """The proposal id, its verdict and the gate's steps."""
    verdict = (
        Text("passed", style="green")
        if record.state.value == "passed"
        else Text(record.state.value, style="bold red")
    )
    console.print(Text.assemble(f"proposal {record.id} by {record.author}: gate ", verdict))
    for ok, line in gate_lines(record.report):
        console.print(Text.assemble("  ", _step(ok), " ", line), soft_wrap=True, highlight=False)
    if record.state.value == "passed":
        console.print(Text(f"promote it with: tool-loader promote {record.id}"))


def proposal_json(record: ProposalRecord) -> dict[str, Any]:
    """The ``--json`` form of a proposal: its record, its age and the two verdicts."""
    data = record.to_json()
    data["age_seconds"] = round(time.time() - record.created, 3)
    data["tools"] = record.report.get("load", {}).get("tools", [])
    data["gate"] = "passed" if record.report.get("passed") else "failed"
    data["spec"] = spec_verdict(record.report)
    return data


def quarantine_phrase(names: Iterable[str]) -> str:
    """``quarantined (not listed, calls refused): a, b``."""
    return f"quarantined (not listed, calls refused): {', '.join(sorted(names))}"


def provenance_phrase(provenance: Mapping[str, Any]) -> str:
    """``promoted from proposal <id> by <author> (gate report <digest>)``."""
    return (
        f"promoted from proposal {provenance.get('proposal')} by {provenance.get('author')} "
        f"(gate report {str(provenance.get('gate_report_digest'))[:12]})"
    )
