"""Resources (one URI, text or bytes) and resource templates (a URI with ``{param}`` placeholders)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ComponentArgumentError, ToolDefinitionError
from ..types import Component, ComponentKind
from .prompts import Complete, completions

__all__ = ["Resource", "ResourceTemplate", "check_uri", "placeholders"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

Content = str | bytes
"""What a resource reads as: text, or a blob."""


def check_uri(uri: str, where: str) -> str:
    """``uri`` if it is an absolute URI (a scheme, then no whitespace).

    Raises:
        ToolDefinitionError: It is not, naming ``where`` it was given.
    """
    if not isinstance(uri, str) or not _SCHEME.match(uri):
        raise ToolDefinitionError(f"{where}: {uri!r} is not a URI (expected scheme://path)")
    return uri


def placeholders(uri: str) -> tuple[str, ...]:
    """The ``{param}`` names in a URI template, in order."""
    return tuple(_PLACEHOLDER.findall(uri))


class Resource(Component):
    """A resource: one URI, read as text or bytes."""

    kind = ComponentKind.RESOURCE

    def __init__(
        self,
        uri: str,
        read: Callable[[], Content],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        source_file: str | None = None,
    ) -> None:
        self.uri = uri
        self.name = name or uri
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.source_file = source_file
        self._read = read

    @property
    def key(self) -> str:
        return self.uri

    def read(self) -> Content:
        """The resource's content now."""
        return _content(self._read(), self.uri)


class ResourceTemplate(Component):
    """A URI template: each URI it matches is a resource, read with the placeholders as arguments."""

    kind = ComponentKind.RESOURCE_TEMPLATE

    def __init__(
        self,
        uri_template: str,
        read: Callable[..., Content],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        values: Mapping[str, tuple[str, ...]] | None = None,
        complete: Complete | None = None,
        source_file: str | None = None,
    ) -> None:
        self.uri_template = uri_template
        self.name = name or uri_template
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.values: Mapping[str, tuple[str, ...]] = dict(values or {})
        self.complete = complete
        self.source_file = source_file
        self._read = read
        pattern = "".join(
            f"(?P<{part}>[^/]+)" if index % 2 else re.escape(part)
            for index, part in enumerate(_PLACEHOLDER.split(uri_template))
        )
        self._pattern = re.compile(f"^{pattern}$")

    @property
    def key(self) -> str:
        return self.uri_template

    def match(self, uri: str) -> dict[str, str] | None:
        """The placeholders' values if ``uri`` is one of this template's URIs."""
        found = self._pattern.match(uri)
        return None if found is None else found.groupdict()

    def read(self, uri: str) -> Content:
        """The content of ``uri``, one of this template's URIs.

        Raises:
            ComponentArgumentError: ``uri`` does not match the template.
        """
        arguments = self.match(uri)
        if arguments is None:
            raise ComponentArgumentError(f"{uri!r} does not match the template {self.uri_template!r}")
        return self.read_with(arguments)

    def read_with(self, arguments: Mapping[str, str]) -> Content:
        """The content for these placeholder values (``read`` after matching; a worker, given them)."""
        return _content(self._read(**arguments), self.uri_template)

    def completions(self, argument: str, typed: str) -> list[str]:
        """The values to offer for one placeholder."""
        return completions(self.values, self.complete, argument, typed)


def _content(value: Any, uri: str) -> Content:
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(
        f"resource {uri!r} returned {type(value).__name__}: expected str (text) or bytes (a blob)"
    )
