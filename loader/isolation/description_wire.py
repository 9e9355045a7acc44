"""The wire form of a ``ToolDescription``: what the import worker sends for each tool it found.

Plain JSON data with bytes encoded (``loader.isolation.protocol``); the loader's
``ProxyTool`` is built from the decoded description without a round trip.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..tools.description import ToolDescription
from ..tools.metadata import ToolMetadata
from ..types import ToolExample
from .messages import ToolMessage
from .protocol import encode_value

__all__ = ["description_from_wire", "description_to_wire"]


def description_to_wire(description: ToolDescription) -> ToolMessage:
    """A tool's description as the import worker sends it: plain data, bytes encoded."""
    metadata = description.metadata
    return {
        "name": description.name,
        "spec": encode_value(description.spec),
        "type": description.tool_type,
        "is_async": description.is_async,
        "streaming": description.streaming,
        "source_file": description.source_file,
        "source_line": description.source_line,
        "version": description.version,
        "category": description.category,
        "tags": list(description.tags),
        "display": encode_value(description.display),
        "hot_reload": description.hot_reload,
        "metadata": None if metadata is None else metadata.model_dump(mode="json", by_alias=True),
        "examples": [_example_to_wire(example) for example in description.examples],
        "search_hint": description.search_hint,
        "always_load": description.always_load,
    }


def description_from_wire(data: ToolMessage) -> ToolDescription:
    """The inverse of ``description_to_wire``."""
    raw_metadata = data.get("metadata")
    return ToolDescription(
        name=str(data["name"]),
        spec=data["spec"],
        tool_type=str(data["type"]),
        is_async=bool(data.get("is_async")),
        streaming=bool(data.get("streaming")),
        source_file=data.get("source_file"),
        source_line=data.get("source_line"),
        version=data.get("version"),
        category=data.get("category"),
        tags=tuple(str(t) for t in data.get("tags") or ()),
        display={str(k): str(v) for k, v in (data.get("display") or {}).items()},
        hot_reload=bool(data.get("hot_reload")),
        metadata=None if raw_metadata is None else ToolMetadata.model_validate(raw_metadata),
        examples=tuple(_example_from_wire(e) for e in data.get("examples") or () if isinstance(e, dict)),
        search_hint=data.get("search_hint"),
        always_load=bool(data.get("always_load")),
    )


def _example_to_wire(example: ToolExample) -> dict[str, Any]:
    """One example as plain data; ``expected_output`` only when the example gives one."""
    data: dict[str, Any] = {"params": encode_value(example.params), "description": example.description}
    if example.has_expected_output:
        data["expected_output"] = encode_value(example.expected_output)
    return data


def _example_from_wire(data: dict[str, Any]) -> ToolExample:
    """One example as ``_example_to_wire`` sent it (``expected_output`` absent when it gives none)."""
    params = data.get("params")
    example = ToolExample(params if isinstance(params, dict) else {}, str(data.get("description") or ""))
    if "expected_output" in data:
        example = replace(example, expected_output=data["expected_output"])
    return example
