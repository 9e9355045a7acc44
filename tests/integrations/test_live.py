"""The framework-free pieces the live adapters share (``loader.integrations.live``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from support import MakeLoader, write

from loader.integrations.live import ResultPart, failed, input_schema, registry_of, result_parts, result_text
from loader.types import ToolResult


def test_a_loader_or_a_bare_registry_is_a_source(tools_dir: Path, make_loader: MakeLoader) -> None:
    loader = make_loader(tools_dir, watch=False)
    assert registry_of(loader) is loader.registry
    assert registry_of(loader.registry) is loader.registry
    with pytest.raises(
        TypeError, match=r"ToolLoader or a ToolRegistry, got str \(no ToolRegistry behind it\)"
    ):
        registry_of("tools")  # type: ignore[arg-type]


def test_input_schema_is_a_private_object_rooted_copy(tools_dir: Path, make_loader: MakeLoader) -> None:
    write(
        tools_dir / "tools.py",
        '''
        from loader import tool

        @tool
        def plain() -> str:
            """No parameters."""
            return "ok"

        @tool
        def named(who: str) -> str:
            """One parameter."""
            return who
        ''',
    )
    loader = make_loader(tools_dir, watch=False)
    plain, named = loader.registry.get("plain"), loader.registry.get("named")
    assert plain is not None and named is not None
    assert input_schema(plain)["type"] == "object"
    assert input_schema(plain)["properties"] == {}
    schema = input_schema(named)
    assert schema == named.tool_spec["inputSchema"]["json"]
    schema["properties"]["who"]["description"] = "changed by a framework"
    assert (
        named.tool_spec["inputSchema"]["json"]["properties"]["who"].get("description")
        != "changed by a framework"
    )


def test_results_become_parts_and_text() -> None:
    result: ToolResult = {
        "toolUseId": "t",
        "status": "success",
        "content": [
            {"text": "hi"},
            {"json": {"n": 1, "bad": math.nan}},
            {"image": {"format": "jpg", "source": {"bytes": b"JPEG"}}},
            {"document": {"format": "md", "name": "notes", "source": {"bytes": b"# title"}}},
            {"document": {"format": "pdf", "name": "paper", "source": {"bytes": b"%PDF"}}},
        ],
    }
    assert result_parts(result) == [
        ResultPart("text", text="hi"),
        ResultPart("text", text='{"n": 1, "bad": null}'),
        ResultPart("image", data=b"JPEG", format="jpg"),
        ResultPart("document", data=b"# title", format="md", name="notes"),
        ResultPart("document", data=b"%PDF", format="pdf", name="paper"),
    ]
    assert result_text(result).splitlines() == [
        "hi",
        '{"n": 1, "bad": null}',
        "[image: image/jpeg, 4 bytes]",
        "# title",
        "[paper: application/pdf, 4 bytes]",
    ]
    assert not failed(result)
    assert failed({"toolUseId": "t", "status": "error", "content": [{"text": "no"}]})
