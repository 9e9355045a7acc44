"""The project's exceptions: one base, subclasses that carry what went wrong and where."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ComponentArgumentError",
    "ContextAnswerError",
    "ContextUnavailableError",
    "DuplicateToolError",
    "DuplicateToolInFileError",
    "InputProblem",
    "InputRequired",
    "InvalidToolNameError",
    "OptionError",
    "SymlinkRefusedError",
    "ToolCallTimeout",
    "ToolDefinitionError",
    "ToolLoadError",
    "ToolLoaderError",
    "ToolNameMismatchError",
    "ToolNotFoundError",
    "ToolSignatureError",
    "ToolValidationError",
]


class ToolLoaderError(Exception):
    """Base class of every error this package raises on purpose."""


@dataclass(frozen=True, slots=True)
class InputProblem:
    """One thing wrong with a tool call's input.

    Defined here, beside the error that carries it, so the exception module
    needs nothing else of ours; ``loader.tools.validation`` builds them.

    Attributes:
        parameter: The dotted path of the offending value (``address.zip``, ``items.2``);
            None for the input as a whole.
        problem: The short phrase of ``{"errors": [...]}`` payloads (``must be at most 14``).
        message: The whole sentence (``Parameter days must be at most 14``).
    """

    parameter: str | None
    problem: str
    message: str


class ToolValidationError(ToolLoaderError, ValueError):
    """Input breaks a tool's declared parameters; the message is one problem sentence per line.

    Raised by ``validate_tool_params`` and by the ``validate`` generated for
    tool classes; ``problems`` keeps each problem with its parameter path.
    """

    def __init__(self, problems: Iterable[InputProblem]) -> None:
        self.problems: tuple[InputProblem, ...] = tuple(problems)
        super().__init__("\n".join(problem.message for problem in self.problems) or "invalid input")


class ToolDefinitionError(ToolLoaderError, ValueError):
    """A tool is defined wrongly (bad name, bad metadata, missing ``execute``); raised at decoration time."""


class ToolSignatureError(ToolDefinitionError, TypeError):
    """A function's signature cannot become a tool (``*args``, an unserialisable annotation, ...).

    Both a ``ValueError`` and a ``TypeError``, so either ``except`` clause catches it.
    """

    def __init__(self, message: str, *, function: str | None = None, parameter: str | None = None) -> None:
        super().__init__(message)
        self.function = function
        self.parameter = parameter


class InvalidToolNameError(ToolDefinitionError):
    """A tool name outside ``^[A-Za-z0-9_-]{1,64}$``."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid tool name {name!r}: use 1 to 64 characters from letters, digits, '_' and '-'"
        )
        self.name = name


class DuplicateToolInFileError(ToolDefinitionError):
    """One file defines the same tool name twice; carries both definitions' lines when known."""

    def __init__(
        self, path: Path | str, name: str, lines: tuple[int | None, int | None] = (None, None)
    ) -> None:
        where = f" (lines {lines[0]} and {lines[1]})" if all(lines) else ""
        super().__init__(f"{path}: tool name {name!r} is defined twice in this file{where}")
        self.path = Path(path)
        self.name = name
        self.lines = lines
        self.line = lines[1]


class DuplicateToolError(ToolLoaderError, ValueError):
    """A name is already registered (names differing only by '-' vs '_' count as the same)."""

    def __init__(self, name: str, *, existing_name: str, existing_source: str | None = None) -> None:
        owner = f" (from {existing_source})" if existing_source else ""
        clash = "" if existing_name == name else f" as {existing_name!r}"
        super().__init__(f"Tool {name!r} is already registered{clash}{owner}; use replace() to swap it")
        self.name = name
        self.existing_name = existing_name
        self.existing_source = existing_source


class ToolNameMismatchError(ToolLoaderError, ValueError):
    """``register(name, tool)`` named a tool by another name than the one it defines."""

    def __init__(self, given: str, name: str, kind: str) -> None:
        super().__init__(
            f"register({given!r}, {kind}): the tool is named {name!r}; a tool is registered under the "
            f"name it defines (change it in its definition, e.g. @tool(name=...))"
        )
        self.given = given
        self.name = name


