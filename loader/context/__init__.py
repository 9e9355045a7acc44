"""The tool context: what a running tool may ask of whoever called it, and who answers.

``ToolContext`` is the tool's side (progress, logs, questions to the user and
the model, the client's roots); ``ContextHandlers`` is the caller's side (the
MCP server, ``tool-loader call``, a Strands agent, or a Python caller).
"""
