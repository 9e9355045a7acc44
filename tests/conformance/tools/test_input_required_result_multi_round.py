from loader import ToolContext, tool


def one_field(name: str) -> dict[str, object]:
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}


@tool(context=True)
def test_input_required_result_multi_round(tool_context: ToolContext) -> str:
    """Two questions, the second asked only once the first is answered: three rounds on 2026-07-28."""
    name = tool_context.ask_user("Step 1: What is your name?", one_field("name"), key="step1")
    color = tool_context.ask_user("Step 2: What is your favorite color?", one_field("color"), key="step2")
    return f"{(name.content or {}).get('name')} likes {(color.content or {}).get('color')}."
