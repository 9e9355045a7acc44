"""Built-in discovery plugins, registered with every ``ToolLoader``.

This folder installs as ``loader.plugins``; each module is one pluggy plugin
for one tool style.
"""

BUILTIN_PLUGINS: tuple[str, ...] = (
    "loader.plugins.sources",
    "loader.plugins.function_tools",
    "loader.plugins.class_tools",
    "loader.plugins.module_tools",
    "loader.plugins.strands_tools",
    "loader.plugins.components",
)
"""Module names of the built-in plugins, in registration order."""
