import time

from loader import ToolContext, tool


@tool(context=True)
def test_tool_with_progress(tool_context: ToolContext) -> str:
    """Tests tool that reports progress notifications (a synchronous tool, on its own thread)."""
    for step in (0, 50, 100):
        tool_context.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            time.sleep(0.05)
    return "Progress reported"
