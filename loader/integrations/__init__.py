"""Bridges from the registry to agent frameworks: one submodule per framework, each an optional extra.

Each submodule imports its framework (``loader.integrations.strands``); this
package itself imports none, so ``import loader`` never needs one installed.
"""
