"""Prompts, resources and resource templates: what an MCP server serves beside tools."""
