"""Bridges from the registry to agent frameworks: one submodule per framework, each an optional extra.

``strands`` (Strands Agents), ``langchain`` (LangChain v1 / LangGraph),
``openai_agents`` (OpenAI Agents SDK), ``pydantic_ai``, ``google_adk``,
``llama_index`` and ``smolagents``; ``live`` holds what the live adapters
share and imports no framework; ``offer`` picks what each step offers from
the adapters' ``discovery`` and ``skills`` options (``discovery``, ``skills``).
Each framework submodule imports its framework; this package itself imports
none, so ``import loader`` never needs one installed. The guide is
``docs/frameworks.md``.
"""
