import base64

from loader import ToolResult, tool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red pixel."""


@tool
def test_multiple_content_types() -> ToolResult:
    """Tests response with multiple content types (text, image, resource)."""
    return {
        "toolUseId": "",
        "status": "success",
        "content": [
            {"text": "Multiple content types test:"},
            {"image": {"format": "png", "source": {"bytes": PNG}}},
            {
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": '{"test": "data", "value": 123}',
                }
            },
        ],
    }
