from loader import ToolContext, tool


@tool(context=True)
async def test_streaming_elicitation(tool_context: ToolContext) -> str:
    """Reports progress, then asks the user."""
    await tool_context.areport_progress(1, 2, "about to ask")
    answer = await tool_context.aask_user(
        "Continue?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    return f"answered: {answer.action}"
