"""Tool specs and results as MCP wire objects (``Tool``, ``CallToolResult``), for either protocol era.

Pure mapping: no server, no registry. JSON values are made strictly valid
first: a non-finite float (``nan``, ``inf``) becomes ``null`` in both the JSON
text and ``structuredContent``, the way ``JSON.stringify`` writes it, so every
client parses the same value from either place.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..fingerprint import model_view
from ..results import finite_json
from ..types import JSONSchema, ToolResult, ToolResultContent, ToolSpec

__all__ = [
    "DIGEST_META_KEY",
    "EXPECTED_DIGEST_META_KEY",
    "FINGERPRINT_META_KEY",
    "PROVENANCE_META_KEY",
    "call_tool_wire",
    "finite_json",
    "text_is_structured",
    "to_call_tool_result",
    "to_mcp_tool",
]

FINGERPRINT_META_KEY = "tool-loader/fingerprint"
"""The ``_meta`` key carrying the tool-set fingerprint on ``tools/list`` and ``tools/call`` results."""

DIGEST_META_KEY = "tool-loader/digest"
"""The ``_meta`` key carrying one tool's digest: on each ``tools/list`` entry, and on a ``tools/call``
result (the digest of the version that answered, or of the live one when a stale call was refused)."""

PROVENANCE_META_KEY = "tool-loader/provenance"
"""The ``_meta`` key of a ``tools/list`` entry promoted from a proposal: its author, proposal id,
gate report digest and the digests it replaced (``loader.history.provenance``)."""
EXPECTED_DIGEST_META_KEY = "tool-loader/expected-digest"
"""The ``tools/call`` request ``_meta`` key naming the digest the client saw: a differing live tool
is not run."""

_TEXT_DOCUMENT_FORMATS = {"txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html"}
_BINARY_DOCUMENT_FORMATS = {
    "pdf": "application/pdf",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


_SCALAR_TEXT: dict[type, Callable[[Any], str]] = {
    int: int.__repr__,
    bool: lambda value: "true" if value else "false",
    float: lambda value: float.__repr__(value) if math.isfinite(value) else "null",
    type(None): lambda _: "null",
}
"""A scalar's JSON text as ``json.dumps`` writes it, without its encoder (the common tool result)."""


def _json_text(value: Any) -> str:
    """Strict JSON text (``allow_nan=False`` holds after ``finite_json``); unknown objects as strings."""
    scalar = _SCALAR_TEXT.get(type(value))
    if scalar is not None:
        return scalar(value)
    return json.dumps(finite_json(value), ensure_ascii=False, allow_nan=False, default=str)


def _schema(wrapped: Any) -> JSONSchema | None:
    """The JSON Schema inside a spec's ``{"json": schema}`` wrapper (a bare schema passes through)."""
    if not isinstance(wrapped, dict):
        return None
    inner = wrapped.get("json", wrapped)
    return inner if isinstance(inner, dict) else None


def _object_rooted(schema: JSONSchema) -> bool:
    return schema.get("type") == "object"


def to_mcp_tool(spec: ToolSpec, *, protocol_version: str, meta: dict[str, Any] | None = None) -> types.Tool:
    """A tool spec as an MCP ``Tool``, within what ``protocol_version`` allows.

    The entry is ``model_view(spec)``, the form the tool's digest is taken of:
    the input schema gets ``"type": "object"`` when it names no type (MCP
    requires an object root). Handshake-era versions only allow an
    object-rooted output schema, so any other output schema is left out for
    them (their results then carry no structured content either). ``meta``
    becomes the entry's ``_meta``.
    """
    view = model_view(spec)
    output_schema = view.get("outputSchema")
    if output_schema is not None and protocol_version not in MODERN_PROTOCOL_VERSIONS:
        if not _object_rooted(output_schema):
            del view["outputSchema"]
    if meta is not None:
        view["_meta"] = meta
    return types.Tool.model_validate(view)


def _base64(data: Any) -> str:
    """Base64 of raw bytes; a ``str`` is taken as already base64 (the JSON wire form of bytes)."""
    if isinstance(data, str):
        return data
    return base64.b64encode(bytes(data)).decode("ascii")


def _image_block(image: Any) -> dict[str, Any]:
    fmt = str(image.get("format", "png")).lower()
    mime = "image/jpeg" if fmt in ("jpg", "jpeg") else f"image/{fmt}"
    return {"type": "image", "data": _base64(image.get("source", {}).get("bytes", b"")), "mimeType": mime}


