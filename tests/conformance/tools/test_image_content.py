import base64

from loader import ToolResult, tool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red pixel."""


@tool
def test_image_content() -> ToolResult:
    """Tests image content response."""
    return {
        "toolUseId": "",
        "status": "success",
        "content": [{"image": {"format": "png", "source": {"bytes": PNG}}}],
    }
