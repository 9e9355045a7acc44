"""Describing a tool: from a function, a class or a module to an ``AgentTool`` (internal)."""
