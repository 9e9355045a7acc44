"""The prompts the conformance suite asks for (prompts-list, prompts-get-*, completion-complete)."""

from loader import prompt

PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red pixel."""


@prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@prompt(complete=lambda argument, typed: [v for v in ("paris", "park", "party") if v.startswith(typed)])
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[object]:
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        {
            "type": "resource",
            "resource": {
                "uri": resourceUri,
                "mimeType": "text/plain",
                "text": "Embedded resource content for testing.",
            },
        },
        "Please process the embedded resource above.",
    ]


@prompt
def test_prompt_with_image() -> list[object]:
    """A prompt with an image."""
    return [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}, "Please analyze the image above."]
