"""Hot-reloading tool-directory loader for AI-agent tools."""

from .decorator import tool
from .errors import (
    DuplicateToolError,
    InvalidToolNameError,
    ToolDefinitionError,
    ToolLoadError,
    ToolLoaderError,
    ToolNotFoundError,
    ToolSignatureError,
)
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

__all__ = [
    "AgentTool",
    "DuplicateToolError",
    "InvalidToolNameError",
    "JSONSchema",
    "Tool",
    "ToolChoice",
    "ToolConfig",
    "ToolContext",
    "ToolDefinitionError",
    "ToolGenerator",
    "ToolLoadError",
    "ToolLoaderError",
    "ToolNotFoundError",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSignatureError",
    "ToolSpec",
    "ToolUse",
    "tool",
]
