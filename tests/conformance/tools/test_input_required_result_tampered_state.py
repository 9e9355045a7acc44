from loader import ToolContext, tool

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@tool(context=True)
def test_input_required_result_tampered_state(tool_context: ToolContext) -> str:
    """Asks for a confirmation; a retry with a forged requestState is refused by the server."""
    answer = tool_context.ask_user("Please confirm", CONFIRM, key="confirm")
    return f"state-ok: {answer.action}"
