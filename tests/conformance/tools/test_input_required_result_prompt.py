from loader import ToolContext, prompt

CONTEXT = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}


@prompt
def test_input_required_result_prompt(tool_context: ToolContext) -> str:
    """Asks the user for context before it is rendered (one elicitation, a second round on 2026-07-28)."""
    answer = tool_context.ask_user("What context should the prompt use?", CONTEXT, key="user_context")
    return f"Use this context: {(answer.content or {}).get('context', 'none')}"
