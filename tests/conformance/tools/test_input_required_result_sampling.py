from loader import ToolContext, tool


@tool(context=True)
async def test_input_required_result_sampling(tool_context: ToolContext) -> str:
    """Asks the client's model a question."""
    answer = await tool_context.aask_model(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"Model said: {answer.text}"
