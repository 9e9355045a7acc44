"""The public names of ``loader``: for type checkers, and for ``lazy_loader``, which imports each on use."""

from .authoring.area import ProposalError, ProposalRecord, ProposalState
from .authoring.gate import GateOptions
from .authoring.quarantine import QuarantineFollower, read_quarantine, set_quarantined
from .authoring.workflow import (
    PromoteRefused,
    Promotion,
    list_proposals,
    promote,
    propose,
    propose_files,
    withdraw,
)
from .calls.runner import CallLimits
from .components.decorators import prompt, resource
from .components.prompts import Prompt, PromptArgument
from .components.resources import Resource, ResourceTemplate
from .components.skills import Skill, SkillEntry, SkillFile, skill_entries
from .context.handlers import CONTEXT_HANDLERS_KEY, ContextHandlers
from .context.messages import (
    Answer,
    AnswerAction,
    ContextCapability,
    LogEntry,
    LogLevel,
    ModelAnswer,
    ModelMessage,
    ModelQuestion,
    ProgressUpdate,
    Question,
    Root,
    RootsAnswer,
    RootsQuestion,
    UserAnswer,
    UserQuestion,
)
from .context.tool_context import ToolContext
from .errors import (
    ComponentArgumentError,
    ContextAnswerError,
    ContextUnavailableError,
    DuplicateToolError,
    InputProblem,
    InputRequired,
    InvalidToolNameError,
    OptionError,
    SymlinkRefusedError,
    ToolCallTimeout,
    ToolDefinitionError,
    ToolLoaderError,
    ToolLoadError,
    ToolNameMismatchError,
    ToolNotFoundError,
    ToolSignatureError,
    ToolValidationError,
)
from .fingerprint import spec_digest, tool_digest
from .history.recorder import HistoryRecorder
from .history.store import HistoryStore, ToolVersion
from .hookspecs import hookimpl, hookspec
from .registry.changes import ChangeKind, ComponentChange, RegistryChange, RegistryChangeSet
from .registry.snapshot import RegistrySnapshot, SearchHit
from .registry.tool_registry import ToolRegistry
from .reload.loader import LoaderConfig, ToolLoader
from .reload.watcher import WatchTimings
from .spec_diff.kinds import SpecChange, SpecChangeKind
from .spec_diff.specs import ToolSetChange, compare_specs, compare_tool_sets, describe_change
from .status import FileNote, FileState, FileStatus, LoaderEvent, LoaderEventKind, LoadErrorInfo, ScanReport
from .tools.class_tool import ClassTool, create_tool, get_tool_metadata, is_tool
from .tools.decorator import tool
from .tools.function_tool import FunctionTool
from .tools.metadata import RateLimit, ToolMetadata, ToolParameter, ToolSchema
from .tools.module_tool import ModuleTool
from .tools.params import check_tool_params, validate_tool_params
from .types import (
    AgentTool,
    Component,
    ComponentKind,
    JSONSchema,
    Tool,
    ToolChoice,
    ToolConfig,
    ToolExample,
    ToolGenerator,
    ToolResult,
    ToolResultContent,
    ToolResultStatus,
    ToolSpec,
    ToolUse,
)

__version__: str

__all__ = [
    "CONTEXT_HANDLERS_KEY",
    "AgentTool",
    "Answer",
    "AnswerAction",
    "CallLimits",
    "ChangeKind",
    "ClassTool",
    "Component",
    "ComponentArgumentError",
    "ComponentChange",
    "ComponentKind",
    "ContextAnswerError",
    "ContextCapability",
    "ContextHandlers",
    "ContextUnavailableError",
    "DuplicateToolError",
    "FileNote",
    "FileState",
    "FileStatus",
    "FunctionTool",
    "GateOptions",
    "HistoryRecorder",
    "HistoryStore",
    "InputProblem",
    "InputRequired",
    "InvalidToolNameError",
    "JSONSchema",
    "LoadErrorInfo",
    "LoaderConfig",
    "LoaderEvent",
    "LoaderEventKind",
    "LogEntry",
    "LogLevel",
    "ModelAnswer",
    "ModelMessage",
    "ModelQuestion",
    "ModuleTool",
    "OptionError",
    "ProgressUpdate",
    "PromoteRefused",
    "Promotion",
    "Prompt",
    "PromptArgument",
    "ProposalError",
    "ProposalRecord",
    "ProposalState",
    "QuarantineFollower",
    "Question",
    "RateLimit",
    "RegistryChange",
    "RegistryChangeSet",
    "RegistrySnapshot",
    "Resource",
    "ResourceTemplate",
    "Root",
    "RootsAnswer",
    "RootsQuestion",
    "ScanReport",
    "SearchHit",
    "Skill",
    "SkillEntry",
    "SkillFile",
    "SpecChange",
    "SpecChangeKind",
    "SymlinkRefusedError",
    "Tool",
    "ToolCallTimeout",
    "ToolChoice",
    "ToolConfig",
    "ToolContext",
    "ToolDefinitionError",
    "ToolExample",
    "ToolGenerator",
    "ToolLoadError",
    "ToolLoader",
    "ToolLoaderError",
    "ToolMetadata",
    "ToolNameMismatchError",
    "ToolNotFoundError",
    "ToolParameter",
    "ToolRegistry",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSchema",
    "ToolSetChange",
    "ToolSignatureError",
    "ToolSpec",
    "ToolUse",
    "ToolValidationError",
    "ToolVersion",
    "UserAnswer",
    "UserQuestion",
    "WatchTimings",
    "__version__",
    "check_tool_params",
    "compare_specs",
    "compare_tool_sets",
    "create_tool",
    "describe_change",
    "get_tool_metadata",
    "hookimpl",
    "hookspec",
    "is_tool",
    "list_proposals",
    "promote",
    "prompt",
    "propose",
    "propose_files",
    "read_quarantine",
    "resource",
    "set_quarantined",
    "skill_entries",
    "spec_digest",
    "tool",
    "tool_digest",
    "validate_tool_params",
    "withdraw",
]
