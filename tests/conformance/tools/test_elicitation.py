import json

from loader import ToolContext, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


@tool(context=True)
def test_elicitation(message: str, tool_context: ToolContext) -> str:
    """Tests server-initiated elicitation (user input request), from a synchronous tool.

    Args:
        message: The message to show the user.
    """
    answer = tool_context.ask_user(message, SCHEMA)
    return f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"
