"""Tool identity on the wire: the versions clients were shown lately, and the answer to a stale call.

A client may send ``_meta["tool-loader/expected-digest"]`` with a ``tools/call``:
the digest of the tool as it last saw it. When the live tool's digest differs,
the call is not run (its arguments were shaped by a definition that is gone);
the answer says what changed and carries the current definition, so a client
that missed ``list_changed`` recovers within one turn.

What changed needs the spec the client saw. ``RecentVersions`` keeps the specs
this server listed or ran lately, a few versions per tool, by digest; a digest
it never saw (another replica's, or one from before a restart) is answered
without the comparison.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ..fingerprint import model_view
from ..results import error_result
from ..spec_diff.kinds import SpecChange, SpecChangeKind
from ..spec_diff.specs import compare_specs, describe_change
from ..types import ToolResult, ToolSpec

__all__ = [
    "DEFAULT_TOOLS_KEPT",
    "DEFAULT_VERSIONS_KEPT",
    "RecentVersions",
    "is_digest",
    "malformed_expectation_result",
    "stale_call_result",
]

DEFAULT_VERSIONS_KEPT = 8
"""Versions remembered per tool: a client lagging further behind gets no comparison, only the refusal."""

DEFAULT_TOOLS_KEPT = 10_000
"""Tool names remembered at most (the least recently seen go first), so a churning folder stays bounded."""


_DIGEST = re.compile(r"[0-9a-f]{64}")
_JSON_KINDS = {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}


def is_digest(value: object) -> bool:
    """Whether ``value`` is a tool digest as this server writes them: a sha256, in lowercase hex."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def malformed_expectation_result(tool_use_id: str, name: str, expected: object) -> ToolResult:
    """The error result of a call whose expected digest is no digest: it names the key, not the value."""
    got = (
        f"{len(expected):,} characters"
        if isinstance(expected, str)
        else _JSON_KINDS.get(type(expected), "that")
    )
    text = (
        f"Error: the call to tool '{name}' was not run: _meta[\"tool-loader/expected-digest\"] must be the "
        f"digest the tool was listed with, 64 lowercase hexadecimal characters, not {got}."
    )
    return error_result(tool_use_id, text)


class RecentVersions:
    """The last few specs of each tool, by digest; thread-safe."""

    def __init__(self, per_tool: int = DEFAULT_VERSIONS_KEPT, tools: int = DEFAULT_TOOLS_KEPT) -> None:
        if per_tool < 1 or tools < 1:
            raise ValueError(f"RecentVersions keeps at least one version of one tool, not {per_tool}/{tools}")
        self._per_tool = per_tool
        self._tools = tools
        self._kept: OrderedDict[str, OrderedDict[str, ToolSpec]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, name: str, digest: str, spec: ToolSpec) -> None:
        """Note that ``spec`` (whose digest is ``digest``) was shown or run as ``name``."""
        with self._lock:
            versions = self._kept.get(name)
            if versions is None:
                versions = self._kept[name] = OrderedDict()
                while len(self._kept) > self._tools:
                    self._kept.popitem(last=False)
            else:
                self._kept.move_to_end(name)
            if digest in versions:
                versions.move_to_end(digest)
                return
            versions[digest] = spec
            while len(versions) > self._per_tool:
                versions.popitem(last=False)

    def knows(self, name: str, digest: str) -> bool:
        """Whether that version is remembered (a lock-free read: a call checks it every time)."""
        versions = self._kept.get(name)
        return versions is not None and digest in versions

    def spec_of(self, name: str, digest: str) -> ToolSpec | None:
        """The spec of ``name`` whose digest is ``digest``, if it is still remembered."""
        with self._lock:
            versions = self._kept.get(name)
            return None if versions is None else versions.get(digest)

    def __len__(self) -> int:
        """How many versions are remembered, all tools together."""
        with self._lock:
            return sum(len(versions) for versions in self._kept.values())


def stale_call_result(
    tool_use_id: str,
    name: str,
    *,
    expected: str,
    current: str,
    spec: ToolSpec,
    seen: Mapping[str, Any] | None,
) -> ToolResult:
    """The error result of a call refused because the tool changed since the client saw it.

    The text names the tool and what changed (``compare_specs`` of the spec the
    client saw, when known, against the live one); the json block carries the
    same facts and the current definition, as the client would list it.
    """
    change: SpecChange | None = None if seen is None else compare_specs(seen, spec)
    if change is None:
        what = f"this server does not know the version you saw (digest {expected[:12]})"
    elif change.kind is SpecChangeKind.NONE:
        what = "it differs only in what no call depends on"
    else:
        what = describe_change(change, limit=5)
    text = (
        f"Error: tool '{name}' changed since you saw it, so the call was not run: {what}. "
        f"Its current digest is {current}; call it again as the current definition says."
    )
    details = {
        "tool": name,
        "expectedDigest": expected,
        "currentDigest": current,
        "change": None if change is None else change.to_json(),
        "current": model_view(spec),
    }
    return error_result(tool_use_id, text, json_content=details)
