"""``tool-loader new``: write a commented starting file for a new tool (three styles), or a new skill.

Each template loads as written and passes ``tool-loader check --strict``, so
the first save after editing is the first reload, not the first error.
"""

from __future__ import annotations

import argparse
import keyword
from pathlib import Path

from rich.markup import escape
from rich.text import Text

from ..components.skills import SKILL_FILE_NAME, SKILLS_FOLDER, skill_name_problem
from ..importing.module_names import module_clash
from ..tools.metadata import is_valid_tool_name
from .common import UsageError, error_console, stdout_console
from .render import display_path, load_tools, module_clash_phrase, quiet_logs, tool_location

__all__ = ["HELP", "STYLES", "add_arguments", "render_template", "run"]

HELP = "write a commented starting file DIR/NAME.py for a new tool (function, class or module style)"

STYLES = ("function", "class", "module")

_FUNCTION = '''"""The {name} tool (created by `tool-loader new`): edit it and save; the loader reloads it."""

from __future__ import annotations

from loader import tool


# @tool turns the function into a tool. The model sees:
#   name         the function name ("{name}"), or @tool(name="...")
#   description  the docstring's summary and body (not the Args section)
#   input schema built from the type hints; each parameter's description comes
#                from its line under Args: (`tool-loader check` warns if one is missing)
# Whatever the function returns becomes the result: a str is text, a dict or a
# list is JSON. An exception becomes an error result the model can read.
@tool(category="general", tags=["example"])
def {name}(text: str, times: int = 1) -> str:
    """Repeat a text a number of times (say here what the tool does, for the model).

    Args:
        text: The text to repeat.
        times: How many times to repeat it (at least 1).
    """
    if times < 1:
        raise ValueError("times must be at least 1")
    return " ".join([text] * times)
'''

_CLASS = '''"""The {name} tool (created by `tool-loader new`): edit it and save; the loader reloads it."""

from __future__ import annotations

from typing import Any

from loader import tool


# @tool on a class declares the tool with metadata; the loader creates one
# instance (so __init__ can set up clients or caches) and calls execute(params)
# with input already checked against `parameters`.
@tool(
    name="{name}",
    version="0.1.0",
    category="general",
    tags=["example"],
    parameters={{
        "text": {{"type": "string", "description": "The text to repeat."}},
        "times": {{"type": "integer", "description": "How many times to repeat it.", "min": 1, "default": 1}},
    }},
    examples=[{{"description": "Repeat a word twice", "input": {{"text": "hello", "times": 2}}}}],
)
class {class_name}:
    """Repeat a text a number of times (say here what the tool does, for the model)."""

    def __init__(self) -> None:
        self.separator = " "

    def execute(self, params: dict[str, Any]) -> str:
        """Run the tool; the return value becomes the result (str → text, dict → JSON)."""
        return self.separator.join([params["text"]] * params["times"])
'''

_MODULE = '''"""The {name} tool (created by `tool-loader new`): edit it and save; the loader reloads it.

A Strands-style module tool: TOOL_SPEC describes the tool to the model and the
function named like this file runs it. Input is not validated for you here;
read it from tool_use["input"].
"""

from __future__ import annotations

from typing import Any

TOOL_SPEC = {{
    "name": "{name}",
    "description": "Repeat a text a number of times (say here what the tool does, for the model).",
    "inputSchema": {{
        "json": {{
            "type": "object",
            "properties": {{
                "text": {{"type": "string", "description": "The text to repeat."}},
                "times": {{"type": "integer", "description": "How many times to repeat it.", "minimum": 1}},
            }},
            "required": ["text"],
        }}
    }},
}}


def {name}(tool_use: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Run the tool: take the input from tool_use, return a ToolResult dict."""
    data = tool_use["input"]
    text = " ".join([data["text"]] * int(data.get("times", 1)))
    return {{"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{{"text": text}}]}}
'''

_TEMPLATES = {"function": _FUNCTION, "class": _CLASS, "module": _MODULE}

_SKILL = """---
name: {name}
description: What this skill does and when to use it. The model reads this to choose it.
---
# {name}

Instructions the agent follows once it loads this skill. Files beside this one
(references/, scripts/, assets/) are served with it; link them by relative path,
e.g. [the reference](references/REFERENCE.md). Saving any of them updates the
skill's manifest for connected clients.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``new NAME [--dir DIR] [--style function|class|module]``."""
    parser.add_argument(
        "name", metavar="NAME", help="the tool name (also the file name): a Python identifier"
    )
    parser.add_argument(
        "--dir",
        "-d",
        type=Path,
        default=Path("tools"),
        metavar="DIR",
        help="where to write it (default ./tools)",
    )
    parser.add_argument(
        "--style", choices=STYLES, default="function", help="how the tool is written (default function)"
    )
    parser.add_argument(
        "--skill",
        action="store_true",
        help=f"write DIR/{SKILLS_FOLDER}/NAME/{SKILL_FILE_NAME}, a new skill, instead of a tool",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write even if a tool of that name exists in DIR, or the file itself exists (overwriting it)",
    )


