"""A Strands-style module tool: a ``TOOL_SPEC`` dict and a function named like the file."""

from __future__ import annotations

from typing import Any

import text_helpers

TOOL_SPEC = {
    "name": "word_count",
    "description": "Count the words, distinct words and characters of a text.",
    "inputSchema": {
        "json": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to analyse."},
                "top": {
                    "type": "integer",
                    "description": "How many of the most frequent words to list (default 3).",
                    "minimum": 0,
                },
            },
            "required": ["text"],
        }
    },
}


def word_count(tool_use: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Count words in ``tool_use["input"]["text"]``; returns a ToolResult."""
    data = tool_use["input"]
    found = [word.lower() for word in text_helpers.words(data["text"])]
    frequencies: dict[str, int] = {}
    for word in found:
        frequencies[word] = frequencies.get(word, 0) + 1
    top = sorted(frequencies.items(), key=lambda item: (-item[1], item[0]))[: data.get("top", 3)]
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "success",
        "content": [
            {
                "json": {
                    "words": len(found),
                    "distinct": len(frequencies),
                    "characters": len(data["text"]),
                    "top": [{"word": word, "count": count} for word, count in top],
                }
            }
        ],
    }
