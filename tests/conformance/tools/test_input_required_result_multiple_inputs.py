from loader import ModelAnswer, RootsAnswer, ToolContext, UserAnswer, tool

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool(context=True)
def test_input_required_result_multiple_inputs(tool_context: ToolContext) -> str:
    """Asks the user, the model and the client's roots at once (one round on 2026-07-28)."""
    user, model, roots = tool_context.ask(
        [
            tool_context.user_question("What is your name?", NAME, key="user_name"),
            tool_context.model_question("Generate a greeting", max_tokens=50, key="greeting"),
            tool_context.roots_question(key="client_roots"),
        ]
    )
    assert isinstance(user, UserAnswer) and isinstance(model, ModelAnswer) and isinstance(roots, RootsAnswer)
    return f"All inputs received: {(user.content or {}).get('name')}, {model.text!r}, {len(roots.roots)} root(s)."
