from loader import ToolContext, tool


@tool(context=True)
async def test_sampling(prompt: str, tool_context: ToolContext) -> str:
    """Tests server-initiated sampling (LLM completion request).

    Args:
        prompt: The prompt to send to the LLM.
    """
    answer = await tool_context.aask_model(prompt, max_tokens=100)
    return f"LLM response: {answer.text}"
