import asyncio

from loader import ToolContext, tool


@tool(context=True)
async def test_tool_with_logging(tool_context: ToolContext) -> str:
    """Tests tool that emits log messages during execution."""
    await tool_context.alog("info", "Tool execution started")
    await asyncio.sleep(0.05)
    await tool_context.alog("info", "Tool processing data")
    await asyncio.sleep(0.05)
    await tool_context.alog("info", "Tool execution completed")
    return "Tool with logging executed successfully"
