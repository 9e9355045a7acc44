from loader import ToolContext, tool


@tool(context=True)
def test_input_required_result_list_roots(tool_context: ToolContext) -> str:
    """Asks the client for its roots."""
    roots = tool_context.list_roots(key="client_roots")
    return f"Client exposed {len(roots)} root(s): " + ", ".join(root.uri for root in roots)
