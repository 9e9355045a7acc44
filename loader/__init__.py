"""Hot-reloading tool-directory loader for AI-agent tools.

Everything a user imports lives here; the submodules are the implementation.
"""

from pathlib import Path as _Path

from ._checkout import mount_checkout_plugins as _mount_checkout_plugins

_mount_checkout_plugins(_Path(__file__).resolve().parent)

from .errors import (
    DuplicateToolError,
    InputProblem,
    InvalidToolNameError,
    ToolDefinitionError,
    ToolLoaderError,
    ToolLoadError,
    ToolNotFoundError,
    ToolSignatureError,
    ToolValidationError,
)
from .hookspecs import hookimpl, hookspec
from .registry import ChangeKind, RegistryChange, RegistryChangeSet, RegistrySnapshot, ToolRegistry
from .reload.loader import LoaderConfig, ToolLoader
from .reload.watcher import WatchTimings
from .status import FileState, FileStatus, LoaderEvent, LoaderEventKind, LoadErrorInfo, ScanReport
from .tools.class_tool import ClassTool, create_tool, get_tool_metadata, is_tool
from .tools.decorator import tool
from .tools.function_tool import FunctionTool
from .tools.metadata import RateLimit, ToolMetadata, ToolParameter, ToolSchema
from .tools.module_tool import ModuleTool
from .tools.params import check_tool_params, validate_tool_params
from .types import (
    AgentTool,
    JSONSchema,
    Tool,
    ToolChoice,
    ToolConfig,
    ToolContext,
    ToolGenerator,
    ToolResult,
    ToolResultContent,
    ToolResultStatus,
    ToolSpec,
    ToolUse,
)

__version__ = "0.1.0"

__all__ = [
    "AgentTool",
    "ChangeKind",
    "ClassTool",
    "DuplicateToolError",
    "FileState",
    "FileStatus",
    "FunctionTool",
    "InputProblem",
    "InvalidToolNameError",
    "JSONSchema",
    "LoadErrorInfo",
    "LoaderConfig",
    "LoaderEvent",
    "LoaderEventKind",
    "ModuleTool",
    "RateLimit",
    "RegistryChange",
    "RegistryChangeSet",
    "RegistrySnapshot",
    "ScanReport",
    "Tool",
    "ToolChoice",
    "ToolConfig",
    "ToolContext",
    "ToolDefinitionError",
    "ToolGenerator",
    "ToolLoadError",
    "ToolLoader",
    "ToolLoaderError",
    "ToolMetadata",
    "ToolNotFoundError",
    "ToolParameter",
    "ToolRegistry",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSchema",
    "ToolSignatureError",
    "ToolSpec",
    "ToolUse",
    "ToolValidationError",
    "WatchTimings",
    "__version__",
    "check_tool_params",
    "create_tool",
    "get_tool_metadata",
    "hookimpl",
    "hookspec",
    "is_tool",
    "tool",
    "validate_tool_params",
]
