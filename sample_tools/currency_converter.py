"""A class-based tool with full metadata: version, category, tags and examples.

The exchange rates are an offline table (euro per unit, a fixed snapshot), so
the tool works without a network or an API key.
"""

from __future__ import annotations

from typing import Any

from loader import tool

EUR_PER_UNIT: dict[str, float] = {
    "EUR": 1.0,
    "USD": 0.92,
    "GBP": 1.17,
    "JPY": 0.0061,
    "CHF": 1.05,
    "CAD": 0.68,
}


@tool(
    name="currency_converter",
    version="1.2.0",
    category="finance",
    tags=["currency", "conversion", "offline"],
    parameters={
        "amount": {"type": "number", "description": "The amount of money to convert.", "min": 0},
        "from_currency": {
            "type": "string",
            "description": "ISO code of the currency the amount is in.",
            "enum": list(EUR_PER_UNIT),
        },
        "to_currency": {
            "type": "string",
            "description": "ISO code of the currency to convert to.",
            "enum": list(EUR_PER_UNIT),
        },
    },
    examples=[
        {
            "description": "100 US dollars in euro",
            "input": {"amount": 100, "from_currency": "USD", "to_currency": "EUR"},
        },
        {
            "description": "Pounds to yen",
            "input": {"amount": 20, "from_currency": "GBP", "to_currency": "JPY"},
        },
    ],
)
class CurrencyConverter:
    """Convert an amount between currencies using a fixed, offline table of exchange rates."""

    def __init__(self) -> None:
        self.rates = dict(EUR_PER_UNIT)

    def execute(self, params: dict[str, Any]) -> dict[str, Any]:
        """Convert ``params["amount"]`` and report the rate used."""
        source, target = params["from_currency"], params["to_currency"]
        rate = self.rates[source] / self.rates[target]
        return {
            "amount": round(params["amount"] * rate, 2),
            "currency": target,
            "rate": round(rate, 6),
        }
