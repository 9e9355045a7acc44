from loader import ToolContext, tool

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@tool(context=True)
def test_input_required_result_request_state(tool_context: ToolContext) -> str:
    """Asks for a confirmation; the server carries what earlier rounds learned in requestState."""
    answer = tool_context.ask_user("Please confirm", CONFIRM, key="confirm")
    return f"state-ok: confirmed={(answer.content or {}).get('ok')}"
