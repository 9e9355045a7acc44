"""Turning whatever a tool returns into a ``ToolResult``."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .types import ToolResult, ToolResultContent

__all__ = [
    "error_result",
    "exception_result",
    "finite_json",
    "is_tool_result_like",
    "oversized_result",
    "result_size",
    "success_result",
    "to_tool_result",
]


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (JSON has no NaN or Infinity).

    Every face shows a result's JSON this way (``JSON.stringify`` writes them as
    ``null`` too), so a script reading ``tool-loader call`` and an MCP client read
    the same value.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(item) for item in value]
    return value


def is_tool_result_like(value: Any) -> bool:
    """Whether a dict has the shape of a ``ToolResult`` (status and content list)."""
    return (
        isinstance(value, Mapping)
        and value.get("status") in ("success", "error")
        and isinstance(value.get("content"), list)
    )


def error_result(tool_use_id: str, text: str, *, json_content: Any = None) -> ToolResult:
    """An error result with a text block and, optionally, a json block an agent can act on."""
    content: list[ToolResultContent] = [{"text": text}]
    if json_content is not None:
        content.append({"json": json_content})
    return {"toolUseId": tool_use_id, "status": "error", "content": content}


def exception_result(tool_use_id: str, exc: BaseException) -> ToolResult:
    """The error result for a tool that raised: ``Error: <Type> - <message>``."""
    return error_result(tool_use_id, f"Error: {type(exc).__name__} - {exc}")


_SMALL_INT = 10**20


def result_size(result: Mapping[str, Any], limit: int) -> int | None:
    """The result's size in bytes when it may exceed ``limit``, else None (no need to measure it).

    Text counts as UTF-8, images and documents as their bytes, a json block as
    its compact JSON text: what a client receives, whatever the transport's
    framing adds. Counting stops being exact only where it cannot matter: an
    ASCII text is its length, other text at most four bytes a character.
    """
    bound = 0
    exact = True
    for block in result.get("content") or ():
        if not isinstance(block, Mapping):
            continue
        size, known = _block_size(block)
        bound += size
        exact = exact and known
    if bound <= limit:
        return None
    if not exact:
        bound = sum(
            _block_size(b, exact=True)[0] for b in result.get("content") or () if isinstance(b, Mapping)
        )
    return bound if bound > limit else None


def _block_size(block: Mapping[str, Any], *, exact: bool = False) -> tuple[int, bool]:
    """One content block's size (or an upper bound of it), and whether it is exact."""
    text = block.get("text")
    if isinstance(text, str):
        if text.isascii():
            return len(text), True
        if exact:
            return len(text.encode("utf-8", "surrogatepass")), True
        return 4 * len(text), False
    if "json" in block:
        value = block["json"]
        of = type(value)
        if value is None or of in (int, float, bool):
            # Scalars, the commonest json results, are bounded without encoding them: a finite
            # double's shortest form, or a small int's digits, fits in 24 characters.
            if not exact and (of is not int or -_SMALL_INT < value < _SMALL_INT):
                return 24, False
            return len(json.dumps(value)), True
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode()), True
    for kind in ("image", "document"):
        media = block.get(kind)
        if isinstance(media, Mapping):
            data = (media.get("source") or {}).get("bytes")
            return (len(data) if isinstance(data, (bytes, bytearray, memoryview)) else 0), True
    return 0, True


def oversized_result(tool_use_id: str, tool_name: str, size: int, limit: int) -> ToolResult:
    """The error result standing in for a result larger than the limit (``max_result_bytes``)."""
    return error_result(
        tool_use_id,
        f"Error: the result of tool {tool_name} is {size:,} bytes, more than the limit of {limit:,} bytes "
        "(max_result_bytes)",
    )


def success_result(tool_use_id: str, content: list[ToolResultContent]) -> ToolResult:
    """A success result with the given content blocks."""
    return {"toolUseId": tool_use_id, "status": "success", "content": content}


def _jsonable(value: Any) -> tuple[bool, Any]:
    """Convert to a JSON-compatible value if that can be done faithfully."""
    if value is None or type(value) in (int, float, bool):
        return True, value
    if isinstance(value, BaseModel):
        return True, value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, (dict, list, tuple, int, float, bool)) or value is None:
        try:
            return True, json.loads(json.dumps(value))
        except (TypeError, ValueError):
            return False, None
    return False, None


def to_tool_result(value: Any, tool_use_id: str) -> ToolResult:
    """Map a tool's return value to a ``ToolResult``.

    ``str`` becomes text; a dict shaped like a ``ToolResult`` passes through with
    the right ``toolUseId``; models, dataclasses, dicts, lists and other
    JSON-serialisable values become json content; anything else its ``str``.
    """
    kind = type(value)
    if kind is str:
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": value}]}
    if kind is int or kind is float or kind is bool or value is None:  # the common cases, before ABC checks
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": value}]}
    if isinstance(value, str):
        return success_result(tool_use_id, [{"text": value}])
    if is_tool_result_like(value):
        result = dict(value)
        result["toolUseId"] = tool_use_id
        return result  # type: ignore[return-value]
    ok, data = _jsonable(value)
    if ok:
        return success_result(tool_use_id, [{"json": data}])
    return success_result(tool_use_id, [{"text": str(value)}])
