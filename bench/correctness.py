"""Benchmark 2: after the same edits, does each system serve what is on disk?

Every case starts each system on its own copy of a small folder, applies the
same steps to all three folders (each write in the case's save style), waits a
fixed settle time (the same for every system; ours gets no ``wait_idle``), then
compares what each serves with what the files on disk define:

* ``ok``: exactly the tools on disk, each returning the text on disk;
* ``missing``: a tool on disk is not served;
* ``ghost``: a tool no longer on disk is still served;
* ``stale``: a tool returns an older version's text;
* ``error``: the system raised.

Edits keep the file size (``'v1'`` becomes ``'v2'``), as a one-character change does.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import (
    SAVE_STYLES,
    SYSTEM_LABELS,
    BenchResult,
    Options,
    System,
    Table,
    Target,
    available,
    make_system,
    scratch_dir,
    tool_source,
)

NAME = "correctness"
SYSTEMS = ("ours", "strands", "fastmcp")

_BROKEN = "\n\ndef broken(:\n    pass\n"


class CaseDir:
    """One system's folder for one case, with the edit verbs the steps use."""

    def __init__(self, base: Path, system: System, prefix: str, style: str | None) -> None:
        self.folder = base / "tools"
        self.outside = base / "outside"
        self.folder.mkdir(parents=True)
        self.outside.mkdir()
        self.dialect = system.dialect
        self.prefix = prefix
        self.save = SAVE_STYLES[style] if style else SAVE_STYLES["in-place"]

    def stem(self, logical: str) -> str:
        """The file stem of a logical file (unique per system and case: peers import bare stems)."""
        return f"{self.prefix}_{logical}"

    def path(self, logical: str) -> Path:
        return self.folder / f"{self.stem(logical)}.py"

    def text(self, tools: dict[str, str], header: str = "") -> str:
        return tool_source(self.dialect, tools, header=header.format(helper=self.stem("helper")))

    def create(self, logical: str, text: str) -> None:
        """Write a file the plain way (setup, before the system starts)."""
        self.path(logical).write_text(text)

    def write(self, logical: str, text: str) -> None:
        """Save a file in the case's save style."""
        self.save(self.path(logical), text)

    def delete(self, logical: str) -> None:
        self.path(logical).unlink()

    def move_in(self, logical: str, text: str) -> None:
        outside = self.outside / f"{self.stem(logical)}.py"
        outside.write_text(text)
        os.replace(outside, self.path(logical))

    def move_out(self, logical: str) -> None:
        os.replace(self.path(logical), self.outside / f"{self.stem(logical)}.py")


Step = Callable[[CaseDir], None]


@dataclass(frozen=True)
class Initial:
    """A file present before the system starts: tools (name -> return expression) or plain text."""

    logical: str
    tools: dict[str, str] | None = None
    text: str = ""
    header: str = ""


@dataclass
class Case:
    """An event: files before, steps (each followed by a settle), and the tools on disk after."""

    event: str
    initial: list[Initial]
    steps: list[Step]
    expected: dict[str, str]
    styled: bool = True
    style: str | None = None
    results: dict[str, Any] = field(default_factory=dict)

    def setup(self, d: CaseDir) -> None:
        """Write the initial files, plus a tool that no step touches."""
        d.create("steady", d.text({"steady": "'s'"}))
        for item in self.initial:
            d.create(item.logical, item.text if item.tools is None else d.text(item.tools, item.header))


def _cases() -> list[Case]:
    steady = {"steady": "s"}
    first = Initial("first", {"dup": "'first'"})
    return [
        Case(
            "new file",
            [],
            [lambda d: d.write("fresh", d.text({"fresh": "'v1'"}))],
            {**steady, "fresh": "v1"},
        ),
        Case(
            "edit",
            [Initial("edited", {"edited": "'v1'"})],
            [lambda d: d.write("edited", d.text({"edited": "'v2'"}))],
            {**steady, "edited": "v2"},
        ),
        Case(
            "delete",
            [Initial("gone", {"gone": "'g'"})],
            [lambda d: d.delete("gone")],
            steady,
            styled=False,
        ),
        Case(
            "move in",
            [],
            [lambda d: d.move_in("incoming", d.text({"incoming": "'in'"}))],
            {**steady, "incoming": "in"},
            styled=False,
        ),
        Case(
            "move out",
            [Initial("leaving", {"leaving": "'l'"})],
            [lambda d: d.move_out("leaving")],
            steady,
            styled=False,
        ),
        Case(
            "tool removed from a file",
            [Initial("pair", {"keep": "'k'", "drop": "'d'"})],
            [lambda d: d.write("pair", d.text({"keep": "'k'"}))],
            {**steady, "keep": "k"},
        ),
        Case(
            "function renamed",
            [Initial("renamed", {"old_name": "'r'"})],
            [lambda d: d.write("renamed", d.text({"new_name": "'r'"}))],
            {**steady, "new_name": "r"},
        ),
        Case(
            "syntax error, then fix",
            [Initial("fragile", {"fragile": "'v1'"})],
            [
                lambda d: d.write("fragile", d.text({"fragile": "'v2'"}) + _BROKEN),
                lambda d: d.write("fragile", d.text({"fragile": "'v3'"})),
            ],
            {**steady, "fragile": "v3"},
        ),
        Case(
            "duplicate name, owner deleted",
            [first],
            [lambda d: d.write("second", d.text({"dup": "'other'"})), lambda d: d.delete("first")],
            {**steady, "dup": "other"},
        ),
        Case(
            "duplicate name, duplicate deleted",
            [first],
            [lambda d: d.write("second", d.text({"dup": "'other'"})), lambda d: d.delete("second")],
            {**steady, "dup": "first"},
        ),
        Case(
            "helper edit",
            [
                Initial("helper", text="WORD = 'one'\n"),
                Initial("user", {"user": "WORD"}, header="from {helper} import WORD"),
            ],
            [lambda d: d.write("helper", "WORD = 'two'\n")],
            {**steady, "user": "two"},
        ),
    ]


