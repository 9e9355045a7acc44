"""The rich console: one module per command, wired together by ``loader.console.cli``."""
