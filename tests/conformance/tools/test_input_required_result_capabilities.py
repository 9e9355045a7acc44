from loader import Question, ToolContext, tool


@tool(context=True)
def test_input_required_result_capabilities(tool_context: ToolContext) -> str:
    """Asks only what the client declared it can answer."""
    questions: list[Question] = []
    if tool_context.can_ask_model:
        questions.append(tool_context.model_question("Say hello", max_tokens=50, key="sample"))
    if tool_context.can_ask_user:
        questions.append(tool_context.user_question("What is your name?", key="ask"))
    answers = tool_context.ask(questions) if questions else ()
    return f"{len(answers)} answer(s)"
