"""A four-function calculator: the smallest useful ``@tool`` function."""

from __future__ import annotations

from typing import Literal

from loader import ToolResult, tool

Operation = Literal["add", "subtract", "multiply", "divide"]


@tool(category="math", tags=["arithmetic"])
def calculator(operation: Operation, a: float, b: float) -> float | ToolResult:
    """Apply an arithmetic operation to two numbers.

    Args:
        operation: What to do: add, subtract, multiply or divide.
        a: The left operand.
        b: The right operand (the divisor for divide).

    Returns:
        The result of ``a <operation> b``.
    """
    if operation == "add":
        return a + b
    if operation == "subtract":
        return a - b
    if operation == "multiply":
        return a * b
    if b == 0:
        # An error result tells the model what went wrong without a traceback in the logs.
        return {"toolUseId": "", "status": "error", "content": [{"text": "Cannot divide by zero"}]}
    return a / b
