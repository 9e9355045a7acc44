import base64

from loader import ToolResult, tool

WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
"""A WAV file holding one silent sample."""


@tool
def test_audio_content() -> ToolResult:
    """Tests audio content response."""
    return {
        "toolUseId": "",
        "status": "success",
        "content": [{"audio": {"format": "wav", "source": {"bytes": WAV}}}],
    }
