"""What the live framework adapters share: where their tools come from, schemas, and results in plain parts.

Every adapter (``langchain``, ``openai_agents``, ``pydantic_ai``, ``google_adk``,
``llama_index``, ``smolagents``) offers a model one ``registry.snapshot()`` per
step and runs that step's calls through the same snapshot. This module holds
the framework-free pieces they all need; it imports no framework.
"""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from ..registry.tool_registry import ToolRegistry
from ..results import finite_json
from ..types import AgentTool, JSONSchema, ToolResult

__all__ = [
    "HasRegistry",
    "ResultPart",
    "ToolSource",
    "failed",
    "input_schema",
    "json_text",
    "mime_type",
    "registry_of",
    "result_parts",
    "result_text",
]


class HasRegistry(Protocol):
    """Anything serving a registry, such as a ``ToolLoader``."""

    @property
    def registry(self) -> ToolRegistry: ...


ToolSource: TypeAlias = ToolRegistry | HasRegistry
"""What an adapter takes: a ``ToolRegistry``, or anything with a ``registry`` (a ``ToolLoader``)."""


def registry_of(source: ToolSource) -> ToolRegistry:
    """The registry behind ``source`` (a loader's, or ``source`` itself).

    Raises:
        TypeError: ``source`` is neither a ``ToolRegistry`` nor serves one.
    """
    registry = getattr(source, "registry", None)
    found = registry if registry is not None else source
    if not isinstance(found, ToolRegistry):
        raise TypeError(
            "the live tools come from a ToolLoader or a ToolRegistry, "
            f"got {type(source).__name__} (no ToolRegistry behind it)"
        )
    return found


def input_schema(tool: AgentTool) -> JSONSchema:
    """A private copy of the tool's JSON Schema, rooted at an object with ``properties``.

    Frameworks annotate, normalise or make schemas strict in place, and the
    tool's own spec must stay as the registry serves it; model APIs want an
    object root even for a tool without parameters.
    """
    wrapped = tool.tool_spec.get("inputSchema")
    inner = wrapped.get("json", wrapped) if isinstance(wrapped, dict) else None
    schema: JSONSchema = copy.deepcopy(inner) if isinstance(inner, dict) else {}
    schema.setdefault("type", "object")
    if schema["type"] == "object":
        schema.setdefault("properties", {})
    return schema


def failed(result: ToolResult) -> bool:
    """Whether a call ended in an error result (the registry returns these instead of raising)."""
    return result.get("status") == "error"


@dataclass(frozen=True, slots=True)
class ResultPart:
    """One block of a tool result: text (a json block as its JSON text), an image or a document."""

    kind: Literal["text", "image", "document"]
    text: str = ""
    data: bytes = b""
    format: str = ""
    name: str = ""


def json_text(value: Any) -> str:
    """Strict JSON text (non-finite floats as ``null``), as a model reads a json block."""
    return json.dumps(finite_json(value), ensure_ascii=False, allow_nan=False, default=str)


def _raw(source: Any) -> bytes:
    data = source.get("bytes", b"") if isinstance(source, dict) else b""
    return base64.b64decode(data) if isinstance(data, str) else bytes(data)


def result_parts(result: ToolResult) -> list[ResultPart]:
    """The result's blocks in order; a json block becomes its JSON text."""
    parts: list[ResultPart] = []
    for block in result.get("content", []):
        if "text" in block:
            parts.append(ResultPart("text", text=str(block["text"])))
        elif "json" in block:
            parts.append(ResultPart("text", text=json_text(block["json"])))
        elif "image" in block:
            image = block["image"]
            fmt = str(image.get("format", "png"))
            parts.append(ResultPart("image", data=_raw(image.get("source")), format=fmt))
        elif "document" in block:
            document = block["document"]
            parts.append(
                ResultPart(
                    "document",
                    data=_raw(document.get("source")),
                    format=str(document.get("format", "txt")),
                    name=str(document.get("name") or "document"),
                )
            )
    return parts


_DOCUMENT_MIME = {
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
    "html": "text/html",
    "pdf": "application/pdf",
}


def mime_type(part: ResultPart) -> str:
    """The media type of an image or document part."""
    fmt = part.format.lower()
    if part.kind == "image":
        return "image/jpeg" if fmt in ("jpg", "jpeg") else f"image/{fmt}"
    return _DOCUMENT_MIME.get(fmt, "application/octet-stream")


def _as_text(part: ResultPart) -> str:
    if part.kind == "text":
        return part.text
    if part.kind == "document" and mime_type(part).startswith("text/"):
        return part.data.decode("utf-8", errors="replace")
    label = part.name if part.kind == "document" else "image"
    return f"[{label}: {mime_type(part)}, {len(part.data)} bytes]"


def result_text(result: ToolResult) -> str:
    """The whole result as one text, for frameworks whose tool outputs are strings.

    Text documents are inlined; images and binary documents become a short
    placeholder naming their type and size.
    """
    return "\n".join(_as_text(part) for part in result_parts(result))
