"""The tools an agent is given with ``serve --agent-authoring``: propose a tool file, list proposals.

With ``autonomy="auto"`` it may also promote a passed proposal itself; by default (``"propose"``)
a person promotes. The gate, the digest check and the breaking-change refusal apply either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ..tools.function_tool import FunctionTool
from ..types import AgentTool
from .area import ProposalRecord
from .gate import GateOptions, spec_verdict
from .workflow import list_proposals, promote, propose

__all__ = ["Autonomy", "authoring_tools"]

Autonomy = Literal["propose", "auto"]


def _summary(record: ProposalRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "state": record.state.value,
        "author": record.author,
        "tools": record.report.get("load", {}).get("tools", []),
        "gate": "passed" if record.report.get("passed") else "failed",
        "spec": spec_verdict(record.report),
    }


def authoring_tools(
    tools_dir: Path,
    *,
    autonomy: Autonomy = "propose",
    author: str = "mcp-agent",
    options: GateOptions | None = None,
) -> list[AgentTool]:
    """``propose_tool`` and ``list_proposals`` for ``tools_dir``; ``promote_proposal`` too when ``auto``."""

    def propose_tool(filename: str, source: str) -> dict[str, Any]:
        """Propose a Python tool file: it is gated in a sandbox and goes live only once promoted.

        Args:
            filename: The file's name in the tool folder, such as ``weather.py``.
            source: The file's Python source.
        """
        record = propose(tools_dir, {filename: source.encode()}, author=author, options=options)
        return {**_summary(record), "report": dict(record.report)}

    def list_proposals_tool() -> list[dict[str, Any]]:
        """List the proposed tool files: state, tools, the gate's verdict and the spec change."""
        return [_summary(record) for record in list_proposals(tools_dir)]

    def promote_proposal(proposal_id: str) -> dict[str, Any]:
        """Promote a passed proposal into the live folder (refused if it failed, changed or breaks callers).

        Args:
            proposal_id: The id ``propose_tool`` returned.
        """
        promotion = promote(tools_dir, proposal_id)
        return {**_summary(promotion.record), "written": [str(path) for path in promotion.written]}

    tools: list[AgentTool] = [
        FunctionTool(propose_tool, name="propose_tool"),
        FunctionTool(list_proposals_tool, name="list_proposals"),
    ]
    if autonomy == "auto":
        tools.append(FunctionTool(promote_proposal, name="promote_proposal"))
    return tools