def _class_name(name: str) -> str:
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "New"
    return camel if camel.endswith("Tool") else camel + "Tool"


def _refuse_non_tool_file(name: str) -> None:
    """A name whose file would not be a tool file: ``__init__``, a private or a hidden name.

    Raises:
        UsageError: Naming why, and what to pick instead.
    """
    if name == "__init__":
        why = "__init__.py is a package's own file, which the loader never reads for tools"
    elif name.startswith("_"):
        why = "a name starting with '_' is for a private helper module (or one of Python's own), not a tool"
    elif name.startswith("."):
        why = "a file whose name starts with '.' is hidden, and the loader never reads it"
    else:
        return
    raise UsageError(escape(f"{name!r} cannot be a tool file: {why}; pick a name that starts with a letter"))


def render_template(name: str, style: str) -> str:
    """The source of a new tool file.

    Raises:
        UsageError: ``name`` cannot be a tool file, is not a valid tool name and Python identifier,
            or ``style`` is unknown.
    """
    _refuse_non_tool_file(name)
    if not is_valid_tool_name(name) or not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(
            escape(
                f"invalid tool name {name!r}: use a Python identifier of at most 64 characters "
                "(letters, digits and '_', not starting with a digit, not a keyword)"
            )
        )
    clash = module_clash(name)
    if clash is not None:
        raise UsageError(escape(f"{module_clash_phrase(clash)}; pick another name (e.g. {name}_tool)"))
    if style not in _TEMPLATES:
        raise UsageError(escape(f"unknown style {style!r}; use one of {', '.join(STYLES)}"))
    return _TEMPLATES[style].format(name=name, class_name=_class_name(name))


def run(args: argparse.Namespace) -> int:
    """Write the file; exit 2 for a bad name, 1 if the file already exists."""
    quiet_logs(args.verbose)
    if args.skill:
        return _new_skill(args.name, args.dir, force=args.force)
    source = render_template(args.name, args.style)
    directory: Path = args.dir
    if directory.exists() and not directory.is_dir():
        raise UsageError(escape(f"not a directory: {directory}"))
    target = directory / f"{args.name}.py"
    console = stdout_console()
    existing = None if args.force or not directory.is_dir() else _defined_at(directory, args.name)
    if existing is not None:
        return _refuse(f"a tool named {args.name!r} is already defined at {existing}")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("w" if args.force else "x", encoding="utf-8") as handle:
            handle.write(source)
    except FileExistsError:
        return _refuse(f"{display_path(target)} already exists; not overwriting it")
    shown = display_path(target)
    where = display_path(directory)
    console.print(
        Text.assemble(("created ", "green"), (shown, "bold"), f" ({args.style} tool {args.name!r})")
    )
    console.print(
        Text(
            f"next: edit it, then `tool-loader watch {where}` to see every save, "
            f"or `tool-loader call {args.name} text=hello --dir {where}`",
            style="dim",
        ),
        soft_wrap=True,
    )
    return 0


def _new_skill(name: str, directory: Path, *, force: bool) -> int:
    problem = skill_name_problem(name)
    if problem is not None:
        raise UsageError(escape(f"invalid skill {problem}"))
    if directory.exists() and not directory.is_dir():
        raise UsageError(escape(f"not a directory: {directory}"))
    target = directory / SKILLS_FOLDER / name / SKILL_FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("w" if force else "x", encoding="utf-8") as handle:
            handle.write(_SKILL.format(name=name))
    except FileExistsError:
        return _refuse(f"{display_path(target)} already exists; not overwriting it")
    console = stdout_console()
    console.print(Text.assemble(("created ", "green"), (display_path(target), "bold"), f" (skill {name!r})"))
    console.print(
        Text(f"next: edit it, then `tool-loader list {display_path(directory)}`", style="dim"), soft_wrap=True
    )
    return 0


def _defined_at(directory: Path, name: str) -> str | None:
    """``file:line`` of a tool called ``name`` (``-``/``_`` alike) that the folder already defines."""
    loader, _report = load_tools([directory])
    try:
        found = loader.registry.get(name)
        return None if found is None else tool_location(found, loader)
    finally:
        loader.close()


def _refuse(why: str) -> int:
    error_console().print(
        Text.assemble(("refused: ", "bold red"), why, " (--force writes it anyway)"), soft_wrap=True
    )
    return 1
