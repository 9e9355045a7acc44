"""Convert lengths, masses and temperatures between common units."""

from __future__ import annotations

from typing import Literal

from loader import tool

# Factor to the base unit of each dimension (metre, kilogram).
LENGTH = {
    "mm": 0.001,
    "cm": 0.01,
    "m": 1.0,
    "km": 1000.0,
    "in": 0.0254,
    "ft": 0.3048,
    "yd": 0.9144,
    "mi": 1609.344,
}
MASS = {"mg": 1e-6, "g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125, "lb": 0.45359237}
TEMPERATURE = ("C", "F", "K")

Unit = Literal["mm", "cm", "m", "km", "in", "ft", "yd", "mi", "mg", "g", "kg", "t", "oz", "lb", "C", "F", "K"]


def _to_celsius(value: float, unit: str) -> float:
    if unit == "C":
        return value
    if unit == "F":
        return (value - 32) * 5 / 9
    return value - 273.15


def _from_celsius(value: float, unit: str) -> float:
    if unit == "C":
        return value
    if unit == "F":
        return value * 9 / 5 + 32
    return value + 273.15


@tool(category="math", tags=["units", "conversion"])
def unit_converter(value: float, from_unit: Unit, to_unit: Unit) -> dict[str, float | str]:
    """Convert a value between units of length, mass or temperature.

    Length: mm, cm, m, km, in, ft, yd, mi. Mass: mg, g, kg, t, oz, lb.
    Temperature: C, F, K.

    Args:
        value: The quantity to convert.
        from_unit: The unit of ``value``, e.g. "km" or "F".
        to_unit: The unit to convert to; must measure the same dimension.

    Returns:
        The converted value (rounded to 6 significant digits) with both units.
    """
    if from_unit in TEMPERATURE and to_unit in TEMPERATURE:
        result = _from_celsius(_to_celsius(value, from_unit), to_unit)
    else:
        for table in (LENGTH, MASS):
            if from_unit in table and to_unit in table:
                result = value * table[from_unit] / table[to_unit]
                break
        else:
            known = ", ".join([*LENGTH, *MASS, *TEMPERATURE])
            raise ValueError(
                f"cannot convert {from_unit!r} to {to_unit!r}; use two units of one dimension: {known}"
            )
    return {"value": float(f"{result:.6g}"), "unit": to_unit, "from": f"{value:g} {from_unit}"}
