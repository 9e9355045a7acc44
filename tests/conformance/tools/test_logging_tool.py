from loader import ToolContext, tool


@tool(context=True)
def test_logging_tool(tool_context: ToolContext) -> str:
    """Logs at every level (a client that asked for no log level gets none of it)."""
    for level in ("debug", "info", "warning", "error"):
        tool_context.log(level, f"a {level} entry")
    return "logged"
