import json

from loader import ToolContext, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}


@tool(context=True)
async def test_elicitation_sep1034_defaults(tool_context: ToolContext) -> str:
    """Tests elicitation with default values for all primitive types (SEP-1034)."""
    answer = await tool_context.aask_user("Please provide user information", SCHEMA)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"
