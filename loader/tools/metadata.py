"""What a class-based tool declares about itself: ``ToolMetadata`` and its parts.

The models are frozen so a tool's description can be shared between threads and
registry snapshots without copying. Structural mistakes (an unknown type, ``min``
above ``max``, a regex that does not compile) fail when the model is built, so a
broken tool fails at decoration time rather than on its first call.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..names import TOOL_NAME_PATTERN, is_valid_tool_name
from .validation import schema_validator

__all__ = [
    "TOOL_NAME_PATTERN",
    "ParameterType",
    "RateLimit",
    "ToolMetadata",
    "ToolParameter",
    "ToolSchema",
    "is_valid_tool_name",
]

ParameterType = Literal["string", "number", "integer", "boolean", "array", "object"]
"""The JSON types a parameter can have (``integer`` added to the reference's five)."""

_NUMERIC = ("number", "integer")


class ToolParameter(BaseModel):
    """One input parameter of a class-based tool.

    ``default`` counts as given only when it was passed explicitly (see
    ``has_default``), so ``default=None`` is a real default. ``min``/``max``
    bound numbers only; ``pattern`` is searched (not fully matched) in strings,
    as the reference's ``RegExp.test`` does.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: ParameterType
    description: str = ""
    required: bool = True
    default: Any = None
    pattern: str | None = None
    min: int | float | None = None
    max: int | float | None = None
    enum: tuple[Any, ...] | None = None
    items: ToolParameter | None = None
    properties: dict[str, ToolParameter] | None = None

    @property
    def has_default(self) -> bool:
        """Whether a default was declared (a parameter with a default is never missing)."""
        return "default" in self.model_fields_set

    @model_validator(mode="after")
    def _check_consistency(self) -> ToolParameter:
        """Reject constraints that cannot apply to the declared type."""
        if self.pattern is not None:
            if self.type != "string":
                raise ValueError(f"pattern applies to string parameters only, not {self.type}")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern {self.pattern!r} is not a valid regex: {exc}") from exc
        if (self.min is not None or self.max is not None) and self.type not in _NUMERIC:
            raise ValueError(f"min/max apply to number and integer parameters only, not {self.type}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        if self.enum is not None and not self.enum:
            raise ValueError("enum must list at least one value")
        if self.items is not None and self.type != "array":
            raise ValueError(f"items applies to array parameters only, not {self.type}")
        if self.properties is not None and self.type != "object":
            raise ValueError(f"properties applies to object parameters only, not {self.type}")
        return self


class ToolSchema(BaseModel):
    """Hand-written JSON Schemas that replace the ones derived from ``parameters``."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_json_schema: dict[str, Any] | None = None
    output_json_schema: dict[str, Any] | None = None

    @field_validator("input_json_schema", "output_json_schema")
    @classmethod
    def _check_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """Reject documents that are not valid JSON Schema (checked and compiled once, for every call)."""
        if value is None:
            return None
        try:
            schema_validator(value)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from exc
        return value

    @field_validator("input_json_schema")
    @classmethod
    def _check_object(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """Tool input is always a JSON object, so the input schema must describe one."""
        if value is not None and value.get("type") != "object":
            raise ValueError('the input schema must have "type": "object"')
        return value


class RateLimit(BaseModel):
    """A declared call budget; descriptive only, nothing in the loader enforces it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    requests: int = Field(gt=0)
    window_seconds: float = Field(gt=0)


class ToolMetadata(BaseModel):
    """Everything ``@tool`` knows about a class-based tool.

    The field holding the hand-written schemas is ``schema_`` in Python (pydantic
    reserves ``schema``) and ``schema`` as a constructor keyword and in dumps.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True, defer_build=True
    )

    name: str
    description: str = ""
    parameters: dict[str, ToolParameter] = Field(default_factory=dict)
    version: str = "1.0.0"
    category: str | None = None
    tags: tuple[str, ...] = ()
    requires_auth: bool = False
    rate_limit: RateLimit | None = None
    examples: tuple[dict[str, Any], ...] = ()
    schema_: ToolSchema | None = Field(default=None, alias="schema")
    search_hint: str | None = None
    always_load: bool = False

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        """Names outside the wire format would be rejected later by every client."""
        if not is_valid_tool_name(value):
            raise ValueError(
                f"invalid tool name {value!r}: use 1 to 64 characters from letters, digits, '_' and '-'"
            )
        return value

    @model_validator(mode="after")
    def _check_one_input_source(self) -> ToolMetadata:
        """``parameters`` and an explicit input schema would disagree about what is valid."""
        if self.parameters and self.input_json_schema is not None:
            raise ValueError("give either parameters or schema.input_json_schema, not both")
        return self

    @property
    def input_json_schema(self) -> dict[str, Any] | None:
        """The hand-written input schema, if any."""
        return None if self.schema_ is None else self.schema_.input_json_schema

    @property
    def output_json_schema(self) -> dict[str, Any] | None:
        """The hand-written output schema, if any."""
        return None if self.schema_ is None else self.schema_.output_json_schema
