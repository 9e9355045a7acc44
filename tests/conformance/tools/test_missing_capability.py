from loader import ToolContext, tool


@tool(context=True)
def test_missing_capability(tool_context: ToolContext) -> str:
    """Needs the client's model: a client that did not declare sampling is refused."""
    answer = tool_context.ask_model("Say hello", max_tokens=20)
    return f"The model said: {answer.text}"
