"""The code-shape gate CI runs after the tests.

Fails when a function's cyclomatic complexity is above radon rank C (more
than 20), or when a module's maintainability index is below rank A. Prints
every offender. There is no cap on a module's length: modules are split by
concept, and the layering (``lint-imports``) is what keeps the structure.
"""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_rank, cc_visit
from radon.metrics import mi_rank, mi_visit


def main(roots: list[str]) -> int:
    problems: list[str] = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            source = path.read_text()
            for block in cc_visit(source):
                if cc_rank(block.complexity) not in "ABC":
                    problems.append(f"{path}:{block.lineno} {block.name}: complexity {block.complexity}")
            mi = mi_visit(source, multi=True)
            if mi_rank(mi) != "A":
                problems.append(f"{path}: maintainability index {mi:.1f} (rank {mi_rank(mi)})")
    for problem in problems:
        print(problem)
    print(f"quality gate: {len(problems)} problem(s) in {', '.join(roots)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["loader", "plugins"]))
