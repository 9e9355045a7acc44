import json

from loader import ToolContext, tool


def titled(values: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in values]


SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": titled(
                [("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]
            ),
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": titled(
                    [("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")]
                )
            },
        },
    },
}


@tool(context=True)
async def test_elicitation_sep1330_enums(tool_context: ToolContext) -> str:
    """Tests elicitation with the five enum schema variants (SEP-1330)."""
    answer = await tool_context.aask_user("Please select values using different enum schema types", SCHEMA)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"