def _document_block(document: Any) -> dict[str, Any]:
    """A document as an embedded resource: text formats as text, the rest as a base64 blob."""
    fmt = str(document.get("format", "txt")).lower()
    name = str(document.get("name") or "document")
    uri = f"tool-loader://documents/{quote(name)}.{fmt}"
    raw = document.get("source", {}).get("bytes", b"")
    if fmt in _TEXT_DOCUMENT_FORMATS:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8", errors="replace")
        contents = {"uri": uri, "mimeType": _TEXT_DOCUMENT_FORMATS[fmt], "text": text}
    else:
        mime = _BINARY_DOCUMENT_FORMATS.get(fmt, "application/octet-stream")
        contents = {"uri": uri, "mimeType": mime, "blob": _base64(raw)}
    return {"type": "resource", "resource": contents}


_AUDIO_FORMATS = {"mp3": "audio/mpeg", "m4a": "audio/mp4", "oga": "audio/ogg"}


def _audio_block(audio: Any) -> dict[str, Any]:
    fmt = str(audio.get("format", "wav")).lower()
    mime = _AUDIO_FORMATS.get(fmt, f"audio/{fmt}")
    return {"type": "audio", "data": _base64(audio.get("source", {}).get("bytes", b"")), "mimeType": mime}


def _resource_block(resource: Any) -> dict[str, Any]:
    """An embedded resource under its own URI: ``text`` as text, ``source.bytes`` as a base64 blob."""
    contents: dict[str, Any] = {"uri": str(resource.get("uri", ""))}
    if "text" in resource:
        contents["mimeType"] = str(resource.get("mimeType") or "text/plain")
        contents["text"] = str(resource["text"])
    else:
        contents["mimeType"] = str(resource.get("mimeType") or "application/octet-stream")
        contents["blob"] = _base64(resource.get("source", {}).get("bytes", b""))
    return {"type": "resource", "resource": contents}


def _content_block(block: ToolResultContent) -> dict[str, Any]:
    if "text" in block:
        return {"type": "text", "text": str(block["text"])}
    if "json" in block:
        return {"type": "text", "text": _json_text(block["json"])}
    if "image" in block:
        return _image_block(block["image"])
    if "document" in block:
        return _document_block(block["document"])
    if "audio" in block:
        return _audio_block(block["audio"])
    if "resource" in block:
        return _resource_block(block["resource"])
    return {"type": "text", "text": _json_text(block)}


def text_is_structured(spec: ToolSpec | None) -> bool:
    """Whether a lone text result of this tool is also its structured content (a non-object output schema).

    Computed once per tool and registry generation by the server (``call_tool_wire``'s ``text_structured``).
    """
    if spec is None:
        return False
    output_schema = _schema(spec.get("outputSchema"))
    return output_schema is not None and not _object_rooted(output_schema)


def call_tool_wire(
    result: ToolResult,
    *,
    text_structured: bool,
    protocol_version: str,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``ToolResult`` as the wire form (camelCase JSON object) of an MCP ``CallToolResult``.

    The mapping of ``to_call_tool_result``, without building the model: the
    server hands this dict to the SDK, which validates it against the
    protocol version's result schema before it is sent. ``text_structured``
    is ``text_is_structured(spec)`` of the tool that ran.
    """
    blocks = result.get("content") or []
    is_error = result.get("status") == "error"
    wire: dict[str, Any] = {"content": [_content_block(block) for block in blocks], "isError": is_error}
    structured: Any = None
    json_values = [block["json"] for block in blocks if "json" in block]
    if len(json_values) == 1:
        structured = finite_json(json_values[0])
    elif text_structured and not is_error and not json_values and len(blocks) == 1 and "text" in blocks[0]:
        structured = blocks[0]["text"]
    if protocol_version not in MODERN_PROTOCOL_VERSIONS and not isinstance(structured, dict):
        structured = None
    if structured is not None:
        wire["structuredContent"] = structured
    if meta is not None:
        wire["_meta"] = meta
    wire["resultType"] = "complete"  # what the model defaults to; handshake-era versions drop it
    return wire


def to_call_tool_result(
    result: ToolResult, spec: ToolSpec | None, *, protocol_version: str, meta: dict[str, Any] | None = None
) -> types.CallToolResult:
    """A ``ToolResult`` as an MCP ``CallToolResult``.

    Text stays text; a json block becomes its JSON text plus
    ``structuredContent`` (the value itself when it is the only json block);
    images and audio become image and audio content, documents embedded
    resources (under a ``tool-loader://documents/`` URI), resource blocks
    embedded resources under their own URI; an error
    status becomes ``isError``. A successful tool with an advertised
    non-object output schema and a single text block reports that text as
    its structured content, so clients validating against the schema agree.
    Handshake-era versions only carry an object as structured content.
    ``meta`` becomes the result's ``_meta``.
    """
    wire = call_tool_wire(
        result, text_structured=text_is_structured(spec), protocol_version=protocol_version, meta=meta
    )
    return types.CallToolResult.model_validate(wire)
