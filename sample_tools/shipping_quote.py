"""A tool whose input is a nested pydantic model (an address inside a shipment)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loader import tool


class Address(BaseModel):
    """Where a parcel goes."""

    city: str = Field(description="City name.")
    country: str = Field(description="ISO 3166-1 alpha-2 country code, e.g. DE.", min_length=2, max_length=2)


class Parcel(BaseModel):
    """One box."""

    weight_kg: float = Field(gt=0, le=70, description="Weight in kilograms.")
    fragile: bool = Field(default=False, description="Whether the parcel needs careful handling.")


class Shipment(BaseModel):
    """Everything needed to price a delivery."""

    origin: Address = Field(description="Where the parcels are picked up.")
    destination: Address = Field(description="Where the parcels are delivered.")
    parcels: list[Parcel] = Field(min_length=1, description="The parcels to send.")
    service: Literal["standard", "express"] = Field(default="standard", description="Delivery speed.")


BASE_EUR = {"domestic": 4.90, "international": 14.50}
PER_KG_EUR = {"domestic": 0.80, "international": 2.20}


@tool(category="logistics", tags=["pydantic", "pricing"])
def shipping_quote(shipment: Shipment) -> dict[str, object]:
    """Price a shipment of parcels between two addresses (offline tariff table).

    Args:
        shipment: The origin, destination, parcels and service level.
    """
    zone = (
        "domestic"
        if shipment.origin.country.upper() == shipment.destination.country.upper()
        else "international"
    )
    total = 0.0
    for parcel in shipment.parcels:
        total += BASE_EUR[zone] + PER_KG_EUR[zone] * parcel.weight_kg + (2.0 if parcel.fragile else 0.0)
    if shipment.service == "express":
        total *= 1.5
    return {
        "zone": zone,
        "parcels": len(shipment.parcels),
        "price_eur": round(total, 2),
        "service": shipment.service,
    }
