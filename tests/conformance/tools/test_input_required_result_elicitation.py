from loader import ToolContext, tool

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool(context=True)
def test_input_required_result_elicitation(tool_context: ToolContext) -> str:
    """Asks the user's name (one elicitation, answered in a second round on 2026-07-28)."""
    answer = tool_context.ask_user("What is your name?", NAME, key="user_name")
    name = (answer.content or {}).get("name", "stranger")
    return f"Hello, {name}!"
