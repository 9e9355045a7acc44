from loader import ToolResult, tool


@tool
def test_embedded_resource() -> ToolResult:
    """Tests embedded resource content response."""
    return {
        "toolUseId": "",
        "status": "success",
        "content": [
            {
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content.",
                }
            }
        ],
    }