def _verdict(system: System, expected: dict[str, str]) -> tuple[str, dict[str, Any]]:
    try:
        names = system.names()
        served = {name: system.call(name) for name in sorted(names)}
    except Exception as exc:
        return "error", {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    problems = []
    if set(expected) - names:
        problems.append("missing")
    if names - set(expected):
        problems.append("ghost")
    if any(served[n] != v for n, v in expected.items() if n in served):
        problems.append("stale")
    return (", ".join(problems) or "ok"), {"served": served}


def _run_case(case: Case, index: int, systems: list[str], step_settle: float, final_settle: float) -> None:
    dirs: dict[str, CaseDir] = {}
    running: dict[str, System] = {}
    with scratch_dir(f"correct{index}") as base:
        try:
            for key in systems:
                system = make_system(key)
                dirs[key] = CaseDir(base / key, system, f"{key}{index}", case.style)
                case.setup(dirs[key])
                try:
                    system.start(dirs[key].folder)
                except Exception as exc:
                    case.results[key] = {"verdict": "error", "error": f"start: {type(exc).__name__}: {exc}"}
                    continue
                running[key] = system
            time.sleep(step_settle)
            for number, step in enumerate(case.steps):
                for key in running:
                    step(dirs[key])
                time.sleep(final_settle if number == len(case.steps) - 1 else step_settle)
            for key, system in running.items():
                verdict, detail = _verdict(system, case.expected)
                case.results[key] = {"verdict": verdict, **detail}
        finally:
            for system in running.values():
                system.close()


def _expand(cases: list[Case], styles: list[str]) -> list[Case]:
    expanded: list[Case] = []
    for case in cases:
        if not case.styled:
            expanded.append(case)
            continue
        for style in styles:
            expanded.append(Case(case.event, case.initial, case.steps, case.expected, True, style))
    return expanded


def run(options: Options) -> BenchResult:
    """Every event in every save style, for ours and each installed peer."""
    styles = ["in-place"] if options.quick else list(SAVE_STYLES)
    step_settle, final_settle = (0.3, 0.6) if options.quick else (0.5, 1.5)
    cases = _cases()
    if options.quick:
        cases = [c for c in cases if c.event in ("edit", "delete", "helper edit")]
    cases = _expand(cases, styles)
    systems = [key for key in SYSTEMS if available(key)]
    for index, case in enumerate(cases):
        _run_case(case, index, systems, step_settle, final_settle)

    result = BenchResult(NAME)
    table = Table(
        "2. correctness after settling",
        ["event / save style", *(SYSTEM_LABELS[k] for k in SYSTEMS)],
        note=(
            f"{len(cases)} cases, one run each; every system settled {final_settle:g} s after the last step "
            f"({step_settle:g} s between steps); ours checked without wait_idle. Edits keep the file size, "
            "so a same-second .pyc can make a peer serve the old code."
        ),
    )
    raw_cases = []
    for case in cases:
        label = case.event if case.style is None else f"{case.event} / {case.style}"
        row = [label]
        for key in SYSTEMS:
            row.append(case.results[key]["verdict"] if key in case.results else "not installed")
        table.rows.append(row)
        raw_cases.append(
            {"event": case.event, "style": case.style, "expected": case.expected, "systems": case.results}
        )
    result.tables.append(table)
    result.raw = {"step_settle_s": step_settle, "final_settle_s": final_settle, "cases": raw_cases}
    ours_ok = sum(1 for c in cases if c.results.get("ours", {}).get("verdict") == "ok")
    result.targets.append(
        Target("correct in every case", f"{ours_ok}/{len(cases)} ok", ours_ok == len(cases))
    )
    for key in SYSTEMS[1:]:
        if key in systems:
            ok = sum(1 for c in cases if c.results.get(key, {}).get("verdict") == "ok")
            result.raw[f"{key}_ok"] = ok
    return result