class ToolNotFoundError(ToolLoaderError, KeyError):
    """No tool of that name is registered."""

    def __init__(self, name: str, available: tuple[str, ...] = ()) -> None:
        super().__init__(name)
        self.name = name
        self.available = available

    def __str__(self) -> str:
        listing = ", ".join(self.available) if self.available else "none"
        return f"Unknown tool: {self.name} (available: {listing})"


class ToolLoadError(ToolLoaderError):
    """A tool file could not be loaded; carries the file, the line and the original exception."""

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        line: int | None = None,
        exc_type: str | None = None,
        cause: BaseException | None = None,
        details: Any = None,
    ) -> None:
        self.path = Path(path)
        self.line = line
        self.exc_type = exc_type or (type(cause).__name__ if cause else "ToolLoadError")
        self.message = message
        self.cause = cause
        self.details = details
        where = f"{self.path}" + (f" line {line}" if line else "")
        super().__init__(f"Tool file {where}: {self.exc_type}: {message}")


class ToolCallTimeout(ToolLoaderError, TimeoutError):
    """A tool call did not finish within the call timeout (``CallLimits.timeout``).

    Never raised out of a registry call: its error result carries this message.
    ``started`` is False when the call was still waiting for one of the tool's
    ``max_concurrent`` slots (the tool's earlier calls were all still running).
    """

    def __init__(self, tool_name: str, seconds: float, *, started: bool, max_concurrent: int) -> None:
        waiting = (
            ""
            if started
            else f"; it never started: all {max_concurrent} calls this tool may run at once were busy"
        )
        super().__init__(f"tool {tool_name!r} did not finish within the {seconds:g} s call timeout{waiting}")
        self.tool_name = tool_name
        self.seconds = seconds
        self.started = started
        self.max_concurrent = max_concurrent


class SymlinkRefusedError(ToolLoaderError, ImportError):
    """A tool file imported a link that leads outside its watched folder; the target is never run.

    Raised from the import itself, so the importing file fails to load with a
    message naming the link, instead of Python's own finder running the outside file.
    """

    def __init__(self, module_name: str, link: Path, root: Path) -> None:
        target = os.path.realpath(link)
        super().__init__(
            f"{link} is a link that leads outside the watched folder {root} (to {target}); not imported",
            name=module_name,
            path=str(link),
        )
        self.link = link
        self.root = root
        self.target = Path(target)


_CONTEXT_ASKS = {
    "ask_user": "ask the user",
    "ask_model": "ask the model",
    "list_roots": "list the client's roots",
}


class ContextUnavailableError(ToolLoaderError):
    """A tool asked its caller for something this caller cannot give.

    No one to ask (a script, a pipe instead of a terminal), no model, or an MCP
    client that did not declare the capability. ``capability`` is the
    ``ContextCapability`` value (``ask_user``, ``ask_model``, ``list_roots``).
    """

    def __init__(self, capability: str, reason: str) -> None:
        super().__init__(f"cannot {_CONTEXT_ASKS.get(capability, capability)}: {reason}")
        self.capability = capability
        self.reason = reason


class OptionError(ToolLoaderError, ValueError):
    """A setting outside what it may be; ``option`` names the field, ``value`` is what was given."""

    def __init__(self, option: str, value: object, rule: str) -> None:
        super().__init__(f"{option} must be {rule}, not {value!r}")
        self.option = option
        self.value = value


class ContextAnswerError(ToolLoaderError, ValueError):
    """An answer that does not fit its question (content breaking the schema, a malformed reply)."""


class InputRequired(BaseException):
    """The answer to a tool's question comes with a new round of the call (MCP 2026-07-28).

    Raised inside the question: the call ends there, the client answers, and
    the call runs again from the start with the answer at hand. A
    ``BaseException``, like ``asyncio.CancelledError``, so a tool's
    ``except Exception`` lets it through.
    """


class ComponentArgumentError(ToolLoaderError, ValueError):
    """A prompt or resource template was asked for with a missing or unknown argument (MCP ``-32602``)."""

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument
